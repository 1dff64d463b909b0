/**
 * The faults a simulation injects, as data: a seeded schedule is a list of these, a shrunk one a
 * shorter list, and a finding names the ones it needed. Each fault fires at the operator's `at`-th
 * API call of the run (0-based, counted over every incarnation of the operator), so a schedule
 * replays exactly whatever the operator's timing; windows last `forMs` of fake time.
 *
 * The classes follow Sieve (OSDI '22): intermediate states (crash between two calls), stale states
 * (a cache or restart behind what was already seen), unobserved states (events coalesced, dropped,
 * expired); plus the server's own refusals and a leader change.
 */

/** The operator process dies before this call is made; it restarts after `restartAfterMs`. */
export interface CrashFault {
  readonly kind: 'crash';
  readonly at: number;
  readonly restartAfterMs: number;
}

/** As a crash, and the restarted operator's first lists are served `lagRevisions` writes behind (a lagging API server cache); its watches then catch up from there. */
export interface StaleRestartFault {
  readonly kind: 'stale-restart';
  readonly at: number;
  readonly restartAfterMs: number;
  readonly lagRevisions: number;
}

/** This call fails with the server's answer: 409 Conflict, 429 TooManyRequests, 500 InternalError. */
export interface ErrorFault {
  readonly kind: 'error';
  readonly at: number;
  readonly status: 409 | 429 | 500;
}

/** This call times out on the client; `committed`: the server applied the write anyway (the answer was lost). */
export interface TimeoutFault {
  readonly kind: 'timeout';
  readonly at: number;
  readonly committed: boolean;
}

/** For `forMs`, watch events reach the operator's informers that much late: its cache serves versions older than a direct read already returned. */
export interface StaleCacheFault {
  readonly kind: 'stale-cache';
  readonly at: number;
  readonly forMs: number;
}

/** For `forMs`, events of one object are held and only the last is delivered (intermediate states never observed). */
export interface CoalesceFault {
  readonly kind: 'coalesce';
  readonly at: number;
  readonly forMs: number;
}

/** For `forMs`, watch events are dropped; then every watch expires (410) and informers relist: an object created and deleted inside the window is never seen. */
export interface DropEventsFault {
  readonly kind: 'drop-events';
  readonly at: number;
  readonly forMs: number;
}

/** Every open watch of the operator fails with 410 Expired now; informers relist. */
export interface WatchExpiryFault {
  readonly kind: 'watch-expiry';
  readonly at: number;
}

/**
 * A new operator instance starts beside the running one, which keeps running for `overlapMs` with
 * every Lease write failing (it loses leadership the way a partitioned leader does), then dies.
 * Without leader election in the operator this is a crash with an immediate restart.
 */
export interface LeaderChangeFault {
  readonly kind: 'leader-change';
  readonly at: number;
  readonly overlapMs: number;
}

export type Fault =
  | CrashFault
  | StaleRestartFault
  | ErrorFault
  | TimeoutFault
  | StaleCacheFault
  | CoalesceFault
  | DropEventsFault
  | WatchExpiryFault
  | LeaderChangeFault;

export type SimulationFaultKind = Fault['kind'];

export const FAULT_KINDS: readonly SimulationFaultKind[] = [
  'crash',
  'stale-restart',
  'error',
  'timeout',
  'stale-cache',
  'coalesce',
  'drop-events',
  'watch-expiry',
  'leader-change',
];

/** One line naming a fault, as findings and traces print it: `crash@12 (restart after 500 ms)`. */
export function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case 'crash':
      return `crash@${fault.at} (restart after ${fault.restartAfterMs} ms)`;
    case 'stale-restart':
      return `stale-restart@${fault.at} (restart after ${fault.restartAfterMs} ms, lists ${fault.lagRevisions} revisions behind)`;
    case 'error':
      return `error@${fault.at} (${fault.status})`;
    case 'timeout':
      return `timeout@${fault.at} (${fault.committed ? 'after' : 'before'} the write took effect)`;
    case 'stale-cache':
      return `stale-cache@${fault.at} (events ${fault.forMs} ms late)`;
    case 'coalesce':
      return `coalesce@${fault.at} (${fault.forMs} ms)`;
    case 'drop-events':
      return `drop-events@${fault.at} (${fault.forMs} ms, then relist)`;
    case 'watch-expiry':
      return `watch-expiry@${fault.at}`;
    case 'leader-change':
      return `leader-change@${fault.at} (old leader runs on ${fault.overlapMs} ms)`;
  }
}
