/**
 * HTTP to one API server as one identity, over undici. Requests share one keep-alive pool; watches
 * get a separate dispatcher, so long-lived watch connections can never starve a GET. Adds the
 * credential, optional client-side rate limiting, retries where a second attempt cannot do harm
 * (see retry-policy.ts), metrics, and maps error answers to `ApiError`. Request headers (and so
 * credentials) never reach a log line or an error.
 */
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import { linkedAbortController, sleep } from '../core/abort.js';
import { ExponentialBackoff } from '../core/backoff.js';
import { resolveBackoff, type BackoffOptions, type ResolvedBackoff } from '../core/backoff-options.js';
import { AbortedError, InvalidOptionError, OperatorRuntimeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { silentLogger } from '../core/logger.js';
import { ApiError, type StatusBody } from './api-error.js';
import { readBodyLimited, readBodyPrefix, readListBody, ResponseTooLargeError, type BodyStream } from './body-limit.js';
import { ListDecodeError } from './list-decoder.js';
import { parseJson } from './lossless-json.js';
import type { ClientMetrics } from './client-metrics.js';
import type { ClientCertificate, Credential } from './credentials.js';
import type { ClusterConfig } from './kubeconfig.js';
import { TokenBucketRateLimiter } from './rate-limiter.js';
import { dispatcherRequest, Pool, proxyAgentClass } from './undici-parts.js';
import { IDEMPOTENT_METHODS, isRetryableNetworkError, isRetryableStatus, parseRetryAfter } from './retry-policy.js';
import { runtimeTracer, startClientSpan } from '../core/tracing.js';

export interface TransportOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Client-side rate limit. Off by default (the server's priority & fairness limits instead). */
  readonly rateLimit?: { readonly qps: number; readonly burst?: number };
  /**
   * Attempts in all for retryable failures, and the delays between them when the server gave no
   * Retry-After; a number `jitter` is ± that fraction. @defaultValue {@link DEFAULT_TRANSPORT_BACKOFF}
   */
  readonly backoff?: BackoffOptions;
  /** Cap on a server-requested Retry-After. @defaultValue {@link DEFAULT_MAX_RETRY_AFTER_MS} */
  readonly maxRetryAfterMs?: number;
  readonly metrics?: ClientMetrics;
  /** Keep-alive connections for ordinary requests. @defaultValue DEFAULT_CONNECTIONS */
  readonly connections?: number;
  /** Negotiate HTTP/2 (one multiplexed connection). @defaultValue false */
  readonly allowH2?: boolean;
  /** Time allowed for the response headers and for gaps in the body of a non-watch request, per attempt. @defaultValue DEFAULT_REQUEST_TIMEOUT_MS */
  readonly requestTimeoutMs?: number;
  /**
   * Time allowed for one call of a non-watch request in all — every attempt, the backoff and
   * Retry-After waits between them, the client-side rate limit and the credential — after which it
   * fails with `RequestTimeoutError`. Without it a server that accepts a request and never answers
   * holds the caller for `backoff.maxAttempts` × `requestTimeoutMs` (6 × 60 s). A caller's signal
   * still ends the call sooner. Watches are exempt (their body timeout and the informer's stall
   * guard bound them). `Infinity`: no overall deadline. @defaultValue {@link DEFAULT_REQUEST_DEADLINE_MS}
   */
  readonly requestDeadlineMs?: number;
  /** Idle keep-alive connections are closed after this. @defaultValue {@link DEFAULT_KEEP_ALIVE_TIMEOUT_MS} */
  readonly keepAliveTimeoutMs?: number;
  /** @defaultValue 'operator-runtime' */
  readonly userAgent?: string;
  /** Random source for retry jitter (tests). */
  readonly random?: () => number;
  /**
   * Largest response body read for an ordinary request (a list page included). Enforced while the
   * body streams in: beyond it the connection is closed and `ResponseTooLargeError` thrown (not
   * retried). Watches are bounded per line instead (`maxWatchLineBytes` on KubeClient).
   * @defaultValue DEFAULT_MAX_RESPONSE_BYTES
   */
  readonly maxResponseBytes?: number;
}

/** 6 attempts (5 retries), 100 ms doubling to at most 10 s, full jitter. */
export const DEFAULT_TRANSPORT_BACKOFF: ResolvedBackoff = Object.freeze({
  maxAttempts: 6,
  initialMs: 100,
  maxMs: 10_000,
  factor: 2,
  jitter: 'full',
});
/** @defaultValue 60_000 (1 min) */
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;
/** @defaultValue 30_000 */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 30_000;
export const DEFAULT_CONNECTIONS = 64;
/** The API server's own default for non-long-running requests. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/**
 * Twice the per-attempt timeout: a call whose first attempt ran out its whole 60 s still gets one
 * full retry (plus its backoff); a server that has not answered for two minutes is not going to,
 * and holding the caller longer only stalls whoever waits on it. @defaultValue 120,000 ms
 */
export const DEFAULT_REQUEST_DEADLINE_MS = 120_000;
/**
 * 32 MiB. Reading and parsing a body costs about 3.5–4 times its size in peak RSS (measured with
 * bench/hostile-response.bench.ts: a 30 MiB list added 100–118 MiB), so one answer at the limit
 * stays near 130 MiB, inside a 256 MiB container. A list page of 500 objects reaches it only with objects
 * of ~65 KiB each. Lists read through `KubeClient.listPage` are not held to it: they are decoded
 * item by item (`TransportRequest.list`) and bounded per item, so a `resourceVersion=0` list served
 * whole from the API server's watch cache (it ignores `limit`) is read however long it is.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** Error answers are read this far and no further: the status says what happened, a message needs a page at most. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** A watch body may be silent this much longer than its timeoutSeconds before undici gives up. */
export const WATCH_BODY_TIMEOUT_SLACK_MS = 30_000;

export interface TransportRequest {
  readonly method: string;
  /** Path and query, starting with `/` (the server's path prefix is added). */
  readonly path: string;
  readonly body?: string | Uint8Array;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  /** Whether an ambiguous failure may be retried. @defaultValue true for GET/HEAD/OPTIONS/PUT/DELETE */
  readonly idempotent?: boolean;
  /**
   * Read a successful answer as a list, item by item (list-decoder.ts), instead of as one text:
   * each item is decoded as soon as its bytes arrive and passed through `shape`, and the body is
   * bounded per item (`maxItemBytes`) rather than by `maxResponseBytes`, as a watch is per event.
   * A `resourceVersion=0` list is served whole by the watch cache; held as text it peaked at
   * several times its size.
   */
  readonly list?: ListReading;
  /** What the call does, for its trace span (`get Database`); the method and path name it otherwise. */
  readonly operation?: { readonly verb: string; readonly kind: string };
}

export interface ListReading {
  readonly maxItemBytes: number;
  readonly shape: (item: unknown) => unknown;
}

export interface TransportResponse<T = unknown> {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined if empty). */
  readonly body: T;
}

