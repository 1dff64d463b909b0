/**
 * Read-your-own-writes for the delegating client (controller-runtime 0.25's consistent client, the
 * Java Operator SDK's temporal cache): once a write through the client has returned, a cached `get`
 * of that object and a cached `list` that would include it answer at least what was written, and a
 * deleted object is not listed.
 *
 * How: each write leaves an expectation per informer that holds its kind ("the object at
 * resourceVersion R", or "no such object any more"); a read first waits until its informers have
 * observed the expectations recorded before it began. Waiting (rather than laying the written
 * object over the cache's answer) keeps the cache the one source of every read: what a read returns
 * went through the store's transform and indexes, a metadata-only cache answers metadata, a
 * label-filtered cache answers only matching objects, and handlers saw the same object.
 *
 * "Observed" is read from the informer's state, never from an event's arrival, so a watch event
 * that came before the write's response is not missed:
 * - the store holds the object at exactly the written resourceVersion; or
 * - the resourceVersions are etcd revisions (resource-version-order.ts) and the informer's watch
 *   has progressed to the written one or past it (`health().resourceVersion`: the last event,
 *   bookmark or list applied — the watch delivers in order, so everything up to it is in the
 *   store), or the store holds a newer version of the object;
 * - for "no such object": the store holds no object under the key with the deleted uid, and has
 *   progressed past any earlier write of ours to it (else it could show the object again later).
 * With opaque resourceVersions only equality is left: a write changed again by someone else before
 * the informer saw it is then waited for until the bound.
 *
 * Bounded: a read waits at most `waitMs`; then it answers what the cache holds, the writes it
 * waited for are forgotten (so the next read does not wait for them again), and the miss is counted
 * (`cache_read_own_writes_total{outcome="timed_out"}`) and logged. A live read instead would add
 * load on the API server exactly when the watch lags (an overloaded or partitioned server), and
 * answer objects the cache would have shaped differently.
 *
 * Wake-ups come from one event handler per informer waited on (registered at the first wait), plus
 * a short poll for progress that reaches no handler (a bookmark, a relist that changed nothing, a
 * write the informer filters out). The informer and its store are read, never changed.
 */
import type { Counter, Registry } from 'prom-client';
import { realClock, type Clock, type TimerHandle } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import { getOrCreateCounter } from '../metrics/get-or-create-metric.js';
import type { SharedInformer } from './informer.js';
import { atLeast } from './resource-version-order.js';

/** How long a read waits for the cache to observe the client's own writes. @defaultValue 5_000 */
export const DEFAULT_OWN_WRITES_WAIT_MS = 5_000;

/** How often a waiting read re-checks progress that fires no handler. @defaultValue 25 */
export const OWN_WRITES_POLL_MS = 25;

/** Unobserved writes remembered per informer; beyond it the oldest are forgotten (and counted). @defaultValue 10_000 */
export const MAX_OWN_WRITES_PER_INFORMER = 10_000;

/** What a read of the cache must reflect after a write. */
export type OwnWriteExpectation =
  /** The object at this resourceVersion (or newer, when resourceVersions are ordered). */
  | { readonly type: 'present'; readonly resourceVersion: string }
  /**
   * No object under the key with `uid` (any object when `uid` is absent). `resourceVersion`: the
   * delete's own, when the server gave one; `notBefore`: an earlier write of ours still unobserved.
   */
  | {
      readonly type: 'absent';
      readonly uid?: string;
      readonly resourceVersion?: string;
      readonly notBefore?: string;
    };

/** What of an informer read-your-own-writes uses: its store, its progress, and its handler seam. */
export type ObservingInformer = Pick<SharedInformer<KubeObject>, 'name' | 'reader' | 'health' | 'addEventHandler'>;

export type OwnWritesOutcome = 'waited' | 'timed_out' | 'aborted' | 'evicted';

export interface OwnWritesOptions {
  /** @defaultValue {@link DEFAULT_OWN_WRITES_WAIT_MS} */
  readonly waitMs?: number;
  /** @defaultValue realClock */
  readonly clock?: Clock;
  /** Where `cache_read_own_writes_total` is counted. @defaultValue none (counted in `counts` only) */
  readonly registry?: Registry;
  /** @defaultValue silentLogger */
  readonly logger?: Logger;
}

