import { Histogram } from '../core/prom-client-parts.js';
import type { HistogramConfiguration, LabelValues, Registry } from 'prom-client';
import { MetricConflictError } from './metric-conflict-error.js';
import { getOrCreate } from './get-or-create-metric.js';
import type { MetricConfig } from './get-or-create-metric.js';
import { HistogramAccumulator } from './histogram-accumulator.js';

/** Reports each series it owns by calling `emit(labels, accumulator)`; runs at every scrape. */
export type HistogramCollector<T extends string> = (
  emit: (labels: LabelValues<T>, values: HistogramAccumulator) => void,
) => void;

type HistogramSnapshot<T extends string> = Awaited<ReturnType<Histogram<T>['get']>>;

/**
 * A histogram whose series come from `HistogramAccumulator`s at scrape time. It produces the same
 * values as prom-client's own histogram (cumulative `_bucket` with `le`, `+Inf`, `_sum`, `_count`)
 * through the public `get()` shape that the registry formats, so the text output is identical.
 */
class CollectedHistogram<T extends string> extends Histogram<T> {
  readonly collectors = new Set<HistogramCollector<T>>();
  readonly upperBounds: readonly number[];

  constructor(config: MetricConfig<HistogramConfiguration<T>>, registry: Registry) {
    super({ ...config, registers: [registry] });
    this.upperBounds = [...(config.buckets ?? [])];
  }

  override get(): Promise<HistogramSnapshot<T>> {
    return Promise.resolve(this.snapshot());
  }

  /** The registry prefers this for the text format; the plain shape formats the same. */
  getForPromString(): Promise<HistogramSnapshot<T>> {
    return this.get();
  }

  private snapshot(): HistogramSnapshot<T> {
    const name = (this as unknown as { name: string }).name;
    const help = (this as unknown as { help: string }).help;
    const values: HistogramSnapshot<T>['values'] = [];
    for (const collector of this.collectors) {
      collector((labels, acc) => {
        if (acc.buckets.length !== this.upperBounds.length || acc.buckets.some((b, i) => b !== this.upperBounds[i])) {
          throw new MetricConflictError(name, "accumulator buckets differ from the histogram's");
        }
        let cumulative = 0;
        for (let i = 0; i < acc.buckets.length; i++) {
          cumulative += acc.counts[i]!;
          values.push({ labels: { le: acc.buckets[i]!, ...labels }, value: cumulative, metricName: `${name}_bucket` });
        }
        values.push({ labels: { le: '+Inf', ...labels }, value: acc.count, metricName: `${name}_bucket` });
        values.push({ labels: { ...labels }, value: acc.sum, metricName: `${name}_sum` });
        values.push({ labels: { ...labels }, value: acc.count, metricName: `${name}_count` });
      });
    }
    // prom-client's typings declare `type` as a numeric enum and require `collect`; at runtime (and
    // in what the registry reads) `type` is the string 'histogram' and there is no `collect`.
    return { name, help, type: 'histogram', values, aggregator: 'sum' } as unknown as HistogramSnapshot<T>;
  }
}

/**
 * Attaches `collector` to the histogram named `config.name` on `registry` (created if absent) and
 * returns a function that detaches it. The component observes into `HistogramAccumulator`s on its
 * hot path (prom-client's `observe` hashes the labels on every call) and they are exported at
 * scrape time. Accumulators must use the histogram's buckets. Throws `MetricConflictError` if the
 * name is taken by anything but a collected histogram with the same label names.
 */
export function registerHistogramCollector<T extends string>(
  registry: Registry,
  config: Omit<MetricConfig<HistogramConfiguration<T>>, 'collect'> & { readonly buckets: number[] },
  collector: HistogramCollector<T>,
): () => void {
  const histogram = getOrCreate(
    registry,
    config,
    CollectedHistogram,
    'collected histogram',
    () => new CollectedHistogram<T>(config, registry),
  ) as CollectedHistogram<T>;
  histogram.collectors.add(collector);
  return () => {
    histogram.collectors.delete(collector);
  };
}