export interface StreamRequest extends TransportRequest {
  /** Longest silence allowed in the body; 0 disables (the caller's signal then bounds it). */
  readonly bodyTimeoutMs: number;
}

export interface StreamResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: AsyncIterable<Uint8Array>;
  /** Releases the connection; safe to call more than once. */
  destroy(): void;
}

/** The request never produced an HTTP answer (connection refused, reset, timeout, bad JSON). */
export class TransportError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TRANSPORT';
  readonly method: string;
  readonly path: string;
  constructor(method: string, path: string, message: string, options?: { cause?: unknown }) {
    super('ERR_TRANSPORT', `${method} ${path}: ${message}`, options);
    this.method = method;
    this.path = path;
  }
}

/**
 * A non-watch request got no final answer within its overall deadline (`requestDeadlineMs`),
 * across all its attempts. Names the method and path (the resource), never a header or credential.
 */
export class RequestTimeoutError extends OperatorRuntimeError {
  declare readonly code: 'ERR_REQUEST_TIMEOUT';
  readonly method: string;
  readonly path: string;
  readonly deadlineMs: number;
  /** Attempts started before the deadline. */
  readonly attempts: number;
  constructor(method: string, path: string, deadlineMs: number, attempts: number, options?: { cause?: unknown }) {
    super(
      'ERR_REQUEST_TIMEOUT',
      `${method} ${path}: no answer within the ${deadlineMs} ms request deadline (${attempts} attempt${attempts === 1 ? '' : 's'})`,
      options,
    );
    this.method = method;
    this.path = path;
    this.deadlineMs = deadlineMs;
    this.attempts = attempts;
  }
}

