/** A fleet controller's options and their defaults (its target lives with the fleet, src/fleet/). */
import type { ControllerBuilderOptions } from './controller-description.js';

/**
 * Workers of a fleet controller: more than one, so that a per-cluster cap below it leaves workers
 * for the other members when one member's reconciles hang (a plain controller has 1).
 * @defaultValue 4
 */
export const DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES = 4;

/**
 * A fleet controller's reconcile timeout. A member that accepts a write and never answers would
 * otherwise hold a worker for as long as the client keeps trying; 60 s is the API server's own
 * limit for a non-long-running request, so a reconcile of a healthy member making a few calls ends
 * well inside it, and work that takes longer belongs in `requeueAfter`. @defaultValue 60,000 ms
 */
export const DEFAULT_FLEET_RECONCILE_TIMEOUT_MS = 60_000;

/**
 * The per-cluster cap when `maxConcurrentReconcilesPerCluster` is not set: half the workers,
 * rounded up — with the default 4 workers, 2, so one member whose reconciles all hang leaves the
 * other members half the workers (and a lone member still gets half). With 1 worker it is 1: there
 * is nothing to cap below, and only the reconcile timeout bounds a hanging member.
 * @defaultValue `Math.ceil(maxConcurrentReconciles / 2)`
 */
export function defaultMaxConcurrentReconcilesPerCluster(maxConcurrentReconciles: number): number {
  return Math.ceil(maxConcurrentReconciles / 2);
}

/** A fleet controller's options: a controller's, and the per-cluster cap. */
export interface FleetControllerOptions extends ControllerBuilderOptions {
  /** @defaultValue {@link DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES} */
  readonly maxConcurrentReconciles?: number;
  /** 0: no timeout. @defaultValue {@link DEFAULT_FLEET_RECONCILE_TIMEOUT_MS} */
  readonly reconcileTimeoutMs?: number;
  /**
   * At most this many reconciles of one member cluster at once: a member at its cap has its keys
   * passed over (they stay queued, in order and at their priorities) until one of its reconciles
   * ends, so one member whose reconciles hang can never occupy every worker. An integer from 1 to
   * `maxConcurrentReconciles` (equal to it: no cap).
   * @defaultValue {@link defaultMaxConcurrentReconcilesPerCluster} (2 with the default 4 workers)
   */
  readonly maxConcurrentReconcilesPerCluster?: number;
}
