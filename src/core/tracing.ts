/**
 * OpenTelemetry, optional. `@opentelemetry/api` is an optional peer: loaded once, synchronously,
 * the first time a controller, client or HTTP client asks for it; when it is not installed every
 * tracing path is one `undefined` check. With the API installed but no SDK registered, spans are
 * the API's no-op ones; with an SDK, the application decides where they go (the library never
 * registers a provider, a context manager or a propagator).
 */
import { createRequire } from 'node:module';
import type * as OpenTelemetryApi from '@opentelemetry/api';

export type OtelApi = typeof OpenTelemetryApi;
export type OtelSpan = OpenTelemetryApi.Span;
export type OtelSpanContext = OpenTelemetryApi.SpanContext;
export type OtelTracer = OpenTelemetryApi.Tracer;
export type OtelAttributes = OpenTelemetryApi.Attributes;

/** The instrumentation scope of every span the runtime makes. */
export const TRACER_NAME = 'operator-runtime';

let loaded: OtelApi | null | undefined;

/**
 * The OpenTelemetry API, or undefined when it is not installed. Loaded once: a failed load is not
 * retried (a package does not appear in a running process). `require`, not `import()`: a controller
 * decides in its constructor, and the API's CommonJS and ESM builds share one global registration.
 */
export function openTelemetryApi(): OtelApi | undefined {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
    } catch {
      // Not installed (or not loadable): tracing is off, nothing else changes.
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/** The runtime's tracer, or undefined without the API. A proxy: an SDK registered later is still used. */
export function runtimeTracer(): { readonly api: OtelApi; readonly tracer: OtelTracer } | undefined {
  const api = openTelemetryApi();
  return api && { api, tracer: api.trace.getTracer(TRACER_NAME) };
}

/**
 * A client span for one outgoing call, only inside a recording span (a reconcile's, or the
 * application's own): a list or watch the cache makes on its own is not a trace of its own.
 * Returns undefined when there is nothing to trace, so the caller's fast path stays as it was.
 */
export function startClientSpan(
  tracing: { readonly api: OtelApi; readonly tracer: OtelTracer } | undefined,
  name: string,
  attributes: OtelAttributes,
): ClientSpan | undefined {
  if (!tracing) return undefined;
  const { api, tracer } = tracing;
  const parent = api.context.active();
  if (!api.trace.getSpan(parent)?.isRecording()) return undefined;
  const span = tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes }, parent);
  return new ClientSpan(api, span, api.trace.setSpan(parent, span));
}

/** A started client span: headers to propagate its context, then its end. */
export class ClientSpan {
  constructor(
    private readonly api: OtelApi,
    readonly span: OtelSpan,
    private readonly context: OpenTelemetryApi.Context,
  ) {}

  /** Adds the W3C trace context (`traceparent`, `tracestate`) of this span to `headers`, per the registered propagator. */
  inject(headers: Record<string, string>): void {
    this.api.propagation.inject(this.context, headers);
  }

  /** Ends the span with its HTTP status (an error status from 400 up, as for any client span, or when `error` is given). */
  end(outcome: { readonly status?: number; readonly retries: number; readonly error?: unknown }): void {
    const { span, api } = this;
    if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
    if (outcome.retries > 0) span.setAttribute('http.request.resend_count', outcome.retries);
    if (outcome.error !== undefined) {
      recordError(span, outcome.error);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorMessage(outcome.error) });
    } else if (outcome.status !== undefined && outcome.status >= 400) {
      span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    span.end();
  }
}

/** Records a thrown value on a span as an exception event (its type and message; never its cause's data). */
export function recordError(span: OtelSpan, error: unknown): void {
  if (!(error instanceof Error)) return span.recordException({ name: 'thrown value', message: String(error) });
  const code = (error as { code?: unknown }).code;
  span.recordException({ name: error.name, message: error.message, ...(typeof code === 'string' ? { code } : {}) });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