interface Dispatchers {
  readonly certKey: string;
  readonly requests: Dispatcher;
  readonly watches: Dispatcher;
}

export class Transport {
  readonly server: URL;
  readonly host: string;
  private readonly prefix: string;
  private readonly config: ClusterConfig;
  private readonly credential: Credential;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly limiter: TokenBucketRateLimiter | undefined;
  private readonly metrics: ClientMetrics | undefined;
  private readonly baseHeaders: Record<string, string>;
  private readonly backoff: ResolvedBackoff;
  private readonly requestTimeoutMs: number;
  private readonly requestDeadlineMs: number;
  private readonly maxResponseBytes: number;
  private readonly options: TransportOptions;
  private dispatchers: Dispatchers | undefined;
  private closed = false;
  /** Undefined without `@opentelemetry/api`; spans only inside a recording span (a reconcile's). */
  private readonly tracing = runtimeTracer();

  constructor(config: ClusterConfig, options: TransportOptions = {}) {
    this.config = config;
    this.options = options;
    this.server = new URL(config.server);
    this.host = this.server.host;
    this.prefix = this.server.pathname.replace(/\/+$/, '');
    this.credential = config.credential;
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
    this.limiter = options.rateLimit
      ? new TokenBucketRateLimiter({ ...options.rateLimit, clock: this.clock })
      : undefined;
    this.metrics = options.metrics;
    this.backoff = resolveBackoff(DEFAULT_TRANSPORT_BACKOFF, options.backoff);
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.requestDeadlineMs = options.requestDeadlineMs ?? DEFAULT_REQUEST_DEADLINE_MS;
    if (!(this.requestDeadlineMs > 0))
      throw new InvalidOptionError('requestDeadlineMs', 'must be > 0 (Infinity: no overall deadline)');
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (!(Number.isSafeInteger(this.maxResponseBytes) && this.maxResponseBytes > 0))
      throw new InvalidOptionError('maxResponseBytes', 'must be a positive integer');
    this.baseHeaders = { 'user-agent': options.userAgent ?? 'operator-runtime', accept: 'application/json' };
    const imp = config.impersonate;
    if (imp) {
      this.baseHeaders['impersonate-user'] = imp.user;
      if (imp.uid) this.baseHeaders['impersonate-uid'] = imp.uid;
      // undici sends an array value as repeated headers, which is what Impersonate-Group needs.
      if (imp.groups?.length)
        (this.baseHeaders as Record<string, string | string[]>)['impersonate-group'] = [...imp.groups];
    }
  }

  /**
   * Sends a request and parses its JSON answer; retries as retry-policy.ts allows, all within
   * `requestDeadlineMs` (then `RequestTimeoutError`); throws ApiError on >= 400.
   */
  async request<T = unknown>(req: TransportRequest): Promise<TransportResponse<T>> {
    const span = startClientSpan(this.tracing, spanName(req), {
      'http.request.method': req.method,
      'server.address': this.server.hostname,
      'url.path': req.path.split('?', 1)[0]!,
      ...(req.operation && { 'k8s.verb': req.operation.verb, 'k8s.kind': req.operation.kind }),
    });
    if (!span) return this.untracedRequest(req);
    const headers: Record<string, string> = { ...req.headers };
    span.inject(headers);
    const tally = { attempts: 0 };
    try {
      const res = await this.untracedRequest<T>({ ...req, headers }, tally);
      span.end({ status: res.status, retries: tally.attempts - 1 });
      return res;
    } catch (err) {
      span.end({ status: err instanceof ApiError ? err.status : undefined, retries: tally.attempts - 1, error: err });
      throw err;
    }
  }

