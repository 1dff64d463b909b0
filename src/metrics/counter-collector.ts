import { Counter } from '../core/prom-client-parts.js';
import type { CounterConfiguration, Registry } from 'prom-client';
import { getOrCreate } from './get-or-create-metric.js';
import type { MetricConfig } from './get-or-create-metric.js';

/** Adds the current total of each series it owns (`counter.inc(labels, total)`); runs at every scrape. */
export type CounterCollector<T extends string> = (counter: Counter<T>) => void;

/** A counter rebuilt at every scrape from the totals its collectors keep in plain numbers. */
class CollectedCounter<T extends string> extends Counter<T> {
  readonly collectors = new Set<CounterCollector<T>>();

  constructor(config: MetricConfig<CounterConfiguration<T>>, registry: Registry) {
    super({
      ...config,
      registers: [registry],
      collect(this: Counter<T>) {
        // Totals, not deltas: start from nothing, and a detached collector's series disappear.
        this.reset();
        for (const collector of (this as CollectedCounter<T>).collectors) collector(this);
      },
    });
  }
}

/**
 * Attaches `collector` to the counter named `config.name` on `registry` (created if absent) and
 * returns a function that detaches it. The component counts in a plain number on its hot path
 * (prom-client's `inc` hashes the labels on every call) and reports the total at scrape time.
 * Throws `MetricConflictError` if the name is taken by anything but a collected counter with the
 * same label names.
 */
export function registerCounterCollector<T extends string>(
  registry: Registry,
  config: Omit<MetricConfig<CounterConfiguration<T>>, 'collect'>,
  collector: CounterCollector<T>,
): () => void {
  const counter = getOrCreate(
    registry,
    config,
    CollectedCounter,
    'collected counter',
    () => new CollectedCounter<T>(config, registry),
  ) as CollectedCounter<T>;
  counter.collectors.add(collector);
  return () => {
    counter.collectors.delete(collector);
  };
}
