/** controller-runtime's webhook metrics, with its names and labels (`webhook` is the path). */
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { getOrCreateCounter, getOrCreateGauge, getOrCreateHistogram } from '../metrics/get-or-create-metric.js';

export interface WebhookMetrics {
  readonly requests: Counter<'webhook' | 'code'>;
  readonly latency: Histogram<'webhook'>;
  readonly inFlight: Gauge<'webhook'>;
}

export function webhookMetrics(registry: Registry): WebhookMetrics {
  return {
    requests: getOrCreateCounter(registry, {
      name: 'controller_runtime_webhook_requests_total',
      help: 'Total number of admission requests by HTTP status code.',
      labelNames: ['webhook', 'code'],
    }),
    latency: getOrCreateHistogram(registry, {
      name: 'controller_runtime_webhook_latency_seconds',
      help: 'Histogram of the latency of processing admission requests',
      labelNames: ['webhook'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
    inFlight: getOrCreateGauge(registry, {
      name: 'controller_runtime_webhook_requests_in_flight',
      help: 'Current number of admission requests being served.',
      labelNames: ['webhook'],
    }),
  };
}
