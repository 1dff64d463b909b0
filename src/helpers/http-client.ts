/**
 * Resilient HTTP for calls a reconciler makes to services outside Kubernetes. Every
 * attempt has its own timeout; the whole call is bounded by the caller's AbortSignal (the
 * reconcile's), which also cuts any backoff sleep short. Network errors, 429 and 5xx are retried
 * with exponential backoff and full jitter, or after the server's Retry-After. POST and PATCH are
 * retried only when the caller says a repeat is harmless (an idempotency key), or when the request
 * cannot have been processed (connection never established, or 429). When it gives up,
 * it throws `HttpRequestError` listing every attempt, so the workqueue's backoff takes over.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Registry } from 'prom-client';
import type { Dispatcher } from 'undici';
import { IDEMPOTENT_METHODS, parseRetryAfter } from '../client/retry-policy.js';
import { Agent, requestUrl } from '../client/undici-parts.js';
import { sleep } from '../core/abort.js';
import { ExponentialBackoff } from '../core/backoff.js';
import { resolveBackoff, type BackoffOptions, type ResolvedBackoff } from '../core/backoff-options.js';
import { realClock, type Clock, type TimerHandle } from '../core/clock.js';
import { InvalidOptionError, OperatorRuntimeError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { runtimeTracer, startClientSpan } from '../core/tracing.js';
import { getOrCreateCounter, getOrCreateHistogram } from '../metrics/get-or-create-metric.js';

export interface HttpClientOptions {
  /**
   * Attempts in all and the delays between them (a server's Retry-After replaces a delay); a number
   * `jitter` is ± that fraction of the delay. @defaultValue {@link DEFAULT_HTTP_BACKOFF}
   */
  readonly backoff?: BackoffOptions;
  /** Time allowed for one attempt, response body included. @defaultValue DEFAULT_HTTP_ATTEMPT_TIMEOUT_MS */
  readonly attemptTimeoutMs?: number;
  /**
   * A server asking to wait longer than this (Retry-After) ends the call at once: waiting would
   * hold the worker, and the workqueue can wait instead. @defaultValue DEFAULT_HTTP_MAX_RETRY_AFTER_MS
   */
  readonly maxRetryAfterMs?: number;
  /** @defaultValue realClock (awaited waits use keep-alive timers) */
  readonly clock?: Clock;
  /** Where the request metrics go; none without one. */
  readonly registry?: Registry;
  /** Random source in [0, 1) for jitter (tests). @defaultValue Math.random */
  readonly random?: () => number;
  /** undici dispatcher (a proxy agent, a MockAgent in tests). @defaultValue a keep-alive Agent owned by the client */
  readonly dispatcher?: Dispatcher;
  /** @defaultValue silentLogger */
  readonly logger?: Logger;
  /** Header that carries `idempotencyKey`. @defaultValue 'idempotency-key' */
  readonly idempotencyKeyHeader?: string;
  /** A larger response body ends the call (the body is buffered; a worker must not OOM the process). @defaultValue DEFAULT_HTTP_MAX_RESPONSE_BYTES */
  readonly maxResponseBytes?: number;
  /**
   * The values the metrics' `host` label may take, keeping its series bounded when URLs come from
   * untrusted input (a tenant's custom resource): a host (`URL.host`, e.g. `backup.svc:8080`) listed
   * here is its own label value, any other is counted as `other`. Without it, the first
   * {@link DEFAULT_HTTP_MAX_METRIC_HOSTS} distinct hosts are labelled and later ones are `other`.
   */
  readonly metricHosts?: readonly string[];
}

/** 4 attempts (3 retries), 100 ms doubling to at most 5 s, full jitter. */
export const DEFAULT_HTTP_BACKOFF: ResolvedBackoff = Object.freeze({
  maxAttempts: 4,
  initialMs: 100,
  maxMs: 5_000,
  factor: 2,
  jitter: 'full',
});
export const DEFAULT_HTTP_ATTEMPT_TIMEOUT_MS = 10_000;
export const DEFAULT_HTTP_MAX_RETRY_AFTER_MS = 30_000;
export const DEFAULT_HTTP_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** Distinct `host` label values when `metricHosts` is not given; beyond them hosts are `other`. @defaultValue 16 */
export const DEFAULT_HTTP_MAX_METRIC_HOSTS = 16;
/** The `host` label of every host outside the bounded set. */
export const OTHER_HOST_LABEL = 'other';

