/**
 * Which reconcile a write belongs to. The reconciler writes through a client it was built with
 * (the manager's), not through its context, so the reconcile in progress is found from the async
 * context: `run()` opens a scope around one reconcile (the console view's `around`), and the
 * manager's write-observing client calls `record()`, which lands in the scope of whatever reconcile
 * awaited its way to that write. Writes outside any reconcile (an Event recorder at start, a
 * detached promise that outlived its reconcile) are not recorded.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** At most this many writes are kept per reconcile; the rest are counted. @defaultValue 50 */
export const DEFAULT_MAX_WRITES_PER_RECONCILE = 50;

/** One write a reconcile made (or, in plan mode, would make), as the history and the plan show it. */
export interface ObjectWrite {
  readonly verb: 'create' | 'update' | 'patch' | 'apply' | 'delete';
  /** Set for a status write. */
  readonly subresource?: 'status';
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** Sent with `dryRun=All`: nothing was persisted (plan mode). */
  readonly dryRun: boolean;
  /**
   * The fields changed, as a JSON merge patch from the object before to the object after (for a
   * create: the whole object; for a delete: null). Server-kept metadata (resourceVersion,
   * managedFields, uid, timestamps) is left out; every value under a Secret's `data` and
   * `stringData` is `[Redacted]`.
   */
  readonly diff: unknown;
  /** The write failed (redacted message); `diff` is then what was asked. */
  readonly error?: string;
}

/** The reconcile a scope belongs to, and what it wrote so far. */
export interface ReconcileScope {
  readonly controller: string;
  readonly key: string;
  readonly reconcileID: string;
  readonly writes: ObjectWrite[];
  /** Writes past the per-reconcile cap, counted only. */
  omittedWrites: number;
}

export class ReconcileWrites {
  private readonly storage = new AsyncLocalStorage<ReconcileScope>();

  constructor(private readonly maxPerReconcile = DEFAULT_MAX_WRITES_PER_RECONCILE) {}

  /** Runs `fn` as the reconcile `scope` describes; writes recorded meanwhile land in `scope.writes`. */
  run<T>(scope: ReconcileScope, fn: () => T): T {
    return this.storage.run(scope, fn);
  }

  /** The reconcile in progress in this async context, if any. */
  current(): ReconcileScope | undefined {
    return this.storage.getStore();
  }

  /** Records `write` in the current reconcile's scope; returns the scope (undefined outside one). */
  record(write: ObjectWrite): ReconcileScope | undefined {
    const scope = this.storage.getStore();
    if (!scope) return undefined;
    if (scope.writes.length < this.maxPerReconcile) scope.writes.push(write);
    else scope.omittedWrites++;
    return scope;
  }
}
