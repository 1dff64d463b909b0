/**
 * Gives memory back after a busy phase. An operator's heap grows while it lists and reconciles
 * (initial sync, a relist, a wave of changes) and V8 keeps those pages once the work is done: the
 * reference operator idled at 131 MiB on Node 24 with 37 MiB of heap committed for 23 MiB used.
 * Once the caches are synced and the event loop has been quiet for a whole period, this runs one
 * memory-reducing full GC; after that, again only when the committed heap grew by a bound since.
 */
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { Registry } from 'prom-client';
import { realClock, type Clock, type TimerHandle } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { MEMORY_REDUCING_GC_SUPPORTED, collectGarbageAndShrinkHeap } from '../core/memory-reducing-gc.js';
import { getOrCreateCounter, getOrCreateHistogram } from '../metrics/get-or-create-metric.js';
import type { Counter, Histogram } from 'prom-client';
import type { Runnable } from './runnable.js';

/** @defaultValue 10,000 ms */
export const DEFAULT_HEAP_COMPACTION_QUIET_PERIOD_MS = 10_000;
/** @defaultValue 0.05 */
export const DEFAULT_HEAP_COMPACTION_IDLE_UTILIZATION = 0.05;
/** @defaultValue 60,000 ms */
export const DEFAULT_HEAP_COMPACTION_MIN_INTERVAL_MS = 60_000;
/** @defaultValue 8 MiB */
export const DEFAULT_HEAP_COMPACTION_MIN_GROWTH_BYTES = 8 * 1024 * 1024;

export interface HeapCompactionOptions {
  /** How long the event loop must have been quiet; also how often it is checked. @defaultValue {@link DEFAULT_HEAP_COMPACTION_QUIET_PERIOD_MS} */
  readonly quietPeriodMs?: number;
  /** Quiet means the event loop was busy at most this share of the period (0–1). @defaultValue {@link DEFAULT_HEAP_COMPACTION_IDLE_UTILIZATION} */
  readonly idleUtilization?: number;
  /** At most one compaction per this interval. @defaultValue {@link DEFAULT_HEAP_COMPACTION_MIN_INTERVAL_MS} */
  readonly minIntervalMs?: number;
  /** After the first compaction (once idle after the initial sync), compact again only when the committed heap grew at least this much since the last one. @defaultValue {@link DEFAULT_HEAP_COMPACTION_MIN_GROWTH_BYTES} */
  readonly minGrowthBytes?: number;
}

/** What the compactor reads and does, replaceable in tests. */
export interface HeapCompactorDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  /** True once the caches are synced (no compaction during the initial lists). */
  readonly ready: () => boolean;
  /** The share of time the event loop was busy since the previous call (0–1). */
  readonly utilization?: () => number;
  /** V8's committed heap, in bytes. */
  readonly committedHeapBytes?: () => number;
  readonly collect?: () => void;
}

export function validateHeapCompactionOptions(options: HeapCompactionOptions): void {
  for (const [name, value] of [
    ['quietPeriodMs', options.quietPeriodMs],
    ['minIntervalMs', options.minIntervalMs],
    ['minGrowthBytes', options.minGrowthBytes],
  ] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0))
      throw new InvalidOptionError(`heapCompaction.${name}`, 'must be a number >= 0');
  }
  if (options.quietPeriodMs !== undefined && options.quietPeriodMs < 100)
    throw new InvalidOptionError('heapCompaction.quietPeriodMs', 'must be at least 100 ms');
  const u = options.idleUtilization;
  if (u !== undefined && !(Number.isFinite(u) && u >= 0 && u <= 1))
    throw new InvalidOptionError('heapCompaction.idleUtilization', 'must be a number from 0 to 1');
}

function eventLoopUtilizationSincePreviousCall(): () => number {
  let previous = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, previous);
    previous = now;
    return utilization;
  };
}

const committedHeap = (): number => getHeapStatistics().total_heap_size;

