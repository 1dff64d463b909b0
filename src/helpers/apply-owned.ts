import { appliedObject, type ApplyConfiguration } from '../client/apply-configuration.js';
import { isApplyConflict } from '../client/apply-conflict-error.js';
import type { Applier } from '../client/contracts.js';
import type { Kind } from '../client/kind.js';
import type { Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import { cloneJson, type MetaObject } from './meta-object.js';
import { specHashMatches, withSpecHash } from './spec-hash.js';

/** Where an apply conflict is recorded as an Event (the manager's `EventRecorder` has this shape). */
export interface ApplyConflictEvents {
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

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
  /** Where an apply conflict is logged (as a warning naming each field and owner), e.g. `ctx.log`. */
  readonly logger?: Logger;
  /**
   * Where an apply conflict is recorded as a Warning Event (reason `ApplyConflict`), e.g.
   * `manager.eventRecorder('widget-controller')`, so `kubectl describe` shows who owns what.
   */
  readonly events?: ApplyConflictEvents;
  /** The object that Event is about, e.g. the primary the applied object belongs to. @defaultValue the applied object */
  readonly eventObject?: KubeObject;
}

/** @defaultValue true */
export const DEFAULT_APPLY_FORCE = true;

/** The reason of the Warning Event `applyOwned` records for an apply conflict. */
export const APPLY_CONFLICT_EVENT_REASON = 'ApplyConflict';

export interface ApplyOwnedResult<T> {
  readonly operation: 'applied' | 'unchanged';
  /** What the server returned, or `current` when nothing was sent. */
  readonly object: T;
}

/**
 * Server-side apply of an object we own: `obj` is the full desired state of the fields we
 * manage (fields we stop sending are removed, since we owned them). resourceVersion, uid,
 * managedFields and status are stripped: an apply states intent, not a read-modify-write, and
 * status goes through `/status`. Typed from a kind, it takes an apply configuration:
 * `applyOwned(client, kinds.Service, { metadata: { name, namespace }, spec: { ports } }, options)`.
 * A conflict (with `force: false`) rejects with `ApplyConflictError`, logged to `logger` and recorded
 * on `events` first.
 */
export function applyOwned<T extends MetaObject>(
  client: Applier,
  obj: T,
  options: ApplyOwnedOptions,
): Promise<ApplyOwnedResult<T>>;
export function applyOwned<T>(
  client: Applier,
  type: Kind<T>,
  config: ApplyConfiguration<T>,
  options: ApplyOwnedOptions,
): Promise<ApplyOwnedResult<T>>;
export async function applyOwned<T>(
  client: Applier,
  first: object,
  second: object,
  third?: ApplyOwnedOptions,
): Promise<ApplyOwnedResult<T>> {
  const obj = (third === undefined ? first : appliedObject(first as Kind<unknown>, second)) as MetaObject;
  const options = (third ?? second) as ApplyOwnedOptions;
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
  try {
    const object = await client.apply(body, {
      fieldManager: options.fieldManager,
      force: options.force ?? DEFAULT_APPLY_FORCE,
      signal: options.signal,
    });
    return { operation: 'applied', object: object as T };
  } catch (err) {
    if (isApplyConflict(err)) reportConflict(err, body, options);
    throw err;
  }
}

function reportConflict(
  err: { readonly message: string; readonly conflicts: readonly { field: string; manager: string }[] },
  applied: MetaObject,
  options: ApplyOwnedOptions,
): void {
  options.logger?.warn(
    {
      fieldManager: options.fieldManager,
      conflicts: err.conflicts.map((c) => ({ field: c.field, manager: c.manager })),
    },
    err.message,
  );
  options.events?.event(
    options.eventObject ?? (applied as KubeObject),
    'Warning',
    APPLY_CONFLICT_EVENT_REASON,
    err.message,
  );
}
