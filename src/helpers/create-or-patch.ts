import { isNotFound } from '../client/api-error.js';
import type { Creator, Getter, Patcher, StatusWriter } from '../client/contracts.js';
import { InvalidOptionError } from '../core/errors.js';
import { createMergePatch, isPlainObject } from './merge-patch.js';
import { nameOf, typeOf } from '../core/object-key.js';
import { cloneJson, type MetaObject } from './meta-object.js';

export type OperationResult = 'created' | 'updated' | 'unchanged';

export interface CreateOrPatchOptions {
  readonly signal?: AbortSignal;
  readonly fieldManager?: string;
}

export interface CreateOrPatchResult<T> {
  readonly operation: OperationResult;
  /** The object as the server returned it (or as read, when unchanged). */
  readonly object: T;
}

/**
 * controller-runtime's CreateOrPatch with an optimistic lock. Reads the object `key` names
 * (apiVersion, kind, name, namespace); if absent, runs `mutate` on a copy of `key` and creates
 * it; if present, runs `mutate` on a copy of what was read and sends a merge patch of the
 * difference — carrying the resourceVersion read, so a concurrent change yields 409 (wrap the
 * call in `retryOnConflict`), never a lost write. If `mutate` changed nothing, nothing is sent:
 * `'unchanged'` means zero writes. A changed `status` goes through `/status` in a second patch
 * (also right after a create, which drops status). If someone creates the object between our
 * read and our create, the create fails with AlreadyExists: retry with
 * `retryOnConflict(fn, { retryable: (e) => isConflict(e) || isAlreadyExists(e) })`.
 *
 * `mutate` should set the fields it manages one by one: replacing a whole structure drops the
 * server's defaults from it and makes every reconcile look like a change.
 */
export async function createOrPatch<T extends MetaObject>(
  client: Getter & Creator & Patcher & StatusWriter,
  key: T,
  mutate: (obj: T) => void | Promise<void>,
  options: CreateOrPatchOptions = {},
): Promise<CreateOrPatchResult<T>> {
  const type = typeOf(key);
  const name = nameOf(key);
  const namespace = key.metadata?.namespace;
  let current: T;
  try {
    current = await client.get<T>(type, name, { namespace, signal: options.signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    const fresh = cloneJson(key);
    await mutate(fresh);
    checkKeyKept(key, fresh);
    let created = await client.create<T>(fresh, {
      namespace,
      signal: options.signal,
      fieldManager: options.fieldManager,
    });
    // A create drops status (it has its own subresource); write what mutate set, right after.
    const wantStatus = (fresh as { status?: unknown }).status;
    const statusPatch =
      wantStatus === undefined
        ? undefined
        : createMergePatch((created as { status?: unknown }).status ?? {}, wantStatus);
    if (statusPatch !== undefined) {
      created = await client.patchStatus<T>(
        type,
        name,
        { metadata: { resourceVersion: created.metadata?.resourceVersion }, status: statusPatch },
        {
          type: 'merge',
          namespace,
          signal: options.signal,
          fieldManager: options.fieldManager,
        },
      );
    }
    return { operation: 'created', object: created };
  }
  const after = cloneJson(current);
  await mutate(after);
  checkKeyKept(key, after);
  const { status: statusBefore, ...restBefore } = current as T & { status?: unknown };
  const { status: statusAfter, ...restAfter } = after as T & { status?: unknown };
  const patch = createMergePatch(restBefore, restAfter);
  const statusPatch = createMergePatch(statusBefore ?? {}, statusAfter ?? {});
  if (patch === undefined && statusPatch === undefined) return { operation: 'unchanged', object: current };
  let object = current;
  const writeOpts = { type: 'merge' as const, namespace, signal: options.signal, fieldManager: options.fieldManager };
  if (patch !== undefined) {
    object = await client.patch<T>(type, name, withResourceVersion(patch, object), writeOpts);
  }
  if (statusPatch !== undefined) {
    object = await client.patchStatus<T>(
      type,
      name,
      { metadata: { resourceVersion: object.metadata?.resourceVersion }, status: statusPatch },
      writeOpts,
    );
  }
  return { operation: 'updated', object };
}

function withResourceVersion(patch: unknown, read: MetaObject): Record<string, unknown> {
  const p = isPlainObject(patch) ? patch : {};
  const meta = isPlainObject(p.metadata) ? p.metadata : {};
  return { ...p, metadata: { ...meta, resourceVersion: read.metadata?.resourceVersion } };
}

function checkKeyKept(key: MetaObject, obj: MetaObject): void {
  if (
    obj.apiVersion !== key.apiVersion ||
    obj.kind !== key.kind ||
    obj.metadata?.name !== key.metadata?.name ||
    (obj.metadata?.namespace || undefined) !== (key.metadata?.namespace || undefined)
  ) {
    throw new InvalidOptionError('mutate', 'must not change apiVersion, kind, name or namespace');
  }
}
