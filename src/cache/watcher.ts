/**
 * The watcher: keeps one list+watch alive forever and turns it into a stream of events for a store.
 *
 * An explicit state machine (as kube-rs's `watcher`):
 *
 *   empty ──▶ listing (page by page) ──▶ watching ──clean close──▶ watching (from last RV)
 *     │ ▲                                   ▲ │
 *     │ └──────── 410 Gone / RV too large ──┼─┘
 *     └──▶ streaming (watch-list) ──────────┘ at the initial-events-end bookmark, same stream
 *
 * - Where the lister-watcher can send one and the server has not refused it, a sync is a
 *   watch-list: the state streams in as ADDED events (batched into list pages for the store) and
 *   the initial-events-end bookmark completes it. A 400/422 answer means the server predates it:
 *   list+watch from then on. A 429 (storage still initializing) or a refused connection: the same
 *   watch-list after the backoff, as client-go. Any other failure before the bookmark: one
 *   list+watch sync.
 * - The first list asks for `resourceVersion=0` with a page `limit` (servable from the API server's
 *   watch cache, as client-go's reflector does); any later list (after 410) is a quorum, paged read.
 * - Watches ask for bookmarks and a randomized server timeout in [min, 2·min), so a fleet of
 *   informers does not reconnect in lockstep.
 * - Any other failure backs off (800 ms → 30 s, jitter; reset after 2 min of health) and retries the
 *   same step forever: a failed page is re-asked with the same continue token, a failed watch
 *   resumes from the last resourceVersion seen (bookmarks keep it fresh).
 * - A watch receiving nothing, not even a bookmark, for its timeout plus a margin is torn down.
 * - resourceVersion is opaque: stored and sent back, compared for equality only.
 * - `start(signal)` never rejects on API errors; it resolves once `signal` aborts.
 *
 * The states and their data are in watcher-state.ts; what follows a failure is chosen by a pure
 * function (`afterFailure`, watcher-step.ts). This file does the effects: requests, timers, the
 * sink, counters, metrics and logs.
 */