  private async untracedRequest<T>(
    req: TransportRequest,
    tally: { attempts: number } = { attempts: 0 },
  ): Promise<TransportResponse<T>> {
    if (!Number.isFinite(this.requestDeadlineMs)) return this.requestWithRetries<T>(req, tally);
    if (req.signal?.aborted) throw new AbortedError('request aborted', { cause: req.signal.reason });
    // One signal for the whole call: the caller's, or the deadline's, whichever comes first.
    const deadline = new AbortController();
    const linked = linkedAbortController(req.signal, deadline.signal);
    const timer = this.clock.setTimer(this.requestDeadlineMs, () => deadline.abort());
    try {
      return await this.requestWithRetries<T>({ ...req, signal: linked.controller.signal }, tally);
    } catch (err) {
      if (deadline.signal.aborted && !req.signal?.aborted)
        throw new RequestTimeoutError(req.method, req.path, this.requestDeadlineMs, tally.attempts, { cause: err });
      throw err;
    } finally {
      timer.cancel();
      linked.dispose();
    }
  }

  private async requestWithRetries<T>(
    req: TransportRequest,
    tally: { attempts: number },
  ): Promise<TransportResponse<T>> {
    const idempotent = req.idempotent ?? IDEMPOTENT_METHODS.has(req.method);
    let backoff: ExponentialBackoff | undefined;
    let retries = 0;
    let authRetried = false;
    for (;;) {
      if (req.signal?.aborted) throw new AbortedError('request aborted', { cause: req.signal.reason });
      if (this.limiter) await this.limiter.acquire(req.signal);
      let res: TransportResponse<T>;
      try {
        tally.attempts++;
        res = await this.attempt<T>(req);
      } catch (err) {
        if (req.signal?.aborted) throw new AbortedError('request aborted', { cause: req.signal.reason });
        if (err instanceof ApiError) {
          if (err.status === 401 && !authRetried && this.credential.invalidate()) {
            authRetried = true;
            continue;
          }
          if (retries + 1 < this.backoff.maxAttempts && isRetryableStatus(err.status, req.method, idempotent)) {
            backoff ??= this.newBackoff();
            const serverAsked = err.retryAfterMs;
            const delayMs =
              serverAsked !== undefined
                ? Math.min(serverAsked, this.options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS)
                : backoff.next();
            retries++;
            this.logger.debug(
              { method: req.method, path: req.path, status: err.status, retry: retries, delayMs },
              'retrying API request',
            );
            await sleep(this.clock, delayMs, req.signal);
            continue;
          }
          throw err;
        }
        // Our own typed errors (closed client, credential failures) are final as they are.
        if (err instanceof OperatorRuntimeError) throw err;
        if (retries + 1 < this.backoff.maxAttempts && isRetryableNetworkError(err, req.method, idempotent)) {
          backoff ??= this.newBackoff();
          const delayMs = backoff.next();
          retries++;
          this.logger.debug(
            { method: req.method, path: req.path, error: errorCodeOf(err), retry: retries, delayMs },
            'retrying API request after network error',
          );
          await sleep(this.clock, delayMs, req.signal);
          continue;
        }
        throw this.networkError(req, err);
      }
      return res;
    }
  }

