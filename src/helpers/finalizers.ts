/**
 * Finalizers, one string at a time. Every write is a merge patch that carries the
 * resourceVersion it was computed from, so the API server answers 409 instead of letting two
 * controllers overwrite each other's list; on 409 the object is re-read and the edit re-applied.
 */
import { ApiError, isNotFound } from '../client/api-error.js';
import type { Getter, Patcher } from '../client/contracts.js';
import { InvalidFinalizerNameError } from './errors.js';
import { nameOf, typeOf } from '../core/object-key.js';
import type { MetaObject } from './meta-object.js';
import { retryOnConflict, type RetryOnConflictOptions } from './retry-on-conflict.js';

export interface FinalizerWriteOptions {
  readonly signal?: AbortSignal;
  readonly fieldManager?: string;
  /** Conflict retry; the object is re-read before each retry. @defaultValue DEFAULT_RETRY */
  readonly retry?: Omit<RetryOnConflictOptions, 'signal'>;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const QUALIFIED_NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * Throws `InvalidFinalizerNameError` unless `name` is `<dns-domain>/<name>` (`example.com/backup`):
 * the domain prefix is what keeps two controllers' finalizers apart. The API server accepts
 * unqualified names with only a warning; we refuse them.
 */
export function validateFinalizerName(name: string): void {
  const slash = name.indexOf('/');
  if (slash < 0) throw new InvalidFinalizerNameError(name, 'must be domain-qualified, e.g. example.com/cleanup');
  const prefix = name.slice(0, slash);
  const local = name.slice(slash + 1);
  if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) {
    throw new InvalidFinalizerNameError(
      name,
      'the prefix must be a DNS domain with at least one dot (lowercase letters, digits, "-" and ".")',
    );
  }
  if (local.length === 0 || local.length > 63 || !QUALIFIED_NAME_PART.test(local)) {
    throw new InvalidFinalizerNameError(
      name,
      'the part after "/" must be 1-63 characters of letters, digits, "-", "_" or ".", starting and ending alphanumeric',
    );
  }
}

export function hasFinalizer(obj: MetaObject, name: string): boolean {
  return obj.metadata?.finalizers?.includes(name) ?? false;
}

/**
 * Adds `name` to the object's finalizers, keeping every other entry. No write when it is already
 * there. `obj` is the object as read (its resourceVersion is the precondition of the first
 * attempt). Returns the object as the server now has it.
 */
export async function addFinalizer<T extends MetaObject>(
  client: Getter & Patcher,
  obj: T,
  name: string,
  options: FinalizerWriteOptions = {},
): Promise<T> {
  validateFinalizerName(name);
  const result = await editFinalizers(
    client,
    obj,
    (list) => (list.includes(name) ? undefined : [...list, name]),
    options,
    false,
  );
  return result!;
}

/**
 * Removes `name` (every occurrence) from the object's finalizers, keeping every other entry. No
 * write when it is not there. Returns the server's answer, or undefined when the object was
 * already gone (404). Removing the last finalizer of a deleting object answers with its final
 * state (deletionTimestamp set, no finalizers); the server deletes it right after.
 */
export async function removeFinalizer<T extends MetaObject>(
  client: Getter & Patcher,
  obj: T,
  name: string,
  options: FinalizerWriteOptions = {},
): Promise<T | undefined> {
  validateFinalizerName(name);
  return editFinalizers(
    client,
    obj,
    (list) => (list.includes(name) ? list.filter((f) => f !== name) : undefined),
    options,
    true,
  );
}

async function editFinalizers<T extends MetaObject>(
  client: Getter & Patcher,
  obj: T,
  edit: (list: readonly string[]) => string[] | undefined,
  options: FinalizerWriteOptions,
  goneIsFine: boolean,
): Promise<T | undefined> {
  const type = typeOf(obj);
  const name = nameOf(obj);
  const namespace = obj.metadata?.namespace;
  const uid = obj.metadata?.uid;
  let current: T | undefined = obj;
  return retryOnConflict(
    async (attempt) => {
      if (attempt > 1 || !current?.metadata?.resourceVersion) {
        try {
          current = await client.get<T>(type, name, { namespace, signal: options.signal });
        } catch (err) {
          if (goneIsFine && isNotFound(err)) return undefined;
          throw err;
        }
        // A namesake (deleted and created again under the same name) is another object: the one
        // asked about is gone. Editing the namesake's list would release what its own finalizer
        // still guards (the simulation found this: a stale restart's cleanup of the old object
        // removed the new one's finalizer on the conflict retry, leaking its external resource).
        if (uid !== undefined && current.metadata?.uid !== undefined && current.metadata.uid !== uid) {
          if (goneIsFine) return undefined;
          throw new ApiError({
            status: 404,
            reason: 'NotFound',
            message: `${type.kind} ${namespace ? `${namespace}/` : ''}${name} with uid ${uid} is gone (a namesake with uid ${current.metadata.uid} took its name)`,
          });
        }
      }
      const next = edit(current.metadata?.finalizers ?? []);
      if (!next) return current;
      const patch = {
        metadata: { resourceVersion: current.metadata?.resourceVersion, finalizers: next.length > 0 ? next : null },
      };
      try {
        return await client.patch<T>(type, name, patch, {
          type: 'merge',
          namespace,
          signal: options.signal,
          fieldManager: options.fieldManager,
        });
      } catch (err) {
        if (goneIsFine && isNotFound(err)) return undefined;
        throw err;
      }
    },
    { ...options.retry, signal: options.signal },
  );
}
