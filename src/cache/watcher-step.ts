/**
 * The watcher's choice after a failed step, as a pure function: from the state the step failed in,
 * the failure (classified) and the failure history, the next state and how long to wait. The
 * watcher's loop does the effects (backoff delays, counters, metrics, logs); the table test in
 * watcher-step.test.ts holds every case.
 */
import { isGone } from '../client/api-error.js';
import type { WatcherRestartReason } from './cache-metrics.js';
import { WatchClosedEarlyError, WatchStalledError } from './errors.js';
import type { FailureHistory, WatcherState } from './watcher-state.js';

/** A failure, as far as the choice of the next state cares. */
export type FailureKind =
  /** 410 Gone/Expired, or a resourceVersion newer than the server has: only a fresh list helps. */
  | 'gone'
  /** 400/422: on a watch-list request, the server does not have watch-list. */
  | 'invalid-request'
  /** The client's maxResponseBytes was exceeded (a resourceVersion=0 list served whole). */
  | 'response-too-large'
  /** A watch that went silent past its deadline and was torn down. */
  | 'stalled'
  /** A watch the server closed at once, having sent nothing. */
  | 'closed-early'
  /**
   * The server did not take the request, and says or shows it will soon: a 429 (on Kubernetes
   * ≥ 1.31 also "storage is (re)initializing", while its watch cache fills after a start) or a
   * refused connection. client-go's `isWatchErrorRetriable`.
   */
  | 'not-yet'
  /** Anything else: other network errors, 5xx, 403, a list timeout, a watch-list protocol breach. */
  | 'error';

export function classifyFailure(err: unknown): FailureKind {
  if (isGone(err) || isResourceVersionTooLarge(err)) return 'gone';
  if (err instanceof WatchStalledError) return 'stalled';
  if (err instanceof WatchClosedEarlyError) return 'closed-early';
  const e = typeof err === 'object' && err !== null ? (err as { code?: unknown; status?: unknown }) : {};
  if (e.code === 'ERR_API' && (e.status === 400 || e.status === 422)) return 'invalid-request';
  if (e.code === 'ERR_RESPONSE_TOO_LARGE') return 'response-too-large';
  if ((e.code === 'ERR_API' && e.status === 429) || isConnectionRefused(err)) return 'not-yet';
  return 'error';
}

function isConnectionRefused(err: unknown): boolean {
  let e = err;
  for (let depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === 'ECONNREFUSED') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The API server's answer when a list asks for a resourceVersion newer than it has (after an etcd
 * restore, or a lagging apiserver): client-go relists from scratch, so do we.
 */
export function isResourceVersionTooLarge(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || (err as { code?: unknown }).code !== 'ERR_API') return false;
  const e = err as { details?: { causes?: { reason?: string }[] }; message?: string };
  const byCause = (e.details?.causes ?? []).some((c) => c.reason === 'ResourceVersionTooLarge');
  return byCause || /too large resource version/i.test(e.message ?? '');
}

export interface FailureInput {
  /** The state the step failed in, its data up to date (a watch's newest resourceVersion). */
  readonly state: WatcherState;
  readonly failure: FailureKind;
  readonly history: FailureHistory;
  /** Monotonic now. */
  readonly nowMs: number;
  /** Health needed before the backoff starts over. */
  readonly backoffResetMs: number;
}

export type FailureDecision =
  /** The server has no watch-list: a capability answer, not a failure. List+watch at once, for good. */
  | { readonly kind: 'watch-list-refused'; readonly next: WatcherState }
  | {
      readonly kind: 'retry';
      readonly next: WatcherState;
      /** The `cache_watch_restarts_total` reason; also what the history remembers. */
      readonly reason: WatcherRestartReason;
      /** `backoff`: wait the backoff's next delay first; `none`: go on at once. */
      readonly wait: 'none' | 'backoff';
      /** Healthy long enough: the backoff starts over (before its next delay, if one is taken). */
      readonly resetBackoff: boolean;
      readonly history: FailureHistory;
    };

export function afterFailure({ state, failure, history, nowMs, backoffResetMs }: FailureInput): FailureDecision {
  if (state.phase === 'streaming' && failure === 'invalid-request') {
    const next: WatcherState = { phase: 'empty', quorum: state.quorum, listOnce: false, watchList: false };
    return { kind: 'watch-list-refused', next };
  }
  const reason = restartReason(failure);
  // A 410 or a stall is routine (compaction, a dead connection): act at once, unless the same
  // thing just happened with no watch event in between (a relist succeeding does not count),
  // which would otherwise make a hot list/watch loop.
  const routine = reason === 'gone' || reason === 'stalled';
  const immediate = routine && (history.lastReason !== reason || history.watchEventSinceFailure);
  return {
    kind: 'retry',
    next: nextState(state, failure),
    reason,
    // A failed watch-list is followed by a list at once: making progress beats waiting.
    wait: immediate || (state.phase === 'streaming' && failure !== 'not-yet') ? 'none' : 'backoff',
    resetBackoff: history.healthySinceMs !== undefined && nowMs - history.healthySinceMs >= backoffResetMs,
    history: {
      consecutiveFailures: history.consecutiveFailures + 1,
      healthySinceMs: undefined,
      lastReason: reason,
      watchEventSinceFailure: false,
    },
  };
}

function nextState(state: WatcherState, failure: FailureKind): WatcherState {
  const { watchList } = state;
  // The server has not started on it: ask the same watch-list again after the backoff, as
  // client-go does. A list instead would go to etcd (the watch cache is not ready) just when the
  // API server is recovering, and leave this informer on list until its next relist.
  if (state.phase === 'streaming' && failure === 'not-yet') return state;
  if (state.phase === 'streaming') {
    // A watch-list that failed before its bookmark (as client-go): one list+watch sync, then watch-list again.
    return { phase: 'empty', quorum: state.quorum || failure === 'gone', listOnce: true, watchList };
  }
  // Our resourceVersion (or continue token) is compacted away: only a fresh quorum list helps.
  if (failure === 'gone') return { phase: 'empty', quorum: true, listOnce: false, watchList };
  if (failure === 'response-too-large' && state.phase === 'listing' && !state.quorum) {
    // The API server serves a resourceVersion=0 list whole from its watch cache (limit ignored);
    // past a lister-watcher's response limit only a paged quorum list can succeed. (KubeClient's lists
    // are bounded per item, not whole, since issue 41; another lister-watcher may still have one.)
    return { phase: 'empty', quorum: true, listOnce: false, watchList };
  }
  // The same step again: a watch resumes from its newest resourceVersion, a list page is asked
  // again with the same continue token.
  return state;
}

function restartReason(failure: FailureKind): WatcherRestartReason {
  switch (failure) {
    case 'gone':
      return 'gone';
    case 'stalled':
      return 'stalled';
    case 'closed-early':
      return 'closed_early';
    default:
      return 'error';
  }
}
