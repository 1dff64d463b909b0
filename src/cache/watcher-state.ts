/**
 * The watcher's state and its failure history: plain immutable values. The watcher's loop holds
 * the current ones; the steps (effects) and `afterFailure` (pure, watcher-step.ts) return the next.
 */
import type { WatcherRestartReason } from './cache-metrics.js';

/** What every state carries. */
interface Common {
  /**
   * A sync may be a watch-list: the option is on, the source can send one and the server has not
   * refused one. Once false, false for good (a server that refused it will not grow it).
   */
  readonly watchList: boolean;
}

/**
 * Where the list/watch loop stands, with what it needs to go on from there.
 *
 * A watch-list stream is `streaming` until its initial-events-end bookmark; from the bookmark on
 * it is `watching` (the same stream, now an ordinary watch), so "is the stream synced" is the phase.
 */
export type WatcherState =
  /** Nothing to resume from: the next step begins a full sync. `listOnce`: a watch-list just failed, list this once. */
  | (Common & { readonly phase: 'empty'; readonly quorum: boolean; readonly listOnce: boolean })
  /** A list under way; `continue` is the next page's token (undefined: the first page). */
  | (Common & { readonly phase: 'listing'; readonly quorum: boolean; readonly continue: string | undefined })
  /** A watch-list stream before its initial-events-end bookmark. */
  | (Common & { readonly phase: 'streaming'; readonly quorum: boolean })
  /** Synced: watching (or about to watch again) from `resourceVersion`, the newest seen. */
  | (Common & { readonly phase: 'watching'; readonly resourceVersion: string });

/** The state a watcher starts in: a first sync, served from the watch cache (not a quorum read). */
export function initialState(watchList: boolean): WatcherState {
  return { phase: 'empty', quorum: false, listOnce: false, watchList };
}

/** What the choice after a failure needs to remember between failures. */
export interface FailureHistory {
  /** Failures since the last progress (a page, an event or a bookmark). */
  readonly consecutiveFailures: number;
  /** Monotonic time since which every step has succeeded; undefined right after a failure. */
  readonly healthySinceMs: number | undefined;
  /** Why the last failure happened. */
  readonly lastReason: WatcherRestartReason | undefined;
  /** A watch event (bookmarks included) arrived since the last failure: proof a 410 or stall is not a loop. */
  readonly watchEventSinceFailure: boolean;
}

export const NO_FAILURES: FailureHistory = Object.freeze({
  consecutiveFailures: 0,
  healthySinceMs: undefined,
  lastReason: undefined,
  watchEventSinceFailure: false,
});

/** The history after progress at `nowMs`: the same object when nothing changes (the hot path). */
export function afterProgress(history: FailureHistory, nowMs: number, watchEvent: boolean): FailureHistory {
  const unchanged = history.consecutiveFailures === 0 && history.healthySinceMs !== undefined;
  if (unchanged && (!watchEvent || history.watchEventSinceFailure)) return history;
  return {
    consecutiveFailures: 0,
    healthySinceMs: history.healthySinceMs ?? nowMs,
    lastReason: history.lastReason,
    watchEventSinceFailure: history.watchEventSinceFailure || watchEvent,
  };
}
