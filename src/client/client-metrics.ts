/**
 * Request metrics hooks. The transport reports every attempt to a `ClientMetrics`; the prom-client
 * implementation registers `rest_client_requests_total{code,method,host}` and
 * `rest_client_request_duration_seconds{method,host}` on the registry the caller passes, never the
 * global one, so two clients (or managers) in one process keep separate series.
 */
import type { Registry } from 'prom-client';
import { Counter, Histogram } from '../core/prom-client-parts.js';

export interface RequestSample {
  readonly method: string;
  /** Host (and port) of the API server. */
  readonly host: string;
  /** HTTP status as text, or `<error>` when no response arrived (client-go's convention). */
  readonly code: string;
  readonly durationMs: number;
}

export interface ClientMetrics {
  observeRequest(sample: RequestSample): void;
}

/** Buckets as client-go's rest_client_request_duration_seconds, in seconds. */
export const REQUEST_DURATION_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** prom-client metrics on `registry`; reuses the series when another client already registered them. */
export function promClientMetrics(registry: Registry): ClientMetrics {
  const requests = getOrCreate(
    registry,
    'rest_client_requests_total',
    () =>
      new Counter({
        name: 'rest_client_requests_total',
        help: 'Number of HTTP requests to the Kubernetes API server, partitioned by status code, method, and host.',
        labelNames: ['code', 'method', 'host'],
        registers: [registry],
      }),
  );
  const latency = getOrCreate(
    registry,
    'rest_client_request_duration_seconds',
    () =>
      new Histogram({
        name: 'rest_client_request_duration_seconds',
        help: 'Request latency in seconds, partitioned by method and host.',
        labelNames: ['method', 'host'],
        buckets: [...REQUEST_DURATION_BUCKETS],
        registers: [registry],
      }),
  );
  return {
    observeRequest(s) {
      requests.inc({ code: s.code, method: s.method, host: s.host });
      latency.observe({ method: s.method, host: s.host }, s.durationMs / 1000);
    },
  };
}

function getOrCreate<M extends Counter<string> | Histogram<string>>(
  registry: Registry,
  name: string,
  create: () => M,
): M {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as M;
  return create();
}