  /**
   * Opens a streaming request (a watch) on the watch dispatcher. Error answers are read and thrown
   * as ApiError. Not retried beyond one credential refresh after a 401: the watcher above owns
   * backoff and resumption.
   */
  async stream(req: StreamRequest): Promise<StreamResponse> {
    let authRetried = false;
    for (;;) {
      if (req.signal?.aborted) throw new AbortedError('request aborted', { cause: req.signal.reason });
      if (this.limiter) await this.limiter.acquire(req.signal);
      const { pool, headers } = await this.prepare(req, true);
      const start = this.clock.monotonicNow();
      let res: Dispatcher.ResponseData;
      try {
        res = await dispatcherRequest(pool, {
          origin: this.server.origin,
          path: this.prefix + req.path,
          method: req.method as 'GET',
          headers,
          signal: req.signal,
          headersTimeout: this.requestTimeoutMs,
          bodyTimeout: req.bodyTimeoutMs,
        });
      } catch (err) {
        this.observe(req.method, '<error>', start);
        if (req.signal?.aborted) throw new AbortedError('request aborted', { cause: req.signal.reason });
        throw this.networkError(req, err);
      }
      this.observe(req.method, String(res.statusCode), start);
      if (res.statusCode >= 400) {
        const err = await this.errorFromResponse(req, res.statusCode, res.headers, res.body);
        if (res.statusCode === 401 && !authRetried && this.credential.invalidate()) {
          authRetried = true;
          continue;
        }
        throw err;
      }
      const body = res.body;
      return { status: res.statusCode, headers: res.headers, body, destroy: () => body.destroy() };
    }
  }

  /** Prints without internals: the dispatchers hold TLS keys in their connect options. */
  [inspect.custom](): string {
    return `Transport { server: '${this.server.href}', credential: '${this.credential.kind}' }`;
  }

  /** Closes both dispatchers (in-flight requests finish first) and stops the credential's processes. */
  async close(): Promise<void> {
    this.closed = true;
    // An exec plugin still running would otherwise outlive the client (issue 24).
    this.credential.close?.();
    const d = this.dispatchers;
    this.dispatchers = undefined;
    if (d) await Promise.all([d.requests.close(), d.watches.destroy()]);
  }

  private async attempt<T>(req: TransportRequest): Promise<TransportResponse<T>> {
    const { pool, headers } = await this.prepare(req, false);
    const start = this.clock.monotonicNow();
    let status: number;
    let resHeaders: IncomingHttpHeaders;
    let text: string;
    try {
      const res = await dispatcherRequest(pool, {
        origin: this.server.origin,
        path: this.prefix + req.path,
        method: req.method as 'GET',
        headers,
        body: req.body,
        signal: req.signal,
        headersTimeout: this.requestTimeoutMs,
        bodyTimeout: this.requestTimeoutMs,
      });
      status = res.statusCode;
      resHeaders = res.headers;
      // Deprecation and validation warnings (fieldValidation=Warn) would otherwise go unseen.
      if (res.headers.warning)
        this.logger.warn({ method: req.method, path: req.path, warning: res.headers.warning }, 'API server warning');
      if (status >= 400) {
        this.observe(req.method, String(status), start);
        throw await this.errorFromResponse(req, status, res.headers, res.body);
      }
      if (req.list) {
        const body = await this.readList(req, req.list, status, res.body);
        this.observe(req.method, String(status), start);
        return { status, headers: resHeaders, body: body as T };
      }
      text = await readBodyLimited(
        res.body,
        this.maxResponseBytes,
        res.headers['content-length'],
        () => new ResponseTooLargeError(req.method, req.path, this.maxResponseBytes),
      );
    } catch (err) {
      if (!(err instanceof ApiError)) this.observe(req.method, '<error>', start);
      throw err;
    }
    this.observe(req.method, String(status), start);
    let body: unknown;
    if (text.length > 0) {
      try {
        // Not JSON.parse: it would round an int64 beyond 2^53 without a word (lossless-json.ts).
        body = parseJson(text);
      } catch {
        throw new TransportError(req.method, req.path, `response (HTTP ${status}) is not JSON`);
      }
    }
    return { status, headers: resHeaders, body: body as T };
  }

  private async readList(req: TransportRequest, list: ListReading, status: number, body: BodyStream): Promise<unknown> {
    try {
      return await readListBody(body, list.maxItemBytes, list.shape);
    } catch (err) {
      // Not a network failure: a body that is not a list is not retried, and its content is not quoted.
      // A SyntaxError's message quotes the text it choked on, which may be a Secret's: never passed on.
      if (err instanceof ListDecodeError || err instanceof SyntaxError)
        throw new TransportError(
          req.method,
          req.path,
          `response (HTTP ${status}) is not a JSON list: ${err instanceof ListDecodeError ? err.message : 'an item is not valid JSON'}`,
        );
      throw err;
    }
  }

