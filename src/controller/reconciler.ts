import type { Logger } from '../core/logger.js';
import type { ObjectRef } from '../core/object-key.js';
import type { Result } from './result.js';

/** What to reconcile: only a key. The reconciler reads current state itself (level-triggered). */
export type ReconcileRequest = ObjectRef;

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
