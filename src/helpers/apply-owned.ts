import type { Applier } from '../client/contracts.js';
import { cloneJson, type MetaObject } from './meta-object.js';
import { specHashMatches, withSpecHash } from './spec-hash.js';

export interface ApplyOwnedOptions {
  /** Who owns the applied fields, e.g. `widget-controller`. */
  readonly fieldManager: string;
  /**
   * Take over fields another manager set. Controllers should: the object is theirs, and an
   * apply conflict would otherwise stop reconciliation until a human resolves it.
   * @defaultValue DEFAULT_APPLY_FORCE
   */
  readonly force?: boolean;
  /**
   * The object as currently read (usually from the cache). When it carries the spec hash of
   * `obj`, nothing is sent. Leave it out to always apply (which also undoes edits other clients
   * made to our fields, at the cost of one request per reconcile).
   */
  readonly current?: MetaObject;
  /** Store the spec hash annotation on the object. @defaultValue true */
  readonly specHash?: boolean;
  readonly signal?: AbortSignal;
}

/** @defaultValue true */
export const DEFAULT_APPLY_FORCE = true;

export interface ApplyOwnedResult<T> {
  readonly operation: 'applied' | 'unchanged';
  /** What the server returned, or `current` when nothing was sent. */
  readonly object: T;
}

/**
 * Server-side apply of an object we own: `obj` is the full desired state of the fields we
 * manage (fields we stop sending are removed, since we owned them). resourceVersion, uid,
 * managedFields and status are stripped: an apply states intent, not a read-modify-write, and
 * status goes through `/status`.
 */
export async function applyOwned<T extends MetaObject>(
  client: Applier,
  obj: T,
  options: ApplyOwnedOptions,
): Promise<ApplyOwnedResult<T>> {
  const useHash = options.specHash ?? true;
  if (useHash && options.current && specHashMatches(options.current, obj)) {
    return { operation: 'unchanged', object: options.current as T };
  }
  const body = useHash ? withSpecHash(obj) : cloneJson(obj);
  delete (body as { status?: unknown }).status;
  if (body.metadata) {
    delete body.metadata.resourceVersion;
    delete body.metadata.uid;
    delete (body.metadata as { managedFields?: unknown }).managedFields;
  }
  const object = await client.apply<T>(body, {
    fieldManager: options.fieldManager,
    force: options.force ?? DEFAULT_APPLY_FORCE,
    signal: options.signal,
  });
  return { operation: 'applied', object };
}
