/**
 * metrics: one prom-client registry per manager (never the global one) and helpers that let
 * several components share it without double-registration errors.
 */
export { createMetricsRegistry } from './create-metrics-registry.js';
export type { MetricsRegistryOptions } from './create-metrics-registry.js';
export { getOrCreateCounter, getOrCreateGauge, getOrCreateHistogram } from './get-or-create-metric.js';
export type { MetricConfig } from './get-or-create-metric.js';
export { registerGaugeCollector } from './gauge-collector.js';
export type { GaugeCollector } from './gauge-collector.js';
export { MetricConflictError } from './metric-conflict-error.js';
