import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { registerCounterCollector } from '../metrics/counter-collector.js';
import { registerGaugeCollector } from '../metrics/gauge-collector.js';
import { HistogramAccumulator } from '../metrics/histogram-accumulator.js';
import { registerHistogramCollector } from '../metrics/histogram-collector.js';

/** controller-runtime's workqueue buckets: `prometheus.ExponentialBuckets(10e-9, 10, 12)`, 10 ns … 1000 s. */
export const WORKQUEUE_DURATION_BUCKETS_SECONDS: readonly number[] = Object.freeze(
  Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1))),
);

type Label = 'name' | 'controller';

/**
 * Label pairs already taken on each registry. Two queues exporting one series would silently merge
 * (or, for histograms, export duplicate series), so a second queue with the same labels is refused,
 * as controller-runtime refuses duplicate controller names. Keyed weakly by registry: nothing is
 * shared between registries, and an entry goes away with its registry.
 */
const takenLabels = new WeakMap<Registry, Set<string>>();

export interface WorkqueueMetricsLabels {
  readonly name: string;
  readonly controller: string;
}

/** What the metrics read from the queue at scrape time instead of tracking on every operation. */
export interface WorkqueueState {
  /** Keys added and not yet handed to a worker (client-go's dirty set), per priority. */
  depthByPriority(): ReadonlyMap<number, number>;
}

/**
 * The queue's metrics, with controller-runtime's names, help texts and labels, on the caller's
 * registry. The hot path only bumps plain numbers and a small map of start times (the queue keeps
 * add times in its dirty map); prom-client sees the totals at scrape time (its own `inc`/`observe`
 * hash the labels on every call, which costs more than the queue operation itself). Several queues
 * share the metric families, one series each.
 * @internal Created by `Workqueue`.
 */
export class WorkqueueMetrics {
  private adds = 0;
  private retries = 0;
  private readonly queueDuration = new HistogramAccumulator(WORKQUEUE_DURATION_BUCKETS_SECONDS);
  private readonly workDuration = new HistogramAccumulator(WORKQUEUE_DURATION_BUCKETS_SECONDS);
  /** When each in-flight key was handed out. */
  private readonly startedAtMs = new Map<string, number>();
  /**
   * Priorities `workqueue_depth` has shown, each kept as a series (at 0 when empty) so that none
   * goes stale between scrapes; the default priority's exists from the start.
   */
  private readonly depthPriorities = new Set<number>([0]);

  constructor(
    registry: Registry,
    labelValues: WorkqueueMetricsLabels,
    private readonly clock: Clock,
    state: WorkqueueState,
  ) {
    const labels: Record<Label, string> = { name: labelValues.name, controller: labelValues.controller };
    const taken = takenLabels.get(registry) ?? new Set<string>();
    const id = JSON.stringify([labels.name, labels.controller]);
    if (taken.has(id)) {
      throw new InvalidOptionError(
        'name',
        `a workqueue named ${labels.name} (controller ${labels.controller}) already exports metrics on this registry`,
      );
    }
    const labelNames: Label[] = ['name', 'controller'];
    const buckets = [...WORKQUEUE_DURATION_BUCKETS_SECONDS];
    // Every series exists from the start (at zero), as in controller-runtime, so rate() works from the first scrape.
    registerCounterCollector(
      registry,
      { name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames },
      (c) => c.inc(labels, this.adds),
    );
    registerCounterCollector(
      registry,
      { name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames },
      (c) => c.inc(labels, this.retries),
    );
    registerHistogramCollector(
      registry,
      {
        name: 'workqueue_queue_duration_seconds',
        help: 'How long in seconds an item stays in workqueue before being requested',
        labelNames,
        buckets,
      },
      (emit) => emit(labels, this.queueDuration),
    );
    registerHistogramCollector(
      registry,
      {
        name: 'workqueue_work_duration_seconds',
        help: 'How long in seconds processing an item from workqueue takes.',
        labelNames,
        buckets,
      },
      (emit) => emit(labels, this.workDuration),
    );
    // controller-runtime's priority queue labels its depth by priority (`workqueue_depth{priority}`).
    registerGaugeCollector(
      registry,
      { name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: [...labelNames, 'priority'] },
      (g) => {
        const depth = state.depthByPriority();
        for (const priority of depth.keys()) this.depthPriorities.add(priority);
        for (const priority of this.depthPriorities)
          g.set({ ...labels, priority: String(priority) }, depth.get(priority) ?? 0);
      },
    );
    registerGaugeCollector(
      registry,
      {
        name: 'workqueue_unfinished_work_seconds',
        help:
          "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
          'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
        labelNames,
      },
      (g) => g.set(labels, this.unfinishedSeconds()),
    );
    registerGaugeCollector(
      registry,
      {
        name: 'workqueue_longest_running_processor_seconds',
        help: 'How many seconds has the longest running processor for workqueue been running.',
        labelNames,
      },
      (g) => g.set(labels, this.longestRunningSeconds()),
    );
    // Only once every family accepted the queue (a MetricConflictError leaves the name free).
    taken.add(id);
    takenLabels.set(registry, taken);
  }

  /** A key became dirty (a real add, not a duplicate). */
  added(): void {
    this.adds++;
  }

  /** A worker took `key`, which became dirty at `addedAtMs`. */
  started(key: string, addedAtMs: number): void {
    const now = this.clock.monotonicNow();
    this.queueDuration.observe((now - addedAtMs) / 1000);
    this.startedAtMs.set(key, now);
  }

  /** A worker finished `key`. */
  finished(key: string): void {
    const startedAt = this.startedAtMs.get(key);
    if (startedAt === undefined) return;
    this.workDuration.observe((this.clock.monotonicNow() - startedAt) / 1000);
    this.startedAtMs.delete(key);
  }

  retried(): void {
    this.retries++;
  }

  private unfinishedSeconds(): number {
    const now = this.clock.monotonicNow();
    let total = 0;
    for (const startedAt of this.startedAtMs.values()) total += now - startedAt;
    return total / 1000;
  }

  private longestRunningSeconds(): number {
    const now = this.clock.monotonicNow();
    let longest = 0;
    for (const startedAt of this.startedAtMs.values()) longest = Math.max(longest, now - startedAt);
    return longest / 1000;
  }
}
