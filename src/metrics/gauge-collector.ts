import { Gauge } from '../core/prom-client-parts.js';
import type { GaugeConfiguration, Registry } from 'prom-client';
import { getOrCreate } from './get-or-create-metric.js';
import type { MetricConfig } from './get-or-create-metric.js';

/** Sets the series it owns on `gauge`; runs at every scrape. */
export type GaugeCollector<T extends string> = (gauge: Gauge<T>) => void;

/**
 * A gauge whose values are computed at scrape time by every collector attached to it. A gauge's
 * own `collect` callback is fixed when it is created, so components that share one gauge (two
 * workqueues on one registry) attach here instead.
 */
class CollectedGauge<T extends string> extends Gauge<T> {
  readonly collectors = new Set<GaugeCollector<T>>();

  constructor(config: MetricConfig<GaugeConfiguration<T>>, registry: Registry) {
    super({
      ...config,
      registers: [registry],
      collect(this: Gauge<T>) {
        // Start from nothing so a detached collector's series disappear instead of going stale.
        this.reset();
        for (const collector of (this as CollectedGauge<T>).collectors) collector(this);
      },
    });
  }
}

/**
 * Attaches `collector` to the gauge named `config.name` on `registry` (created if absent) and
 * returns a function that detaches it (its series vanish at the next scrape). Values are computed only when the registry is scraped, so
 * the component's hot path pays nothing. Throws `MetricConflictError` if the name is taken by a
 * metric that is not a collected gauge with the same label names.
 */
export function registerGaugeCollector<T extends string>(
  registry: Registry,
  config: Omit<MetricConfig<GaugeConfiguration<T>>, 'collect'>,
  collector: GaugeCollector<T>,
): () => void {
  const gauge = getOrCreate(
    registry,
    config,
    CollectedGauge,
    'collected gauge',
    () => new CollectedGauge<T>(config, registry),
  ) as CollectedGauge<T>;
  gauge.collectors.add(collector);
  return () => {
    gauge.collectors.delete(collector);
  };
}