export interface HttpRequestOptions {
  /** @defaultValue 'GET' */
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Buffered, so it can be sent again. */
  readonly body?: string | Uint8Array;
  /** The overall deadline: pass the reconcile's signal. */
  readonly signal?: AbortSignal;
  /**
   * Sent as the idempotency-key header; makes a POST or PATCH retryable, since a server that
   * honours the key applies the request at most once.
   */
  readonly idempotencyKey?: string;
  /** Retry a POST or PATCH without a key: only when repeating it is harmless. @defaultValue false */
  readonly retryUnsafe?: boolean;
}

/** One attempt: its HTTP status or the error code that ended it, and how long it took. */
export interface HttpAttempt {
  readonly attempt: number;
  readonly status?: number;
  /** e.g. `ECONNRESET`, `UND_ERR_SOCKET`, `ERR_ATTEMPT_TIMEOUT`. */
  readonly error?: string;
  readonly durationMs: number;
  /** The wait before the next attempt, when there was one. */
  readonly delayMs?: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** Every attempt, this one last. */
  readonly attempts: readonly HttpAttempt[];
  text(): string;
  json<T = unknown>(): T;
}

export type HttpFailureReason =
  /** The last allowed attempt failed too. */
  | 'retriesExhausted'
  /** The caller's signal aborted (the reconcile's deadline). */
  | 'aborted'
  /** A failure that may not be retried: a POST/PATCH without idempotency key after it may have reached the server. */
  | 'notRetryable'
  /** The server asked to wait longer than `maxRetryAfterMs`. */
  | 'retryAfterTooLong'
  /** The response body exceeded `maxResponseBytes`. */
  | 'responseTooLarge'
  /** The URL could not be parsed (nothing was sent; the input is not repeated, it may hold a password). */
  | 'invalidUrl';

/**
 * A call that did not produce a usable answer. Carries every attempt's outcome; never the request
 * headers, body or query string, which may hold credentials.
 */
export class HttpRequestError extends OperatorRuntimeError {
  declare readonly code: 'ERR_HTTP_REQUEST';
  readonly reason: HttpFailureReason;
  readonly method: string;
  /** Origin and path only. */
  readonly url: string;
  readonly attempts: readonly HttpAttempt[];
  /** Status of the last attempt, when it got one. */
  readonly status: number | undefined;

  constructor(init: {
    reason: HttpFailureReason;
    method: string;
    url: string;
    attempts: readonly HttpAttempt[];
    cause?: unknown;
  }) {
    const summary = init.attempts.map((a) => a.error ?? String(a.status)).join(', ');
    super(
      'ERR_HTTP_REQUEST',
      `${init.method} ${init.url} failed (${init.reason}) after ${init.attempts.length} attempt(s): ${summary || 'none'}`,
      {
        cause: init.cause,
      },
    );
    this.reason = init.reason;
    this.method = init.method;
    this.url = init.url;
    this.attempts = init.attempts;
    this.status = init.attempts.at(-1)?.status;
  }
}

export interface HttpClient {
  /**
   * Sends a request, retrying as described above. Resolves with the response for any status that
   * is not retried (2xx, 3xx, 4xx but 429); throws `HttpRequestError` otherwise.
   */
  request(url: string | URL, options?: HttpRequestOptions): Promise<HttpResponse>;
  /** Closes the client's own connection pool (not a dispatcher passed in). */
  close(): Promise<void>;
}

export const HTTP_REQUESTS_METRIC = 'operator_http_client_requests_total';
export const HTTP_DURATION_METRIC = 'operator_http_client_request_duration_seconds';
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** Failures that happen before anything was written: safe to resend whatever the method. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** Programmer errors: retrying cannot help. */
const FATAL_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_INVALID_ARG',
  'ERR_INVALID_URL',
  'UND_ERR_NOT_SUPPORTED',
  'ERR_INVALID_ARG_TYPE',
]);
const ATTEMPT_TIMEOUT = 'ERR_ATTEMPT_TIMEOUT';

