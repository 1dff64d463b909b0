import type { Registry } from 'prom-client';
import { Registry as RegistryClass } from '../core/prom-client-parts.js';
import { collectDefaultMetrics } from './default-metrics.js';

export interface MetricsRegistryOptions {
  /**
   * Also collect Node's process, heap, event-loop and GC metrics onto this registry (what the
   * manager's `/metrics` endpoint serves). Off by default so tests and libraries stay cheap.
   * @defaultValue false
   */
  readonly defaultMetrics?: boolean;
  /** Labels added to every series of this registry (for example `{ pod: 'a' }`). */
  readonly defaultLabels?: Readonly<Record<string, string>>;
}

/**
 * A fresh prom-client `Registry`. The runtime never touches prom-client's global registry: each
 * manager owns one of these, so two managers in one process export independent series.
 */
export function createMetricsRegistry(options: MetricsRegistryOptions = {}): Registry {
  const registry = new RegistryClass();
  if (options.defaultLabels) registry.setDefaultLabels({ ...options.defaultLabels });
  if (options.defaultMetrics) collectDefaultMetrics(registry);
  return registry;
}