interface InformerWrites {
  /** key → expectation, oldest first (a re-recorded key moves to the end). */
  readonly pending: Map<string, OwnWriteExpectation>;
  readonly wakers: Set<() => void>;
  subscribed: boolean;
  /** Size at which `record` next sweeps observed entries (amortised O(1) per write). */
  sweepAt: number;
}

const FIRST_SWEEP_AT = 1024;

/** The informer-side bookkeeping of read-your-own-writes: what was written, and waiting for it. */
export class OwnWrites {
  readonly waitMs: number;
  /** Per outcome, as counted in the metric (for tests and the console). */
  readonly counts: Record<OwnWritesOutcome, number> = { waited: 0, timed_out: 0, aborted: 0, evicted: 0 };
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly metric: Counter<'informer' | 'outcome'> | undefined;
  private readonly byInformer = new WeakMap<ObservingInformer, InformerWrites>();

  constructor(options: OwnWritesOptions = {}) {
    this.waitMs = options.waitMs ?? DEFAULT_OWN_WRITES_WAIT_MS;
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
    this.metric = options.registry
      ? getOrCreateCounter(options.registry, {
          name: 'cache_read_own_writes_total',
          help: "Cached reads that waited for the client's own writes to reach the informer, by outcome: waited (caught up), timed_out (answered the cache as it was), aborted; and writes forgotten unobserved: evicted",
          labelNames: ['informer', 'outcome'],
        })
      : undefined;
  }

  /** Remembers that reads of `key` (and lists) from `informer` must reflect `expectation`. */
  record(informer: ObservingInformer, key: string, expectation: OwnWriteExpectation): void {
    const w = this.writesOf(informer);
    const previous = w.pending.get(key);
    let next = expectation;
    if (next.type === 'absent' && next.notBefore === undefined && previous?.type === 'present')
      next = { ...next, notBefore: previous.resourceVersion };
    w.pending.delete(key);
    w.pending.set(key, next);
    if (w.pending.size >= w.sweepAt) {
      this.sweep(informer, w);
      w.sweepAt = Math.max(FIRST_SWEEP_AT, w.pending.size * 2);
    }
    while (w.pending.size > MAX_OWN_WRITES_PER_INFORMER) {
      const oldest = w.pending.keys().next().value;
      if (oldest === undefined) break;
      w.pending.delete(oldest);
      this.count(informer, 'evicted');
    }
  }

  /**
   * Resolves once each of `informers` has observed the writes recorded so far for `key` (every key
   * when `key` is undefined: a list), or after `waitMs` (counted, and those writes forgotten).
   * Rejects with `AbortedError` when `signal` aborts. Writes recorded after the call are not
   * waited for.
   */
  async observed(
    informers: readonly ObservingInformer[],
    key: string | undefined,
    signal?: AbortSignal,
  ): Promise<void> {
    const waits: Wait[] = [];
    for (const informer of informers) {
      const w = this.byInformer.get(informer);
      if (!w || w.pending.size === 0) continue;
      const one = key === undefined ? undefined : w.pending.get(key);
      const entries = key === undefined ? [...w.pending] : one && key !== undefined ? [[key, one] as const] : [];
      const wait: Wait = { informer, writes: w, entries, next: 0 };
      if (!settle(wait)) waits.push(wait);
    }
    if (waits.length === 0) return;
    if (signal?.aborted) throw this.aborted(waits, signal);
    await this.waitFor(waits, signal);
  }

