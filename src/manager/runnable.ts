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
}

/**
 * The seam to leader election: runs the election until `signal` aborts. Calls `onStartedLeading`
 * with a signal that aborts when leadership is lost. Rejects when leadership was lost (the manager
 * then stops with an error), resolves after a clean release.
 */
export interface LeaderElection {
  run(signal: AbortSignal, onStartedLeading: (leaderSignal: AbortSignal) => void): Promise<void>;
  isLeader(): boolean;
}
