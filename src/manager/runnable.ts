import type { PermissionRequirement } from '../rbac/permission.js';

/**
 * Anything the manager runs: `start(signal)` resolves once the signal aborted and the work has
 * stopped (rejecting means it failed, which stops the manager).
 */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
}

export interface RunnableOptions {
  /** Only the elected leader runs it (controllers do); others run on every replica. @defaultValue true */
  readonly needLeaderElection?: boolean;
  /** For logs. */
  readonly name?: string;
  /**
   * Runs on every replica, but only while it holds its ring membership Lease (a sharded controller);
   * needs the manager's `sharding` option. Overrides `needLeaderElection`. @defaultValue false
   */
  readonly sharded?: boolean;
}

/**
 * The seam to leader election (`LeaderElector` implements it): runs the election until `signal`
 * aborts. Calls `onStartedLeading` with a signal that aborts when leadership is lost, and waits
 * (bounded) for the promise it returns — the leader-only work stopping — before the Lease can pass
 * to anyone else. Rejects when leadership was lost, resolves after a clean release.
 */
export interface LeaderElection {
  run(signal: AbortSignal, onStartedLeading: (leaderSignal: AbortSignal) => void | Promise<void>): Promise<void>;
  isLeader(): boolean;
  /** What the election needs RBAC to allow (its Lease); the manager records it. @defaultValue nothing */
  requiredPermissions?(): readonly PermissionRequirement[];
}