import { linkedAbortController, sleep } from '../core/abort.js';
import { ExponentialBackoff } from '../core/backoff.js';
import { resolveBackoff, type BackoffOptions, type ResolvedBackoff } from '../core/backoff-options.js';
import { realClock, type Clock } from '../core/clock.js';
import { AbortedError, AlreadyStartedError, InvalidOptionError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import type { Registry } from 'prom-client';
import { AbortRace } from './abort-race.js';
import { informerMetrics, type InformerMetrics } from './cache-metrics.js';
import { IdleWatchdog } from './idle-watchdog.js';
import { ListTimeoutError, WatchClosedEarlyError, WatchListProtocolError, WatchStalledError } from './errors.js';
import {
  INITIAL_EVENTS_END_ANNOTATION,
  type ListerListOptions,
  type ListerListPage,
  type ListerWatcher,
  type ListerWatchEvent,
} from './lister-watcher.js';
import { afterProgress, initialState, NO_FAILURES, type FailureHistory, type WatcherState } from './watcher-state.js';
import { afterFailure, classifyFailure, type FailureDecision } from './watcher-step.js';

export { isResourceVersionTooLarge } from './watcher-step.js';

/** Objects per list page. @defaultValue 500 (client-go's reflector) */
export const DEFAULT_PAGE_SIZE = 500;
/** Lower bound of the randomized watch timeout; the upper bound is twice it. @defaultValue 300_000 (5 min) */
export const DEFAULT_MIN_WATCH_TIMEOUT_MS = 300_000;
/** Grace past the watch timeout before a silent watch counts as stalled. @defaultValue 30_000 */
export const DEFAULT_STALL_MARGIN_MS = 30_000;
/**
 * After any failure: 800 ms doubling to 30 s, ±20% jitter, and no last attempt (a watcher never
 * gives up; `backoff.maxAttempts` other than Infinity is refused).
 */
export const DEFAULT_WATCH_BACKOFF: ResolvedBackoff = Object.freeze({
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  jitter: 0.2,
  maxAttempts: Infinity,
});
/** Health needed before the backoff starts over from its initial delay. @defaultValue 120_000 */
export const DEFAULT_BACKOFF_RESET_MS = 120_000;
/**
 * A list page that has not answered after this long is abandoned and retried (with backoff), so a
 * server that accepts the request and never answers cannot hold the watcher. Generous because a
 * `resourceVersion=0` list may be served whole, ignoring the page limit. @defaultValue 120_000
 */
export const DEFAULT_LIST_TIMEOUT_MS = 120_000;
/**
 * A watch the server closes sooner than this without sending anything counts as a failure (backs
 * off) instead of a clean close, so a server that hangs up at once is not hammered. @defaultValue 1_000
 */
export const DEFAULT_MIN_WATCH_DURATION_MS = 1_000;
/**
 * Sync by watch-list where the server has it: the initial state streams in as events, so no list
 * response has to be held whole (the relist-memory peak of a plain list). @defaultValue true
 */
export const DEFAULT_WATCH_LIST = true;

export interface WatcherOptions {
  /** Used in logs and as the `informer` metric label. @defaultValue 'watcher' */
  readonly name?: string;
  /** @defaultValue {@link DEFAULT_PAGE_SIZE} */
  readonly pageSize?: number;
  /** @defaultValue {@link DEFAULT_MIN_WATCH_TIMEOUT_MS} */
  readonly minWatchTimeoutMs?: number;
  /** @defaultValue {@link DEFAULT_STALL_MARGIN_MS} */
  readonly stallMarginMs?: number;
  /** Delays between failed lists/watches; a number `jitter` is ± that fraction. @defaultValue {@link DEFAULT_WATCH_BACKOFF} */
  readonly backoff?: BackoffOptions;
  /** @defaultValue {@link DEFAULT_BACKOFF_RESET_MS} */
  readonly backoffResetMs?: number;
  /** @defaultValue {@link DEFAULT_MIN_WATCH_DURATION_MS} */
  readonly minWatchDurationMs?: number;
  /** @defaultValue {@link DEFAULT_LIST_TIMEOUT_MS} */
  readonly listTimeoutMs?: number;
  /**
   * Passed to each list as `transformItem`: applied to every item as it is decoded, so a list served
   * whole is held in its transformed form. The informer passes its store's transform when that is
   * the default one (idempotent: the store applying it again is a no-op). @defaultValue none
   */
  readonly listItemTransform?: (item: KubeObject) => KubeObject;
  /**
   * Sync with a watch-list (`sendInitialEvents=true`, done at the `k8s.io/initial-events-end`
   * bookmark) when the lister-watcher can send one; a server that rejects it (Kubernetes before
   * 1.27, or with the feature off) gets list+watch from then on; a 429 or a refused connection is
   * asked again after the backoff; any other failure before the bookmark falls back to one
   * list+watch sync. @defaultValue {@link DEFAULT_WATCH_LIST}
   */
  readonly watchList?: boolean;
  /** @defaultValue realClock */
  readonly clock?: Clock;
  /** @defaultValue silentLogger */
  readonly logger?: Logger;
  /** Random source in [0, 1) for timeouts and jitter. @defaultValue Math.random */
  readonly random?: () => number;
  /** Where to export metrics; none when absent. */
  readonly registry?: Registry;
  /** @internal Shared with the informer that owns this watcher. */
  readonly metrics?: InformerMetrics;
}

/**
 * What the watcher tells its consumer. A list arrives as LIST_BEGIN, LIST_PAGE…, LIST_DONE; a new
 * LIST_BEGIN abandons an unfinished list. Watch events follow LIST_DONE. Bookmarks are consumed.
 */
export type WatcherEvent<T> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | { readonly type: 'LIST_BEGIN'; readonly quorum: boolean }
  | { readonly type: 'LIST_PAGE'; readonly items: readonly T[] }
  | { readonly type: 'LIST_DONE'; readonly resourceVersion: string };

export type WatcherStateName = 'idle' | 'empty' | 'listing' | 'watching' | 'backoff' | 'stopped';

/** A failure as reported by `health()`: enough for a probe or a log line, no request details. */
export interface ErrorSummary {
  readonly message: string;
  readonly code: string | undefined;
  readonly status: number | undefined;
  /** `clock.now()` when it happened. */
  readonly atMs: number;
}

export interface WatcherHealth {
  readonly state: WatcherStateName;
  /** True once the first list has been delivered in full (stays true through relists). */
  readonly synced: boolean;
  readonly resourceVersion: string | undefined;
  readonly lastError: ErrorSummary | undefined;
  /** `clock.now()` of the last thing received (page, event or bookmark). */
  readonly lastEventAtMs: number | undefined;
  readonly lastSyncAtMs: number | undefined;
  /** Failures recovered from (list or watch), all reasons. */
  readonly restarts: number;
  /** Of those, watches torn down for going silent past their deadline. */
  readonly stalls: number;
  /** Full lists started, the first one included. */
  readonly lists: number;
  readonly consecutiveFailures: number;
  /** Watch events received (bookmarks excluded). */
  readonly events: number;
  /** How the last full sync was (or is being) made; undefined before the first. */
  readonly listMode: 'watch-list' | 'list' | undefined;
}

/** What `health()` reports beyond the state and the failure history: observations only, no decisions. */
interface Observations {
  synced: boolean;
  resourceVersion: string | undefined;
  lastError: ErrorSummary | undefined;
  lastEventAtMs: number | undefined;
  lastSyncAtMs: number | undefined;
  restarts: number;
  stalls: number;
  lists: number;
  events: number;
  listMode: 'watch-list' | 'list' | undefined;
}

/** A step either moves on to its next state or fails in a state (its data up to date) with an error. */
type StepResult = { readonly next: WatcherState } | { readonly failedAt: WatcherState; readonly error: unknown };

export class Watcher<T extends KubeObject> {
  private readonly clock: Clock;
  private readonly logger: Logger;
  /** The logger given in the options: the watch-list fallback is logged once per such logger. */
  private readonly rootLogger: Logger;
  private readonly random: () => number;
  private readonly backoff: ExponentialBackoff;
  private readonly metrics: InformerMetrics;
  private readonly pageSize: number;
  private readonly listItemOptions: Pick<ListerListOptions, 'transformItem'>;
  private readonly minWatchTimeoutMs: number;
  private readonly stallMarginMs: number;
  private readonly backoffResetMs: number;
  private readonly minWatchDurationMs: number;
  private readonly listTimeoutMs: number;
  private readonly watchListEnabled: boolean;

  private started = false;
  /** The phase shown by `health()` and the state metric (also `backoff`, `idle`, `stopped`). */
  private stateName: WatcherStateName = 'idle';
  private history: FailureHistory = NO_FAILURES;
  private readonly seen: Observations = {
    synced: false,
    resourceVersion: undefined,
    lastError: undefined,
    lastEventAtMs: undefined,
    lastSyncAtMs: undefined,
    restarts: 0,
    stalls: 0,
    lists: 0,
    events: 0,
    listMode: undefined,
  };

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly sink: (event: WatcherEvent<T>) => void,
    options: WatcherOptions = {},
  ) {
    this.clock = options.clock ?? realClock;
    const name = options.name ?? 'watcher';
    this.rootLogger = options.logger ?? silentLogger;
    this.logger = this.rootLogger.child({ informer: name });
    this.random = options.random ?? Math.random;
    this.metrics = options.metrics ?? informerMetrics(options.registry, name);
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.listItemOptions = options.listItemTransform ? { transformItem: options.listItemTransform } : {};
    this.minWatchTimeoutMs = options.minWatchTimeoutMs ?? DEFAULT_MIN_WATCH_TIMEOUT_MS;
    this.stallMarginMs = options.stallMarginMs ?? DEFAULT_STALL_MARGIN_MS;
    this.backoffResetMs = options.backoffResetMs ?? DEFAULT_BACKOFF_RESET_MS;
    this.minWatchDurationMs = options.minWatchDurationMs ?? DEFAULT_MIN_WATCH_DURATION_MS;
    this.listTimeoutMs = options.listTimeoutMs ?? DEFAULT_LIST_TIMEOUT_MS;
    this.watchListEnabled = options.watchList ?? DEFAULT_WATCH_LIST;
    if (!(Number.isInteger(this.pageSize) && this.pageSize >= 0))
      throw new InvalidOptionError('pageSize', 'must be an integer >= 0 (0: no limit)');
    // Below 1 s the server would get timeoutSeconds=0, which means its own (long) default.
    if (!(this.minWatchTimeoutMs >= 1000)) throw new InvalidOptionError('minWatchTimeoutMs', 'must be >= 1000');
    if (!(this.stallMarginMs >= 0)) throw new InvalidOptionError('stallMarginMs', 'must be >= 0');
    if (!(this.listTimeoutMs > 0)) throw new InvalidOptionError('listTimeoutMs', 'must be > 0');
    const backoff = resolveBackoff(DEFAULT_WATCH_BACKOFF, options.backoff);
    if (backoff.maxAttempts !== Infinity)
      throw new InvalidOptionError('backoff.maxAttempts', 'a watcher never gives up: leave it unset');
    this.backoff = new ExponentialBackoff({ ...backoff, random: this.random });
  }

  health(): WatcherHealth {
    const s = this.seen;
    return {
      state: this.stateName,
      synced: s.synced,
      resourceVersion: s.resourceVersion,
      lastError: s.lastError,
      lastEventAtMs: s.lastEventAtMs,
      lastSyncAtMs: s.lastSyncAtMs,
      restarts: s.restarts,
      stalls: s.stalls,
      lists: s.lists,
      consecutiveFailures: this.history.consecutiveFailures,
      events: s.events,
      listMode: s.listMode,
    };
  }

  /** Runs until `signal` aborts, then resolves. Never rejects because of the API server. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new AlreadyStartedError('a watcher can be started once');
    this.started = true;
    let state = initialState(this.watchListEnabled && this.lw.watchList === true);
    while (!signal.aborted) {
      this.setState(state.phase === 'streaming' ? 'listing' : state.phase);
      const failedIn = state;
      const stepped = this.step(state, signal);
      const result = await stepped.catch((error: unknown): StepResult => ({ failedAt: failedIn, error }));
      if ('next' in result) {
        state = result.next;
        continue;
      }
      if (signal.aborted) break;
      const decision = afterFailure({
        state: result.failedAt,
        failure: classifyFailure(result.error),
        history: this.history,
        nowMs: this.clock.monotonicNow(),
        backoffResetMs: this.backoffResetMs,
      });
      state = decision.next;
      const delayMs = this.applyFailure(result.failedAt, result.error, decision);
      if (delayMs > 0) {
        this.setState('backoff');
        try {
          await sleep(this.clock, delayMs, signal);
        } catch {
          break; // aborted while backing off
        }
      }
    }
    this.setState('stopped');
  }

  /** The effects of a failure decision: counters, metrics, logs and the backoff's delay (returned). */
  private applyFailure(failedAt: WatcherState, err: unknown, decision: FailureDecision): number {
    if (decision.kind === 'watch-list-refused') {
      // Said once per logger (a manager's informers share one), at debug and in words: an
      // expected capability answer on older servers, whose 422 text tripped greps for errors.
      if (!watchListFallbackLogged.has(this.rootLogger)) {
        watchListFallbackLogged.add(this.rootLogger);
        this.logger.debug({}, 'the API server does not support watch-list; using list+watch');
      }
      return 0;
    }
    const { reason } = decision;
    this.history = decision.history;
    this.seen.restarts++;
    this.seen.lastError = summarize(err, this.clock.now());
    this.metrics.restart(reason);
    if (reason === 'stalled') this.seen.stalls++;
    if (decision.resetBackoff) this.backoff.reset();
    const delayMs = decision.wait === 'backoff' ? this.backoff.next() : 0;
    const routine = reason === 'gone' || reason === 'stalled';
    const log = routine ? this.logger.info.bind(this.logger) : this.logger.warn.bind(this.logger);
    const { consecutiveFailures } = this.history;
    const fields = { err: this.seen.lastError, reason, phase: failedAt.phase, delayMs, consecutiveFailures };
    log(fields, 'watcher step failed; retrying');
    return delayMs;
  }

  private async step(state: WatcherState, signal: AbortSignal): Promise<StepResult> {
    switch (state.phase) {
      case 'empty':
        if (state.watchList && !state.listOnce) {
          return { next: { phase: 'streaming', quorum: state.quorum, watchList: state.watchList } };
        }
        this.beginList(state.quorum, 'list');
        return { next: { phase: 'listing', quorum: state.quorum, continue: undefined, watchList: state.watchList } };
      case 'listing':
        return this.listPage(state, signal);
      case 'streaming':
        return this.watchOnce(state, signal, { quorum: state.quorum, begun: false, ended: false, page: [] });
      case 'watching':
        return this.watchOnce(state, signal);
    }
  }

  private async listPage(state: Extract<WatcherState, { phase: 'listing' }>, signal: AbortSignal): Promise<StepResult> {
    const { controller, dispose } = linkedAbortController(signal);
    let timedOut = false;
    const timer = this.clock.setTimer(this.listTimeoutMs, () => {
      timedOut = true;
      controller.abort();
    });
    let page: ListerListPage<T>;
    try {
      // The API server refuses a continue token together with a resourceVersion: the token carries it.
      page = await raceAbort(
        this.lw.list(
          state.continue !== undefined
            ? { limit: this.pageSize, continue: state.continue, signal: controller.signal, ...this.listItemOptions }
            : {
                limit: this.pageSize,
                resourceVersion: state.quorum ? undefined : '0',
                signal: controller.signal,
                ...this.listItemOptions,
              },
        ),
        controller.signal,
      );
    } catch (err) {
      return { failedAt: state, error: timedOut && !signal.aborted ? new ListTimeoutError(this.listTimeoutMs) : err };
    } finally {
      timer.cancel();
      dispose();
    }
    this.progress(false);
    this.emit({ type: 'LIST_PAGE', items: page.items });
    if (page.continue) return { next: { ...state, continue: page.continue } };
    this.listDone(page.resourceVersion);
    return { next: { phase: 'watching', resourceVersion: page.resourceVersion, watchList: state.watchList } };
  }

  private beginList(quorum: boolean, mode: 'watch-list' | 'list'): void {
    this.seen.lists++;
    this.seen.listMode = mode;
    this.metrics.list();
    this.emit({ type: 'LIST_BEGIN', quorum });
  }

  private listDone(resourceVersion: string): void {
    this.seen.resourceVersion = resourceVersion;
    // Before LIST_DONE, so whoever wakes up on sync already sees the watcher in its watch phase.
    this.setState('watching');
    this.emit({ type: 'LIST_DONE', resourceVersion });
    this.seen.synced = true;
    this.seen.lastSyncAtMs = this.clock.now();
    this.metrics.setSynced(true);
    this.logger.debug({ resourceVersion, lists: this.seen.lists, mode: this.seen.listMode }, 'list done');
  }

  /**
   * One event of a watch-list's initial phase: ADDED objects fill list pages (MODIFIED too: a later
   * version of the same key wins in the replacement), the initial-events-end bookmark completes
   * the sync. The list begins with the first event, so a rejected request has emitted nothing.
   */
  private initialEvent(initial: InitialSync<T>, ev: ListerWatchEvent<T>): void {
    if (!initial.begun) {
      initial.begun = true;
      this.beginList(initial.quorum, 'watch-list');
    }
    if (ev.type === 'BOOKMARK') {
      if (ev.object.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION] !== 'true') return;
      this.flushInitialPage(initial);
      initial.ended = true;
      this.listDone(ev.object.metadata.resourceVersion);
      return;
    }
    if (ev.type === 'DELETED')
      throw new WatchListProtocolError('a DELETED event before the initial-events-end bookmark');
    initial.page.push(ev.object);
    if (initial.page.length >= (this.pageSize || DEFAULT_PAGE_SIZE)) this.flushInitialPage(initial);
  }

  private flushInitialPage(initial: InitialSync<T>): void {
    if (initial.page.length === 0) return;
    const items = initial.page;
    initial.page = [];
    this.emit({ type: 'LIST_PAGE', items });
  }

  /**
   * A watch from a `watching` state's resourceVersion; with `initial`, a `streaming` state's
   * watch-list, which syncs before it watches. Past the initial-events-end bookmark the stream is
   * an ordinary watch: a failure from then on is one of `watching`, from the newest resourceVersion.
   */
  private async watchOnce(state: WatcherState, signal: AbortSignal, initial?: InitialSync<T>): Promise<StepResult> {
    const { watchList } = state;
    let resourceVersion = state.phase === 'watching' ? state.resourceVersion : undefined;
    const here = (): WatcherState =>
      initial && !initial.ended ? state : { phase: 'watching', resourceVersion: resourceVersion ?? '', watchList };
    // Uniform in [min, 2·min): spreads reconnects of many informers over time.
    const timeoutSeconds = Math.floor((this.minWatchTimeoutMs * (1 + this.random())) / 1000);
    const idleLimitMs = timeoutSeconds * 1000 + this.stallMarginMs;
    const { controller, dispose } = linkedAbortController(signal);
    let stalled = false;
    const idle = new IdleWatchdog(this.clock, idleLimitMs, () => {
      stalled = true;
      controller.abort(new WatchStalledError(idleLimitMs));
    });
    // Raced against the signal so a source that ignores it still cannot hold us.
    const races = new AbortRace(controller.signal);
    const startedAt = this.clock.monotonicNow();
    let received = 0;
    let iterator: AsyncIterator<ListerWatchEvent<T>> | undefined;
    try {
      const stream = this.lw.watch(
        initial
          ? // No resourceVersion: the initial state is a consistent read, as client-go's watch-list.
            {
              sendInitialEvents: true,
              resourceVersionMatch: 'NotOlderThan',
              allowWatchBookmarks: true,
              timeoutSeconds,
              signal: controller.signal,
            }
          : { resourceVersion, allowWatchBookmarks: true, timeoutSeconds, signal: controller.signal },
      );
      iterator = stream[Symbol.asyncIterator]();
      for (;;) {
        const r = await races.race(iterator.next());
        if (r.done) break;
        received++;
        idle.touch();
        this.progress(true);
        const ev = r.value;
        this.metrics.event(ev.type);
        if (initial && !initial.ended) {
          this.initialEvent(initial, ev);
          if (initial.ended) resourceVersion = this.seen.resourceVersion; // the bookmark's, set by listDone
          continue;
        }
        const rv = ev.object.metadata?.resourceVersion;
        if (rv) resourceVersion = this.seen.resourceVersion = rv;
        if (ev.type === 'BOOKMARK') continue;
        this.seen.events++;
        this.emit({ type: ev.type, object: ev.object });
      }
    } catch (err) {
      return { failedAt: here(), error: stalled && !signal.aborted ? new WatchStalledError(idleLimitMs) : err };
    } finally {
      idle.cancel();
      controller.abort(); // closes the stream on the source's side
      races.dispose();
      dispose();
      // Let the source clean up, without waiting on it (it may be stuck in a read).
      try {
        Promise.resolve(iterator?.return?.()).catch(() => {});
      } catch {
        // a source whose return() throws has nothing left to clean up
      }
    }
    const durationMs = this.clock.monotonicNow() - startedAt;
    if (received === 0 && durationMs < this.minWatchDurationMs) {
      return { failedAt: here(), error: new WatchClosedEarlyError(durationMs) };
    }
    if (initial && !initial.ended) {
      const error = new WatchListProtocolError(
        `the watch closed after ${received} events, before the initial-events-end bookmark`,
      );
      return { failedAt: here(), error };
    }
    this.logger.debug({ resourceVersion, received }, 'watch closed; resuming');
    return { next: here() };
  }

  /** Records progress: the consecutive-failure count starts over and health time starts counting. */
  private progress(watchEvent: boolean): void {
    this.history = afterProgress(this.history, this.clock.monotonicNow(), watchEvent);
    this.seen.lastEventAtMs = this.clock.now();
    this.metrics.setLastEventAt(this.seen.lastEventAtMs);
  }

  private emit(event: WatcherEvent<T>): void {
    try {
      this.sink(event);
    } catch (err) {
      // The sink is our own store code; a throw is a bug, but it must not stop the watch.
      this.logger.error({ err, type: event.type }, 'watcher sink threw');
    }
  }

  private setState(next: WatcherStateName): void {
    if (next === this.stateName) return;
    this.metrics.setState(this.stateName, next);
    this.stateName = next;
  }
}

/** Loggers that have already said the server has no watch-list (weak: a stopped manager's go). */
const watchListFallbackLogged = new WeakSet<Logger>();

interface InitialSync<T> {
  readonly quorum: boolean;
  begun: boolean;
  ended: boolean;
  page: T[];
}

function summarize(err: unknown, atMs: number): ErrorSummary {
  if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; code?: unknown; status?: unknown };
    return {
      message: typeof e.message === 'string' ? e.message : String(err),
      code: typeof e.code === 'string' ? e.code : undefined,
      status: typeof e.status === 'number' ? e.status : undefined,
      atMs,
    };
  }
  return { message: String(err), code: undefined, status: undefined, atMs };
}

/** Settles like `p`, or rejects with `AbortedError` as soon as `signal` aborts; the listener is removed. */
function raceAbort<R>(p: Promise<R>, signal: AbortSignal): Promise<R> {
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(new AbortedError('aborted', { cause: signal.reason }));
  }
  return new Promise<R>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortedError('aborted', { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