  private waitFor(waits: Wait[], signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let poll: TimerHandle | undefined;
      let done = false;
      const finish = (): void => {
        done = true;
        deadline.cancel();
        poll?.cancel();
        for (const w of waits) w.writes.wakers.delete(check);
        signal?.removeEventListener('abort', onAbort);
      };
      const check = (): void => {
        if (done || !waits.every(settle)) return;
        finish();
        for (const w of waits) this.count(w.informer, 'waited');
        resolve();
      };
      const armPoll = (): void => {
        poll = this.clock.setTimer(OWN_WRITES_POLL_MS, () => {
          check();
          if (!done) armPoll();
        });
      };
      const deadline = this.clock.setTimer(this.waitMs, () => {
        if (done) return;
        finish();
        for (const w of waits) {
          if (settle(w)) continue;
          // Forgotten, so the next read answers at once instead of waiting for them again.
          const missed = w.entries.slice(w.next);
          for (const [key, e] of missed) if (w.writes.pending.get(key) === e) w.writes.pending.delete(key);
          this.count(w.informer, 'timed_out');
          this.logger.warn(
            { informer: w.informer.name, writes: missed.length, waitMs: this.waitMs },
            "the cache did not observe this client's own writes in time; answering what it holds",
          );
        }
        resolve();
      });
      const onAbort = (): void => {
        if (done) return;
        finish();
        reject(this.aborted(waits, signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      for (const w of waits) {
        w.writes.wakers.add(check);
        this.subscribe(w.informer, w.writes);
      }
      armPoll();
    });
  }

  private aborted(waits: readonly Wait[], signal: AbortSignal): AbortedError {
    for (const w of waits) this.count(w.informer, 'aborted');
    return new AbortedError('waiting for the cache to observe own writes aborted', { cause: signal.reason });
  }

  private writesOf(informer: ObservingInformer): InformerWrites {
    let w = this.byInformer.get(informer);
    if (!w) {
      w = { pending: new Map(), wakers: new Set(), subscribed: false, sweepAt: FIRST_SWEEP_AT };
      this.byInformer.set(informer, w);
    }
    return w;
  }

  /** One handler per informer, added at its first wait: every change it delivers is a chance to be done. */
  private subscribe(informer: ObservingInformer, w: InformerWrites): void {
    if (w.subscribed) return;
    w.subscribed = true;
    const wake = (): void => {
      for (const f of [...w.wakers]) f();
    };
    informer.addEventHandler({ add: wake, update: wake, delete: wake }, { name: 'read-own-writes' });
  }

  private sweep(informer: ObservingInformer, w: InformerWrites): void {
    const progress = progressOf(informer);
    for (const [key, e] of w.pending) if (isObserved(informer, key, e, progress)) w.pending.delete(key);
  }

  private count(informer: ObservingInformer, outcome: OwnWritesOutcome): void {
    this.counts[outcome]++;
    this.metric?.inc({ informer: informer.name, outcome });
  }
}

interface Wait {
  readonly informer: ObservingInformer;
  readonly writes: InformerWrites;
  /** The writes this read waits for, as they were when it began, oldest first. */
  readonly entries: readonly (readonly [string, OwnWriteExpectation])[];
  /** Entries before this one are observed. */
  next: number;
}

/**
 * Drops the observed writes of `wait` (from its list and, unless re-recorded since, from the
 * informer's pending ones); true once none is left. Oldest first, stopping at the first
 * unobserved one: with ordered resourceVersions the later ones are newer and cannot be observed
 * before it, so each wake-up costs O(1) however many writes a list waits for.
 */
function settle(wait: Wait): boolean {
  const progress = progressOf(wait.informer);
  for (; wait.next < wait.entries.length; wait.next++) {
    const [key, e] = wait.entries[wait.next]!;
    if (!isObserved(wait.informer, key, e, progress)) return false;
    if (wait.writes.pending.get(key) === e) wait.writes.pending.delete(key);
  }
  return true;
}

/**
 * The informer's watch progress (`health().resourceVersion`), read at most once and only when the
 * store alone does not answer: `health()` builds a whole report, and a read checks its writes often.
 */
function progressOf(informer: ObservingInformer): () => string | undefined {
  let read: { resourceVersion: string | undefined } | undefined;
  return () => (read ??= { resourceVersion: informer.health().resourceVersion }).resourceVersion;
}

/**
 * Whether `informer`, whose watch has progressed to `progress` (or a function reading it), reflects
 * `e` for `key`.
 */
export function isObserved(
  informer: Pick<ObservingInformer, 'reader'>,
  key: string,
  e: OwnWriteExpectation,
  progress: string | undefined | (() => string | undefined),
): boolean {
  const progressed = (rv: string): boolean => atLeast(typeof progress === 'function' ? progress() : progress, rv);
  const stored = informer.reader.get(key)?.metadata;
  if (e.type === 'present') return atLeast(stored?.resourceVersion, e.resourceVersion) || progressed(e.resourceVersion);
  if (e.resourceVersion !== undefined && progressed(e.resourceVersion)) return true;
  const gone = stored === undefined || (e.uid !== undefined && stored.uid !== e.uid);
  if (!gone) return false;
  // An earlier write of ours not yet observed could still bring the object into the store.
  return e.notBefore === undefined || progressed(e.notBefore);
}
