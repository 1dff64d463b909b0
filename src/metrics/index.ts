/**
 * metrics: one prom-client registry per manager (never the global one), helpers that let several
 * components share it without double-registration errors, and scrape-time metrics whose hot path
 * is a plain number (prom-client's own `inc`/`observe` hash the labels on every call).
 */
export { createMetricsRegistry } from './create-metrics-registry.js';
export type { MetricsRegistryOptions } from './create-metrics-registry.js';
export { getOrCreateCounter, getOrCreateGauge, getOrCreateHistogram } from './get-or-create-metric.js';
export type { MetricConfig } from './get-or-create-metric.js';
export { registerGaugeCollector } from './gauge-collector.js';
export type { GaugeCollector } from './gauge-collector.js';
export { registerCounterCollector } from './counter-collector.js';
export type { CounterCollector } from './counter-collector.js';
export { registerHistogramCollector } from './histogram-collector.js';
export type { HistogramCollector } from './histogram-collector.js';
export { HistogramAccumulator } from './histogram-accumulator.js';
export { MetricConflictError } from './metric-conflict-error.js';