/** Statuses worth another attempt: the server is overloaded or failing, not refusing the request. */
export function isRetryableHttpStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const backoffOptions = resolveBackoff(DEFAULT_HTTP_BACKOFF, options.backoff);
  const attemptTimeoutMs = options.attemptTimeoutMs ?? DEFAULT_HTTP_ATTEMPT_TIMEOUT_MS;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_HTTP_MAX_RETRY_AFTER_MS;
  if (!(attemptTimeoutMs > 0)) throw new InvalidOptionError('attemptTimeoutMs', 'must be > 0');
  if (!(maxRetryAfterMs >= 0)) throw new InvalidOptionError('maxRetryAfterMs', 'must be >= 0');
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_HTTP_MAX_RESPONSE_BYTES;
  if (!(maxResponseBytes >= 0)) throw new InvalidOptionError('maxResponseBytes', 'must be >= 0');
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? silentLogger;
  const keyHeader = (options.idempotencyKeyHeader ?? 'idempotency-key').toLowerCase();
  const fixedHosts = options.metricHosts ? new Set(options.metricHosts.map((h) => h.toLowerCase())) : undefined;
  const seenHosts = new Set<string>();
  /** The bounded `host` label: whoever writes the URL must not be able to mint new series. */
  const hostLabel = (host: string): string => {
    if (fixedHosts) return fixedHosts.has(host) ? host : OTHER_HOST_LABEL;
    if (seenHosts.has(host)) return host;
    if (seenHosts.size >= DEFAULT_HTTP_MAX_METRIC_HOSTS) return OTHER_HOST_LABEL;
    seenHosts.add(host);
    return host;
  };
  const ownDispatcher = options.dispatcher ? undefined : new Agent({ keepAliveTimeout: 30_000 });
  const dispatcher = options.dispatcher ?? ownDispatcher!;
  const metrics = options.registry
    ? {
        requests: getOrCreateCounter(options.registry, {
          name: HTTP_REQUESTS_METRIC,
          help: 'HTTP request attempts to services outside Kubernetes, by host, method and status code (<error> when no response).',
          labelNames: ['host', 'method', 'code'],
        }),
        duration: getOrCreateHistogram(options.registry, {
          name: HTTP_DURATION_METRIC,
          help: 'Duration of HTTP request attempts to services outside Kubernetes, in seconds, by host and method.',
          labelNames: ['host', 'method'],
          buckets: DURATION_BUCKETS,
        }),
      }
    : undefined;

  // Undefined without `@opentelemetry/api`; a span per call only inside a recording span (a reconcile's).
  const tracing = runtimeTracer();

  async function send(input: string | URL, opts: HttpRequestOptions = {}): Promise<HttpResponse> {
    const method = (opts.method ?? 'GET').toUpperCase();
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      // Node's ERR_INVALID_URL carries the input (password included) in `input`: never pass it on.
      throw new HttpRequestError({ reason: 'invalidUrl', method, url: '<invalid URL>', attempts: [] });
    }
    const where = `${url.origin}${url.pathname}`;
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.idempotencyKey !== undefined) headers[keyHeader] = opts.idempotencyKey;
    const span = startClientSpan(tracing, method, {
      'http.request.method': method,
      'server.address': url.hostname,
      'url.full': where,
    });
    if (!span) return sendAttempts(url, method, where, headers, opts);
    // The external service continues the trace from this call (W3C traceparent/tracestate).
    span.inject(headers);
    try {
      const res = await sendAttempts(url, method, where, headers, opts);
      span.end({ status: res.status, retries: res.attempts.length - 1 });
      return res;
    } catch (err) {
      const attempts = err instanceof HttpRequestError ? err.attempts : [];
      span.end({ status: attempts.at(-1)?.status, retries: Math.max(0, attempts.length - 1), error: err });
      throw err;
    }
  }

  async function sendAttempts(
    url: URL,
    method: string,
    where: string,
    headers: Record<string, string>,
    opts: HttpRequestOptions,
  ): Promise<HttpResponse> {
    const host = hostLabel(url.host);
    const safeToRepeat =
      IDEMPOTENT_METHODS.has(method) || opts.idempotencyKey !== undefined || opts.retryUnsafe === true;
    const backoff = new ExponentialBackoff({ ...backoffOptions, random: options.random });
    const attempts: HttpAttempt[] = [];
    const fail = (reason: HttpFailureReason, cause?: unknown): HttpRequestError =>
      new HttpRequestError({ reason, method, url: where, attempts: [...attempts], cause });

    for (let attempt = 1; ; attempt++) {
      if (opts.signal?.aborted) throw fail('aborted', opts.signal.reason);
      const outcome = await attemptOnce(url, method, headers, opts);
      const record: { attempt: number; status?: number; error?: string; durationMs: number; delayMs?: number } = {
        attempt,
        durationMs: outcome.durationMs,
      };
      if (outcome.kind === 'response') record.status = outcome.status;
      else record.error = outcome.code;
      attempts.push(record);
      metrics?.requests.inc({ host, method, code: outcome.kind === 'response' ? String(outcome.status) : '<error>' });
      metrics?.duration.observe({ host, method }, outcome.durationMs / 1000);

      if (outcome.kind === 'response' && !isRetryableHttpStatus(outcome.status)) {
        const body = outcome.body;
        return {
          status: outcome.status,
          headers: outcome.headers,
          body,
          attempts: [...attempts],
          text: () => body.toString('utf8'),
          json: <T>() => JSON.parse(body.toString('utf8')) as T,
        };
      }
      if (outcome.kind === 'aborted') throw fail('aborted', opts.signal?.reason);
      if (outcome.kind === 'tooLarge') throw fail('responseTooLarge');
      if (outcome.kind === 'fatal') throw fail('notRetryable', outcome.cause);
      // A POST that may have reached the server must not be sent twice, unless the caller says so.
      const mayRepeat =
        safeToRepeat ||
        (outcome.kind === 'error' && NOT_SENT_CODES.has(outcome.code)) ||
        (outcome.kind === 'response' && outcome.status === 429);
      if (!mayRepeat) throw fail('notRetryable', outcome.kind === 'error' ? outcome.cause : undefined);
      if (attempt >= backoffOptions.maxAttempts)
        throw fail('retriesExhausted', outcome.kind === 'error' ? outcome.cause : undefined);

      let delayMs = backoff.next();
      if (outcome.kind === 'response') {
        const asked = parseRetryAfter(outcome.headers['retry-after'], clock.now());
        if (asked !== undefined) {
          if (asked > maxRetryAfterMs) throw fail('retryAfterTooLong');
          delayMs = asked;
        }
      }
      record.delayMs = delayMs;
      logger.debug(
        { method, url: where, attempt, status: record.status, error: record.error, delayMs },
        'retrying HTTP request',
      );
      try {
        await sleep(clock, delayMs, opts.signal);
      } catch {
        throw fail('aborted', opts.signal?.reason);
      }
    }
  }

  type Outcome =
    | { kind: 'response'; status: number; headers: IncomingHttpHeaders; body: Buffer; durationMs: number }
    | { kind: 'error'; code: string; cause: unknown; durationMs: number }
    | { kind: 'fatal'; code: string; cause: unknown; durationMs: number }
    | { kind: 'aborted'; code: string; durationMs: number }
    | { kind: 'tooLarge'; code: string; durationMs: number };

  async function attemptOnce(
    url: URL,
    method: string,
    headers: Record<string, string>,
    opts: HttpRequestOptions,
  ): Promise<Outcome> {
    const start = clock.monotonicNow();
    const elapsed = (): number => clock.monotonicNow() - start;
    const controller = new AbortController();
    let timedOut = false;
    const onAbort = (): void => controller.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer: TimerHandle = clock.setTimer(attemptTimeoutMs, () => {
      timedOut = true;
      controller.abort(new Error('attempt timed out'));
    });
    try {
      const res = await requestUrl(url, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body: opts.body,
        signal: controller.signal,
        dispatcher,
      });
      if (isRetryableHttpStatus(res.statusCode)) {
        // The body of an error answer is not needed; release the connection.
        await res.body.dump().catch(() => {});
        return {
          kind: 'response',
          status: res.statusCode,
          headers: res.headers,
          body: Buffer.alloc(0),
          durationMs: elapsed(),
        };
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > maxResponseBytes) {
          res.body.destroy();
          return { kind: 'tooLarge', code: 'ERR_RESPONSE_TOO_LARGE', durationMs: elapsed() };
        }
        chunks.push(chunk as Buffer);
      }
      return {
        kind: 'response',
        status: res.statusCode,
        headers: res.headers,
        body: Buffer.concat(chunks),
        durationMs: elapsed(),
      };
    } catch (err) {
      if (opts.signal?.aborted) return { kind: 'aborted', code: 'ERR_ABORTED', durationMs: elapsed() };
      if (timedOut) return { kind: 'error', code: ATTEMPT_TIMEOUT, cause: err, durationMs: elapsed() };
      const code = errorCode(err);
      if (FATAL_CODES.has(code)) return { kind: 'fatal', code, cause: err, durationMs: elapsed() };
      return { kind: 'error', code, cause: err, durationMs: elapsed() };
    } finally {
      timer.cancel();
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  return {
    request: send,
    async close() {
      await ownDispatcher?.close();
    },
  };
}

function errorCode(err: unknown): string {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return err instanceof Error ? err.name : 'UNKNOWN';
}
