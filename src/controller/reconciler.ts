import type { ReadFreshness } from '../client/client-options.js';
import type { ClusterView } from '../cluster/cluster-view.js';
import type { Logger } from '../core/logger.js';
import type { ObjectRef } from '../core/object-key.js';
import type { Result } from './result.js';

/**
 * What to reconcile: only a key. The reconciler reads current state itself (level-triggered).
 * A fleet controller's requests also name the member cluster (`FleetRequest`: `cluster` always set).
 */
export interface ReconcileRequest extends ObjectRef {
  /** The member cluster the object lives in; absent for the host cluster. */
  readonly cluster?: string;
}

export interface ReconcileContext {
  /**
   * Aborted when the reconcile times out (`reconcileTimeoutMs`), when leadership is lost, or when
   * a graceful shutdown runs out of time. Pass it to every call that takes one.
   */
  readonly signal: AbortSignal;
  /** Bound with `controller`, `namespace`, `name` and `reconcileID`. */
  readonly log: Logger;
  /** Unique per reconcile, also on every log line. */
  readonly reconcileID: string;
}

export interface Reconciler {
  reconcile(request: ReconcileRequest, context: ReconcileContext): Promise<Result | void>;
}

/** Lets a plain async function be a reconciler. */
export type ReconcileFunction = Reconciler['reconcile'];

/**
 * The context of a controller built with `.for(kind)`: besides the signal and log, typed access to
 * the primary object. The reconciler still receives only a key (controller-runtime's Request, not
 * kube-rs's object): events coalesce per key, so the object an event carried may already be stale
 * when a worker takes the key, and a key with no object (deleted, or a `reconcileOn` trigger) must
 * reconcile too. `get()` reads the state now, which keeps the reconcile level-triggered.
 */
export interface ObjectReconcileContext<T> extends ReconcileContext {
  /**
   * The cluster of the request: a member cluster for a fleet controller (`log` is then bound with
   * its name as `cluster`), the host cluster (name '') otherwise. One reconciler can serve both.
   */
  readonly cluster: ClusterView;
  /**
   * The primary object with the request's key, read from the controller's cache now (waiting for
   * its first sync if needed), or `undefined` when it does not exist (deleted). Typed from the kind
   * given to `.for()`. Every call reads again. Read-your-own-writes: after a write of this object
   * through the cluster's client (`ctx.cluster.client`, `manager.client`) has returned, `get()`
   * answers that write or something newer, waiting for the watch at most `ownWritesWaitMs`
   * (docs/read-your-own-writes.md); `{ freshness: 'cached' }` answers the cache at once.
   */
  get(options?: { readonly freshness?: ReadFreshness }): Promise<T | undefined>;
}

/**
 * A reconciler of a controller whose primary kind's objects are `T` (see {@link ObjectReconcileContext}).
 * `R` is its request: a fleet controller's names the cluster (`FleetRequest`); one written for
 * `ReconcileRequest` serves host and fleet controllers alike.
 */
export interface ObjectReconciler<T, R extends ReconcileRequest = ReconcileRequest> {
  reconcile(request: R, context: ObjectReconcileContext<T>): Promise<Result | void>;
}

/**
 * Lets a plain async function be an {@link ObjectReconciler}. A function type, not a method's, so
 * a reconciler written for another kind's objects is a type error (parameters checked strictly).
 */
export type ObjectReconcileFunction<T, R extends ReconcileRequest = ReconcileRequest> = (
  request: R,
  context: ObjectReconcileContext<T>,
) => Promise<Result | void>;
