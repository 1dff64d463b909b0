import type { Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import { AbortedError, InvalidArgumentError, InvalidOptionError } from '../core/errors.js';
import { defaultControllerRateLimiter } from './default-controller-rate-limiter.js';
import { DelayHeap } from './delay-heap.js';
import { PriorityLevels } from './priority-levels.js';
import type { RateLimiter } from './rate-limiter.js';
import { RingBuffer } from './ring-buffer.js';
import { WorkqueueMetrics } from './workqueue-metrics.js';
import { SmallestK } from './smallest-k.js';

/** @defaultValue 30,000 ms: how long `shutdown()` waits for in-flight keys (the manager's graceful-shutdown default). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

/** The priority of a key added without one (watch events, users' adds). @defaultValue 0 */
export const DEFAULT_PRIORITY = 0;
/**
 * The priority of keys nothing changed for: the initial list (and a relist's adds, and a late
 * handler's replay of the cache), and periodic resyncs — controller-runtime's `handler.LowPriority`.
 * @defaultValue -100
 */
export const LOW_PRIORITY = -100;
/**
 * How long a key waits before the aging rule lets it jump ahead of higher-priority keys (every
 * second hand-out at most; see {@link WorkqueueOptions.priorityAgingMs}). @defaultValue 10,000 ms
 */
export const DEFAULT_PRIORITY_AGING_MS = 10_000;

/** How a key is added. */
export interface AddOptions {
  /**
   * Higher runs first; equal priorities run in the order they were queued. A key already waiting
   * keeps the highest priority it was added with. Ignored when the queue's `priorityQueue` is
   * false. An integer. @defaultValue {@link DEFAULT_PRIORITY}
   */
  readonly priority?: number;
}

export interface WorkqueueOptions {
  /** The queue's name: the `name` label of its metrics. Required when `registry` is given. */
  readonly name?: string;
  /** Registry to export the queue's metrics on. Without one the queue keeps no metrics at all. */
  readonly registry?: Registry;
  /** The `controller` label of the queue's metrics. @defaultValue name */
  readonly controller?: string;
  /** Time source for delayed adds, the rate limiter and drain timeouts. @defaultValue realClock */
  readonly clock?: Clock;
  /** Used by `addRateLimited`. @defaultValue defaultControllerRateLimiter({ clock }) */
  readonly rateLimiter?: RateLimiter;
  /**
   * Hand out keys by priority (see {@link AddOptions.priority}); false: first in first out whatever
   * the priority, as before priorities existed. @defaultValue true
   */
  readonly priorityQueue?: boolean;
  /**
   * The aging rule, so low priority cannot starve: a key that has waited this long is overdue, and
   * the oldest overdue key of a lower priority than the next one goes first instead — never twice
   * in a row, so overdue keys get at least every second hand-out and a higher-priority key waits
   * behind at most one of them at a time. With a `fairnessKey`, the aged hand-out goes to the
   * next group in turn at that priority, not to its oldest key. `Infinity`: strict priority.
   * @defaultValue {@link DEFAULT_PRIORITY_AGING_MS}
   */
  readonly priorityAgingMs?: number;
  /**
   * Fairness across groups of keys: keys with the same fairness key form a group (in a fleet
   * controller, a member cluster: `key => key.slice(0, key.indexOf('/'))`). Within a priority,
   * groups with queued keys take turns — each hand-out goes to the group after the one that went
   * last, first in first out inside a group — so a group with 10,000 keys queued does not starve
   * a group with ten. Priority still wins across levels; the aging rule picks the level and the
   * turn order picks the group within it (see {@link WorkqueueOptions.priorityAgingMs}). Dedup,
   * in-flight re-adds, delays, rate limits and shutdown are the same for every group; a group
   * whose keys are all handed out leaves nothing behind. Called each time a key is queued (and
   * when a queued key moves up a priority): it must be cheap, never throw, and give a key the same
   * group every time. Without it, one FIFO per priority, exactly as before.
   * @defaultValue undefined (no groups)
   */
  readonly fairnessKey?: (key: string) => string;
  /**
   * At most this many keys of one fairness group in flight (handed out and not yet `done`) at a
   * time: a group at its cap is passed over by `get()` — its keys stay queued, in their order and
   * at their priorities, and other groups' keys go instead, at any priority — until one of its
   * keys is done. Set it below the number of workers so that one group whose keys hang (a member
   * cluster that holds writes open) can never occupy every worker. Needs `fairnessKey`; an integer
   * >= 1, or `Infinity`. @defaultValue Infinity (no cap)
   */
  readonly maxInFlightPerGroup?: number;
}

/**
 * What `get()` resolves with: the next key to process, or word that the queue has shut down and
 * the worker should return. (Go's `(item, shutdown)` pair as a discriminated union.)
 */
export type GetResult = { readonly shutdown: false; readonly key: string } | { readonly shutdown: true };

export interface ShutdownOptions {
  /**
   * How long to wait for in-flight keys to be `done`. 0 returns at once (client-go's `ShutDown`);
   * `Infinity` waits for as long as it takes. @defaultValue {@link DEFAULT_DRAIN_TIMEOUT_MS}
   */
  readonly drainTimeoutMs?: number;
  /** Stops waiting for the drain (the result then says it did not complete). */
  readonly signal?: AbortSignal;
}

/** Whether every in-flight key was finished; if not, which keys were still being processed. */
export type ShutdownResult =
  { readonly drained: true } | { readonly drained: false; readonly inFlight: readonly string[] };

interface Waiter {
  resolve: (result: GetResult) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  settled: boolean;
}

const SHUT_DOWN: GetResult = Object.freeze({ shutdown: true });
/** Node turns longer timeouts into 1 ms; a longer delay re-arms when this one fires. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * client-go's workqueue for string keys, with controller-runtime's priorities: stingy (one entry
 * per key) and, within a priority, fair (FIFO). `dirty` holds keys that must run (again), the
 * priority levels those of them no worker holds, `processing` those a worker holds; a key is never
 * queued and in `processing` at once. Separately, the delay heap holds keys waiting for their
 * `addAfter` time (at most once each):
 *
 * - adding a key that is queued is a no-op, except that a higher priority moves it up; adding a
 *   key in flight marks it dirty and it is queued once more when its worker calls `done` — so two
 *   workers never hold one key;
 * - keys go out highest priority first, aged so that low priority cannot starve (see
 *   {@link WorkqueueOptions.priorityAgingMs}); with `priorityQueue: false`, in FIFO order; with a
 *   `fairnessKey`, groups of keys take turns within a priority, and with `maxInFlightPerGroup` a
 *   group with that many keys in flight is passed over until one is done;
 * - `addAfter` requests for one key coalesce and the earliest time wins; one timer is armed, for
 *   the earliest waiting key;
 * - `addRateLimited` delays by the rate limiter (`forget` on success resets the key's backoff).
 *
 * Workers loop on `await get()` … `done(key)`; `shutdown()` stops intake and waits for them.
 */
export class Workqueue {
  readonly name: string | undefined;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter;
  private readonly metrics: WorkqueueMetrics | undefined;

  private readonly prioritized: boolean;
  private readonly queue: PriorityLevels;
  /**
   * Keys that need processing (queued, or in flight and added again), each with when it became
   * dirty — the start of its queue-duration metric; 0 without metrics. Keeping the time here saves
   * the metrics a map of their own on the hot path.
   */
  private readonly dirty = new Map<string, number>();
  /** The priority of each dirty key whose priority is not the default (most keys have none here). */
  private readonly priorities = new Map<string, number>();
  /** Keys a worker holds, between `get` and `done`. */
  private readonly processing = new Set<string>();
  /** The priority each key a worker holds was handed out at, when not the default. */
  private readonly inFlightPriorities = new Map<string, number>();
  /** With a per-group cap: the fairness key, the cap, and keys in flight per group (only groups with some). */
  private readonly fairnessKey: ((key: string) => string) | undefined;
  private readonly maxInFlightPerGroup: number;
  private readonly inFlightByGroup = new Map<string, number>();
  /** Passed to the levels: whether a group is at its cap. Undefined without a cap (the hot path stays as it was). */
  private readonly blocked: ((group: string) => boolean) | undefined;
  /**
   * Workers blocked in `get()`; non-empty only while no queued key may go (none queued, or only
   * keys of groups at their cap). Aborted ones stay as tombstones.
   */
  private readonly waiters = new RingBuffer<Waiter>();
  private liveWaiters = 0;

  private readonly waiting = new DelayHeap();
  private timer: TimerHandle | undefined;
  private timerDueAtMs = Infinity;

  private stopping = false;
  private readonly drainListeners = new Set<() => void>();

  constructor(options: WorkqueueOptions = {}) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter({ clock: this.clock });
    this.prioritized = options.priorityQueue ?? true;
    const agingMs = options.priorityAgingMs ?? DEFAULT_PRIORITY_AGING_MS;
    if (!(agingMs >= 0)) throw new InvalidOptionError('priorityAgingMs', 'must be >= 0 (Infinity: no aging)');
    const fairnessKey = options.fairnessKey;
    if (fairnessKey !== undefined && typeof fairnessKey !== 'function')
      throw new InvalidOptionError('fairnessKey', 'must be a function from a key to its group');
    this.queue = new PriorityLevels(this.clock, agingMs, fairnessKey);
    this.fairnessKey = fairnessKey;
    this.maxInFlightPerGroup = options.maxInFlightPerGroup ?? Infinity;
    const cap = this.maxInFlightPerGroup;
    if (!(cap === Infinity || (Number.isSafeInteger(cap) && cap >= 1)))
      throw new InvalidOptionError('maxInFlightPerGroup', 'must be an integer >= 1, or Infinity (no cap)');
    if (cap !== Infinity && fairnessKey === undefined)
      throw new InvalidOptionError('maxInFlightPerGroup', 'needs the fairnessKey option (the groups it caps)');
    this.blocked = cap === Infinity ? undefined : (group: string) => (this.inFlightByGroup.get(group) ?? 0) >= cap;
    if (options.registry) {
      if (!options.name) throw new InvalidOptionError('name', 'is required when a metrics registry is given');
      const dirty = this.dirty;
      this.metrics = new WorkqueueMetrics(
        options.registry,
        { name: options.name, controller: options.controller ?? options.name },
        this.clock,
        { depthByPriority: () => depthByPriority(dirty, this.priorities) },
      );
    }
  }

  /** Keys waiting for a worker (client-go's `Len`). */
  get length(): number {
    return this.queue.size;
  }

  /** Keys waiting for a worker, per priority (only priorities with waiting keys). */
  lengthByPriority(): ReadonlyMap<number, number> {
    return this.queue.countByPriority();
  }

  /**
   * Keys of fairness group `group` waiting for a worker, at any priority: O(priorities in use).
   * 0 for a group with none queued, and always 0 without the `fairnessKey` option.
   */
  lengthOfGroup(group: string): number {
    return this.queue.countOfGroup(group);
  }

  /** Whether keys go out by priority (the `priorityQueue` option). */
  get isPriorityQueue(): boolean {
    return this.prioritized;
  }

  /**
   * The priority a worker's key was handed out at (what to requeue it with), or undefined when no
   * worker holds `key`. Always {@link DEFAULT_PRIORITY} when `priorityQueue` is false.
   */
  priorityOf(key: string): number | undefined {
    if (!this.processing.has(key)) return undefined;
    return this.inFlightPriorities.get(key) ?? DEFAULT_PRIORITY;
  }

  /** Keys currently held by workers. */
  get processingCount(): number {
    return this.processing.size;
  }

  /** Keys waiting for their `addAfter` time. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /**
   * Keys waiting after a failure (rate-limited, not yet forgotten), soonest first, at most `limit`:
   * what a person debugging wants to see. O(waiting keys × log limit), never a sort of them all.
   */
  backoffKeys(limit: number): {
    readonly total: number;
    readonly keys: readonly { readonly key: string; readonly retryInMs: number; readonly requeues: number }[];
  } {
    const now = this.clock.monotonicNow();
    const soonest = new SmallestK<{ key: string; retryInMs: number; requeues: number }>(
      Math.max(0, limit),
      (a, b) => a.retryInMs - b.retryInMs,
    );
    for (const entry of this.waiting.entries()) {
      const requeues = this.rateLimiter.numRequeues(entry.key);
      // requeueAfter forgets the key first, so a waiting key with requeues is one in backoff.
      if (requeues > 0) soonest.offer({ key: entry.key, retryInMs: Math.max(0, entry.readyAtMs - now), requeues });
    }
    return { total: soonest.total, keys: soonest.sorted() };
  }

  get isShuttingDown(): boolean {
    return this.stopping;
  }

  /**
   * Marks `key` as needing processing, at `options.priority` (a key already dirty keeps the higher
   * of its priorities). A no-op once shutdown has begun.
   */
  add(key: string, options?: AddOptions): void {
    this.addAt(key, this.priorityFrom(options));
  }

  /**
   * Adds `key` after `delayMs` (at once if `delayMs <= 0`). Repeated requests for a waiting key keep
   * the earliest time and the highest priority. Counts as a retry in `workqueue_retries_total`, as
   * client-go does.
   */
  addAfter(key: string, delayMs: number, options?: AddOptions): void {
    if (this.stopping) return;
    const priority = this.priorityFrom(options);
    this.metrics?.retried();
    if (!(delayMs > 0)) {
      this.addAt(key, priority);
      return;
    }
    this.waiting.schedule(key, this.clock.monotonicNow() + delayMs, priority);
    this.armTimer();
  }

  /** Adds `key` when the rate limiter allows (per-key backoff under an overall bucket by default). */
  addRateLimited(key: string, options?: AddOptions): void {
    if (this.stopping) return;
    this.addAfter(key, this.rateLimiter.when(key), options);
  }

  /** Resets the rate limiter's record of `key` (call after it was processed successfully). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  /** How often `key` was rate-limited since it was last forgotten. */
  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * The next key to process; waits while the queue is empty. The caller owns the key until it calls
   * `done(key)`, and must call it even when processing fails.
   *
   * Resolves `{ shutdown: true }` once shutdown has begun (also for workers already waiting); keys
   * still queued then are dropped — the queue is level-triggered, and the next process's initial
   * list enqueues every object again. Rejects with `AbortedError` if `signal` aborts while waiting
   * (or was already aborted); no key is consumed by an aborted `get`.
   */
  get(signal?: AbortSignal): Promise<GetResult> {
    if (signal?.aborted) return Promise.reject(new AbortedError('workqueue get aborted', { cause: signal.reason }));
    if (this.stopping) return Promise.resolve(SHUT_DOWN);
    const key = this.queue.shift(this.blocked);
    if (key !== undefined) return Promise.resolve(this.handOut(key));
    return new Promise<GetResult>((resolve, reject) => {
      const waiter: Waiter = { resolve, signal, onAbort: undefined, settled: false };
      if (signal) {
        waiter.onAbort = () => {
          if (waiter.settled) return;
          waiter.settled = true;
          this.liveWaiters--;
          // Tombstones leave when a key arrives; compact if a quiet queue collects many of them.
          if (this.waiters.length > 64 && this.waiters.length > 2 * this.liveWaiters)
            this.waiters.retain((w) => !w.settled);
          reject(new AbortedError('workqueue get aborted', { cause: signal.reason }));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      this.liveWaiters++;
    });
  }

  /**
   * Ends processing of `key`. If it was added meanwhile, it is queued again now; if its group was
   * at its cap, a waiting worker takes the next key that may go.
   */
  done(key: string): void {
    if (!this.processing.delete(key)) return;
    if (this.inFlightPriorities.size !== 0) this.inFlightPriorities.delete(key);
    const wasAtCap = this.blocked !== undefined && this.releaseGroupOf(key);
    this.metrics?.finished(key);
    if (this.stopping) {
      if (this.processing.size === 0) for (const listener of this.drainListeners) listener();
      return;
    }
    // Workers may be waiting while keys of a capped group are queued: one of them may go now —
    // before `key` is queued again, so it does not overtake keys of its group queued earlier.
    if (wasAtCap) this.handToWaiters();
    if (this.dirty.has(key)) this.enqueue(key, this.prioritized ? this.clock.monotonicNow() : 0);
  }

  /**
   * Stops intake and waits (bounded by `drainTimeoutMs`) for in-flight keys to be `done`. From the
   * first call on, adds are no-ops, `get` resolves `{ shutdown: true }`, and queued and delayed keys
   * are dropped. Safe to call again, for instance to wait once more.
   */
  shutdown(options: ShutdownOptions = {}): Promise<ShutdownResult> {
    const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    if (!(drainTimeoutMs >= 0)) throw new InvalidOptionError('drainTimeoutMs', 'must be >= 0');
    if (!this.stopping) this.stopIntake();
    if (this.processing.size === 0) return Promise.resolve({ drained: true });
    if (drainTimeoutMs === 0 || options.signal?.aborted) return Promise.resolve(this.undrained());

    return new Promise<ShutdownResult>((resolve) => {
      const finish = (result: ShutdownResult): void => {
        this.drainListeners.delete(onDrained);
        timer?.cancel();
        options.signal?.removeEventListener('abort', onAbort);
        resolve(result);
      };
      const onDrained = (): void => finish({ drained: true });
      const onAbort = (): void => finish(this.undrained());
      const timer = Number.isFinite(drainTimeoutMs) ? this.clock.setTimer(drainTimeoutMs, onAbort) : undefined;
      this.drainListeners.add(onDrained);
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private stopIntake(): void {
    this.stopping = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.timerDueAtMs = Infinity;
    this.waiting.clear();
    this.queue.clear();
    // Dirty keys in flight are not run again: their worker finishes, and that is all.
    this.dirty.clear();
    this.priorities.clear();
    for (let w = this.waiters.shift(); w; w = this.waiters.shift()) this.settle(w, SHUT_DOWN);
  }

  private undrained(): ShutdownResult {
    return { drained: false, inFlight: [...this.processing] };
  }

  private priorityFrom(options: AddOptions | undefined): number {
    const priority = options?.priority;
    if (priority === undefined) return DEFAULT_PRIORITY;
    if (!Number.isSafeInteger(priority)) throw new InvalidArgumentError(`priority must be an integer, got ${priority}`);
    return this.prioritized ? priority : DEFAULT_PRIORITY;
  }

  private addAt(key: string, priority: number): void {
    if (this.stopping) return;
    if (this.dirty.has(key)) {
      if (priority !== DEFAULT_PRIORITY || this.priorities.size !== 0) this.raise(key, priority);
      return;
    }
    const nowMs = this.metrics || this.prioritized ? this.clock.monotonicNow() : 0;
    this.dirty.set(key, this.metrics ? nowMs : 0);
    if (priority !== DEFAULT_PRIORITY) this.priorities.set(key, priority);
    this.metrics?.added();
    // In flight: `done` queues it again, so its worker's successor never overlaps it.
    if (this.processing.has(key)) return;
    this.enqueue(key, nowMs);
  }

  /** A dirty key added again: it keeps the higher priority, and moves up if it is queued. */
  private raise(key: string, priority: number): void {
    const current = this.priorities.get(key) ?? DEFAULT_PRIORITY;
    if (!(priority > current)) return;
    if (priority === DEFAULT_PRIORITY) this.priorities.delete(key);
    else this.priorities.set(key, priority);
    if (!this.processing.has(key)) this.queue.raise(key, current, priority, this.clock.monotonicNow());
  }

  /** Gives a dirty, not-in-flight key to a waiting worker, or queues it (also when its group is at its cap). */
  private enqueue(key: string, nowMs: number): void {
    while (this.liveWaiters > 0 && !(this.blocked !== undefined && this.blocked(this.fairnessKey!(key)))) {
      const waiter = this.waiters.shift()!;
      if (waiter.settled) continue; // aborted while waiting
      this.settle(waiter, this.handOut(key));
      return;
    }
    this.queue.push(key, this.priorities.size === 0 ? DEFAULT_PRIORITY : this.priorityOfDirty(key), nowMs);
  }

  /** Waiting workers take queued keys whose groups are below their cap, while there are both. */
  private handToWaiters(): void {
    while (this.liveWaiters > 0) {
      const key = this.queue.shift(this.blocked);
      if (key === undefined) return;
      // liveWaiters > 0: an unsettled waiter is in the ring behind any aborted ones.
      let waiter = this.waiters.shift()!;
      while (waiter.settled) waiter = this.waiters.shift()!;
      this.settle(waiter, this.handOut(key));
    }
  }

  /** One fewer key of `key`'s group in flight; whether the group was at its cap. */
  private releaseGroupOf(key: string): boolean {
    const group = this.fairnessKey!(key);
    const count = this.inFlightByGroup.get(group) ?? 0;
    if (count <= 1) this.inFlightByGroup.delete(group);
    else this.inFlightByGroup.set(group, count - 1);
    return count >= this.maxInFlightPerGroup;
  }

  private priorityOfDirty(key: string): number {
    return this.priorities.get(key) ?? DEFAULT_PRIORITY;
  }

  private handOut(key: string): GetResult {
    if (this.metrics) this.metrics.started(key, this.dirty.get(key)!);
    this.dirty.delete(key);
    if (this.priorities.size !== 0) {
      const priority = this.priorities.get(key);
      if (priority !== undefined) {
        this.priorities.delete(key);
        this.inFlightPriorities.set(key, priority);
      }
    }
    this.processing.add(key);
    if (this.blocked !== undefined) {
      const group = this.fairnessKey!(key);
      this.inFlightByGroup.set(group, (this.inFlightByGroup.get(group) ?? 0) + 1);
    }
    return { shutdown: false, key };
  }

  private settle(waiter: Waiter, result: GetResult): void {
    if (waiter.settled) return;
    waiter.settled = true;
    this.liveWaiters--;
    if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(result);
  }

  /** Keeps exactly one timer, armed for the earliest waiting key. */
  private armTimer(): void {
    const next = this.waiting.peek();
    if (!next) return;
    if (this.timer && this.timerDueAtMs <= next.readyAtMs) return;
    this.timer?.cancel();
    this.timerDueAtMs = next.readyAtMs;
    const delayMs = Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(next.readyAtMs - this.clock.monotonicNow())));
    this.timer = this.clock.setTimer(delayMs, () => this.onTimer());
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerDueAtMs = Infinity;
    const now = this.clock.monotonicNow();
    for (let entry = this.waiting.popDue(now); entry; entry = this.waiting.popDue(now))
      this.addAt(entry.key, entry.priority);
    // A timer that fired a little early (or a capped long delay) simply re-arms.
    this.armTimer();
  }
}

/** Dirty keys (queued, or in flight and added again) per priority: the `workqueue_depth` series. */
function depthByPriority(
  dirty: ReadonlyMap<string, number>,
  priorities: ReadonlyMap<string, number>,
): Map<number, number> {
  const depth = new Map<number, number>();
  for (const priority of priorities.values()) depth.set(priority, (depth.get(priority) ?? 0) + 1);
  depth.set(DEFAULT_PRIORITY, dirty.size - priorities.size);
  return depth;
}
