import { Counter, Gauge, Histogram } from '../core/prom-client-parts.js';
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration, Registry } from 'prom-client';
import { MetricConflictError } from './metric-conflict-error.js';

/** A metric's configuration without `registers`: the registry is always the one passed in. */
export type MetricConfig<C> = Omit<C, 'registers'>;

/**
 * Returns the counter registered under `config.name` on `registry`, creating it if absent, so
 * several components (or several queues) can share one registry without a double-registration
 * error. Throws `MetricConflictError` if the name is taken by another type or other label names.
 * An existing metric keeps its original help, buckets and `collect` callback.
 */
export function getOrCreateCounter<T extends string>(
  registry: Registry,
  config: MetricConfig<CounterConfiguration<T>>,
): Counter<T> {
  return getOrCreate(registry, config, Counter, 'counter', () => new Counter<T>({ ...config, registers: [registry] }));
}

/** Like {@link getOrCreateCounter}, for a gauge. */
export function getOrCreateGauge<T extends string>(
  registry: Registry,
  config: MetricConfig<GaugeConfiguration<T>>,
): Gauge<T> {
  return getOrCreate(registry, config, Gauge, 'gauge', () => new Gauge<T>({ ...config, registers: [registry] }));
}

/** Like {@link getOrCreateCounter}, for a histogram. */
export function getOrCreateHistogram<T extends string>(
  registry: Registry,
  config: MetricConfig<HistogramConfiguration<T>>,
): Histogram<T> {
  return getOrCreate(
    registry,
    config,
    Histogram,
    'histogram',
    () => new Histogram<T>({ ...config, registers: [registry] }),
  );
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any constructor of the metric class
type AnyConstructor<M> = abstract new (...args: any[]) => M;

/** @internal Shared by the typed helpers and by gauge collectors. */
export function getOrCreate<M>(
  registry: Registry,
  config: { readonly name: string; readonly labelNames?: readonly string[] },
  type: AnyConstructor<M>,
  typeName: string,
  create: () => M,
): M {
  const existing: unknown = registry.getSingleMetric(config.name);
  if (existing === undefined) return create();
  // Exact class: a scrape-time (collected) metric rebuilds its series at every scrape and would
  // silently discard values set directly, and vice versa.
  if ((existing as { constructor?: unknown }).constructor !== type) {
    throw new MetricConflictError(config.name, `already registered with another type (wanted a ${typeName})`);
  }
  const have = sortedLabels((existing as { labelNames?: readonly string[] }).labelNames);
  const want = sortedLabels(config.labelNames);
  if (have !== want) {
    throw new MetricConflictError(config.name, `already registered with labels [${have}], not [${want}]`);
  }
  return existing as M;
}

function sortedLabels(names: readonly string[] | undefined): string {
  return [...(names ?? [])].sort().join(',');
}