  private async prepare(
    req: TransportRequest,
    watch: boolean,
  ): Promise<{ pool: Dispatcher; headers: Record<string, string> }> {
    if (this.closed) throw new TransportError(req.method, req.path, 'client is closed');
    const cred = await this.credential.get(req.signal);
    const d = this.dispatchersFor(cred.clientCert);
    const headers: Record<string, string> = { ...this.baseHeaders, ...req.headers };
    if (cred.authorization) headers.authorization = cred.authorization;
    if (req.contentType) headers['content-type'] = req.contentType;
    return { pool: watch ? d.watches : d.requests, headers };
  }

  /** One pair of dispatchers per client certificate: an exec plugin may hand out a new one. */
  private dispatchersFor(cert: ClientCertificate | undefined): Dispatchers {
    const certKey = cert ? createHash('sha256').update(cert.cert).digest('hex') : '';
    const current = this.dispatchers;
    if (current && current.certKey === certKey) return current;
    const tls = this.config.tls;
    const connect = {
      ca: tls.ca,
      cert: cert?.cert ?? tls.cert,
      key: cert?.key ?? tls.key,
      rejectUnauthorized: tls.rejectUnauthorized,
      servername: tls.servername,
    };
    const common = {
      allowH2: this.options.allowH2 ?? false,
      keepAliveTimeout: this.options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    };
    const proxy = this.config.proxyUrl;
    const make = (connections: number | null): Dispatcher =>
      proxy
        ? new (proxyAgentClass())({ ...common, uri: proxy, requestTls: connect, connections })
        : new Pool(this.server.origin, { ...common, connect, connections });
    const next: Dispatchers = {
      certKey,
      requests: make(this.options.connections ?? DEFAULT_CONNECTIONS),
      // Unlimited: every open watch holds a connection of its own.
      watches: make(null),
    };
    this.dispatchers = next;
    if (current) {
      // Let in-flight requests on the old certificate finish; open watches end on their own.
      void current.requests.close().catch(() => {});
      void current.watches.close().catch(() => {});
    }
    return next;
  }

  private async errorFromResponse(
    req: TransportRequest,
    status: number,
    headers: IncomingHttpHeaders,
    body: Dispatcher.ResponseData['body'],
  ): Promise<ApiError> {
    // Bounded: a hostile or broken server could otherwise make us buffer any amount of text.
    const { text } = await readBodyPrefix(body, MAX_ERROR_BODY_BYTES);
    const retryAfterMs = parseRetryAfter(headers['retry-after'], this.clock.now());
    let parsed: StatusBody | undefined;
    try {
      // Any JSON with kind Status: ApiError.fromStatus uses only its well-typed fields.
      const json: unknown = text ? JSON.parse(text) : undefined;
      if (json && typeof json === 'object' && (json as StatusBody).kind === 'Status') parsed = json as StatusBody;
    } catch {
      // Not JSON (a proxy's HTML page, say): fall through to the plain message.
    }
    const where = { method: req.method, path: req.path, retryAfterMs };
    if (parsed) return ApiError.fromStatus({ ...parsed, code: status }, status, where);
    return new ApiError({ status, message: text.slice(0, 300) || undefined, ...where });
  }

  private networkError(req: TransportRequest, err: unknown): TransportError {
    return new TransportError(req.method, req.path, `request failed (${errorCodeOf(err)})`, { cause: err });
  }

  private observe(method: string, code: string, start: number): void {
    this.metrics?.observeRequest({ method, host: this.host, code, durationMs: this.clock.monotonicNow() - start });
  }

  private newBackoff(): ExponentialBackoff {
    return new ExponentialBackoff({ ...this.backoff, random: this.options.random });
  }
}

/** `get Database` when the client said what the call does, else the method and the path without its query. */
function spanName(req: TransportRequest): string {
  return req.operation ? `${req.operation.verb} ${req.operation.kind}` : `${req.method} ${req.path.split('?', 1)[0]!}`;
}

function errorCodeOf(err: unknown): string {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return err instanceof Error ? err.name : 'unknown error';
}