/**
 * The manager's `heapCompaction` option as a runnable, or undefined when it does not run: `false`,
 * a V8 without the memory-reducing GC, or (by default) a fake clock. Bad options fail on every Node
 * alike, even where it would not run.
 */
export function heapCompactionRunnable(
  option: HeapCompactionOptions | false | undefined,
  deps: HeapCompactorDeps,
): HeapCompactor | undefined {
  const compaction = option ?? (deps.clock === realClock ? {} : false);
  if (!compaction) return undefined;
  // The compactor validates its options.
  if (MEMORY_REDUCING_GC_SUPPORTED) return new HeapCompactor(compaction, deps);
  validateHeapCompactionOptions(compaction);
  return undefined;
}

export class HeapCompactor implements Runnable {
  private readonly quietPeriodMs: number;
  private readonly idleUtilization: number;
  private readonly minIntervalMs: number;
  private readonly minGrowthBytes: number;
  private readonly compactions: Counter<string>;
  private readonly duration: Histogram<string>;

  constructor(
    options: HeapCompactionOptions,
    private readonly deps: HeapCompactorDeps,
  ) {
    validateHeapCompactionOptions(options);
    this.quietPeriodMs = options.quietPeriodMs ?? DEFAULT_HEAP_COMPACTION_QUIET_PERIOD_MS;
    this.idleUtilization = options.idleUtilization ?? DEFAULT_HEAP_COMPACTION_IDLE_UTILIZATION;
    this.minIntervalMs = options.minIntervalMs ?? DEFAULT_HEAP_COMPACTION_MIN_INTERVAL_MS;
    this.minGrowthBytes = options.minGrowthBytes ?? DEFAULT_HEAP_COMPACTION_MIN_GROWTH_BYTES;
    this.compactions = getOrCreateCounter(deps.registry, {
      name: 'heap_compactions_total',
      help: 'Memory-reducing full garbage collections run once the operator was idle after a busy phase',
    });
    this.duration = getOrCreateHistogram(deps.registry, {
      name: 'heap_compaction_duration_seconds',
      help: 'How long each idle heap compaction blocked the event loop',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    });
  }

  start(signal: AbortSignal): Promise<void> {
    const utilization = this.deps.utilization ?? eventLoopUtilizationSincePreviousCall();
    const committed = this.deps.committedHeapBytes ?? committedHeap;
    const collect = this.deps.collect ?? collectGarbageAndShrinkHeap;
    const { clock, logger } = this.deps;
    // The first compaction needs no growth: the initial lists always leave their pages behind.
    let baseline = -Infinity;
    let lastCompaction = -Infinity;
    let timer: TimerHandle | undefined;
    const check = (): void => {
      // Read every period, so each reading covers exactly the period before it.
      const busy = utilization();
      const now = clock.monotonicNow();
      const before = committed();
      if (
        this.deps.ready() &&
        busy <= this.idleUtilization &&
        now - lastCompaction >= this.minIntervalMs &&
        before - baseline >= this.minGrowthBytes
      ) {
        const started = performance.now();
        try {
          collect();
        } catch (err) {
          // A runtime that refuses (no gc to take) costs the memory, never the process: stop trying.
          logger.warn({ err }, 'idle heap compaction failed; not trying again');
          return;
        }
        const ms = performance.now() - started;
        baseline = committed();
        lastCompaction = now;
        this.compactions.inc();
        this.duration.observe(ms / 1000);
        logger.info(
          { committedBeforeMiB: mib(before), committedAfterMiB: mib(baseline), ms: Math.round(ms) },
          'idle: heap compacted',
        );
      }
      timer = clock.setTimer(this.quietPeriodMs, check);
    };
    timer = clock.setTimer(this.quietPeriodMs, check);
    return new Promise((resolve) => {
      const stop = (): void => {
        timer?.cancel();
        resolve();
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  }
}

const mib = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;
