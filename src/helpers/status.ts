/**
 * Status writes: through the `/status` subresource only (it never bumps
 * metadata.generation, and a spec write can never clobber status), with
 * `status.observedGeneration` set to the generation the reconcile acted on, and no request at all
 * when the status is already what we want — a no-op reconcile must cost zero writes.
 */
import type { StatusWriter } from '../client/contracts.js';
import { IncompleteObjectError } from '../core/errors.js';
import { jsonEqual } from './canonical-json.js';
import { createMergePatch } from './merge-patch.js';
import { nameOf, typeOf } from '../core/object-key.js';
import { cloneJson, type MetaObject } from './meta-object.js';

/** An object with a status. */
export interface StatusObject extends MetaObject {
  status?: unknown;
}

export interface StatusWriteOptions {
  readonly signal?: AbortSignal;
  readonly fieldManager?: string;
  /**
   * The generation the reconcile acted on, written to `status.observedGeneration`. Pass the
   * generation of the object the reconcile read at its start if `current` was re-read since.
   * @defaultValue current.metadata.generation
   */
  readonly observedGeneration?: number;
  /** Set `status.observedGeneration` at all (off for kinds whose status schema lacks it). @defaultValue true */
  readonly setObservedGeneration?: boolean;
}

export interface StatusWriteResult<T> {
  /** False when the status already matched and nothing was sent. */
  readonly changed: boolean;
  /** The object as the server returned it, or `current` when nothing was sent. */
  readonly object: T;
}

/** The status that would be written: `status` plus observedGeneration. */
export function desiredStatus<S>(current: StatusObject, status: S, options: StatusWriteOptions = {}): S {
  if (options.setObservedGeneration === false) return status;
  const generation = options.observedGeneration ?? current.metadata?.generation;
  if (generation === undefined) return status;
  return { ...status, observedGeneration: generation };
}

/**
 * Merge-patches `/status` so that it equals `status` (members of the old status that `status`
 * lacks are removed). The patch carries `current`'s resourceVersion: if anyone wrote in between
 * the server answers 409, and the caller re-reads (`retryOnConflict`) instead of overwriting a
 * condition another writer just set. Sends nothing when the status is unchanged.
 */
export async function patchStatus<T extends StatusObject>(
  client: StatusWriter,
  current: T,
  status: NonNullable<T['status']>,
  options: StatusWriteOptions = {},
): Promise<StatusWriteResult<T>> {
  const want = desiredStatus(current, status, options);
  const diff = createMergePatch(current.status ?? {}, want);
  if (diff === undefined) return { changed: false, object: current };
  const patch = { metadata: { resourceVersion: requireResourceVersion(current) }, status: diff };
  const object = await client.patchStatus<T>(typeOf(current), nameOf(current), patch, {
    type: 'merge',
    namespace: current.metadata?.namespace,
    signal: options.signal,
    fieldManager: options.fieldManager,
  });
  return { changed: true, object };
}

/**
 * PUTs `/status` with `status` and `current`'s resourceVersion (409 if the object changed since it
 * was read). Sends nothing when the status is unchanged.
 */
export async function updateStatus<T extends StatusObject>(
  client: StatusWriter,
  current: T,
  status: NonNullable<T['status']>,
  options: StatusWriteOptions = {},
): Promise<StatusWriteResult<T>> {
  const want = desiredStatus(current, status, options);
  if (jsonEqual(current.status ?? {}, want)) return { changed: false, object: current };
  requireResourceVersion(current);
  const body = { ...cloneJson(current), status: want };
  const object = await client.updateStatus<T>(body, {
    namespace: current.metadata?.namespace,
    signal: options.signal,
    fieldManager: options.fieldManager,
  });
  return { changed: true, object };
}

function requireResourceVersion(obj: MetaObject): string {
  const rv = obj.metadata?.resourceVersion;
  if (!rv)
    throw new IncompleteObjectError(
      'status writes need the object as read from the API (metadata.resourceVersion is missing)',
    );
  return rv;
}
