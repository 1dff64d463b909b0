/**
 * The HTTPS server kube-apiserver calls: admission webhooks at their paths, conversion at
 * `/convert`. Serves a certificate from files and swaps it in when they change (new TLS
 * connections get the new one; no restart), optionally accepts only clients with a certificate
 * from a given CA (the API server's), and admits a review only while it fits: a bounded number
 * in flight, a bounded body read within the review's time, and a bounded estimate of what
 * decoding it takes (one 7 MiB `[{},{},…]` decodes to ~240 MiB). Numbers beyond 2^53 are kept
 * byte for byte. On stop it lets in-flight reviews finish (bounded) before it closes the connections.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { listenOn } from '../core/http-server-lifecycle.js';
import type { Logger } from '../core/logger.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { createSelfSignedCertificate } from './self-signed-certificate.js';
import { admissionTimeoutMs, reviewAdmission } from './admission.js';
import { CertificateReloader, type ServingCertificate } from './certificate-reloader.js';
import { reviewConversion } from './conversion.js';
import { ReviewBudget } from './review-budget.js';
import { copiedBytesEstimate, decodedBytesEstimate, decodeJson, encodeJson, scanJson } from './review-json.js';
import type { AdmissionReview, ConversionReview } from './review-types.js';
import { webhookMetrics, type WebhookMetrics } from './webhook-metrics.js';
import { CONVERSION_PATH, type Webhooks } from './webhooks.js';

/** controller-runtime's webhook port. @defaultValue 9443 */
export const DEFAULT_WEBHOOK_PORT = 9443;
/**
 * A conversion review's time (a CRD's conversion webhook has no `timeoutSeconds`); an admission
 * review gets its webhook's `timeoutSeconds` less a margin (see `admissionTimeoutMs`), which is
 * this for the default 10 s. Below kube-apiserver's call timeout, so the writer reads the
 * handler's answer rather than "context deadline exceeded". @defaultValue 9,000 ms
 */
export const DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS = 9_000;
/**
 * TCP connections open at once (idle keep-alive ones included); more are closed as they arrive.
 * kube-apiserver keeps a few per replica. @defaultValue 256
 */
export const DEFAULT_WEBHOOK_MAX_CONNECTIONS = 256;
/** A TLS handshake must finish within this (Node's default is 120 s). */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Reviews served at once; more are answered 429. @defaultValue 32 */
export const DEFAULT_WEBHOOK_MAX_CONCURRENT_REVIEWS = 32;
/**
 * Bytes all reviews in flight may hold: their bodies, then the estimate of their decoded form.
 * Sized for the generated Deployment's 256Mi limit. @defaultValue 64 MiB
 */
export const DEFAULT_WEBHOOK_MAX_IN_FLIGHT_BYTES = 64 * 1024 * 1024;
/**
 * Nesting a review may have (kube-apiserver's decoder allows 10,000; real objects stay under a
 * hundred): deeper bodies get 400 before they are decoded, so nothing downstream can overflow
 * the stack. @defaultValue 1,000
 */
export const WEBHOOK_MAX_REVIEW_DEPTH = 1_000;
/** How often Node checks its header timeout (its default is 30 s). */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;
/**
 * A review carries the object and the old object (each up to etcd's 1.5 MiB) plus request
 * metadata. @defaultValue 7 MiB
 */
export const DEFAULT_WEBHOOK_MAX_REQUEST_BYTES = 7 * 1024 * 1024;
/** How long stopping waits for in-flight reviews. @defaultValue 10,000 ms */
export const DEFAULT_WEBHOOK_DRAIN_MS = 10_000;

export interface WebhookServerOptions {
  /** 0 picks a free port (see `port` after start). @defaultValue {@link DEFAULT_WEBHOOK_PORT} */
  readonly port?: number;
  /** @defaultValue the manager's `bindHost` */
  readonly host?: string;
  /** PEM certificate file, with `keyFile`; reloaded when it changes. */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** A directory holding `tls.crt` and `tls.key` (a mounted kubernetes.io/tls Secret), instead of `certFile`/`keyFile`. */
  readonly certDir?: string;
  /**
   * Without certificate files a self-signed certificate for these names is made at start (local
   * runs only: the API server must be given it as `caBundle`, see `certificatePem`).
   * @defaultValue ['localhost', '127.0.0.1', '::1']
   */
  readonly selfSignedHosts?: readonly string[];
  /**
   * The time of a conversion review, and a cap on an admission review's (which is otherwise its
   * webhook's `timeoutSeconds` less `DEFAULT_WEBHOOK_TIMEOUT_MARGIN_MS`). It runs from the
   * request's arrival: reading the body, decoding, the handler, the patch and encoding all count;
   * a body still arriving when it runs out is cut (408).
   * @defaultValue {@link DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS} for conversion; none for admission
   */
  readonly requestTimeoutMs?: number;
  /** Bigger bodies get 413 unread. @defaultValue {@link DEFAULT_WEBHOOK_MAX_REQUEST_BYTES} */
  readonly maxRequestBytes?: number;
  /** Connections open at once; beyond it, new ones are closed. @defaultValue {@link DEFAULT_WEBHOOK_MAX_CONNECTIONS} */
  readonly maxConnections?: number;
  /** Reviews in flight at once; beyond it, 429. @defaultValue {@link DEFAULT_WEBHOOK_MAX_CONCURRENT_REVIEWS} */
  readonly maxConcurrentReviews?: number;
  /**
   * Bytes the reviews in flight may hold (bodies, then their estimated decoded size); a review
   * that does not fit now gets 429, one that could never fit 413.
   * @defaultValue {@link DEFAULT_WEBHOOK_MAX_IN_FLIGHT_BYTES}
   */
  readonly maxInFlightBytes?: number;
  /**
   * PEM file of the CA that signs the API server's client certificate (controller-runtime's
   * `ClientCAName`). When set, a connection without a certificate from it is refused in the TLS
   * handshake. Read at start. The API server sends one only when configured to (its admission
   * `kubeConfigFile` for webhooks, docs/webhooks.md).
   */
  readonly clientCAFile?: string;
  /** How often the certificate files are re-read besides the file watch. @defaultValue DEFAULT_CERT_POLL_INTERVAL_MS */
  readonly certPollIntervalMs?: number;
  /** @defaultValue {@link DEFAULT_WEBHOOK_DRAIN_MS} */
  readonly drainMs?: number;
}

export function validateWebhookServerOptions(options: WebhookServerOptions): void {
  for (const [name, value] of [
    ['port', options.port],
    ['requestTimeoutMs', options.requestTimeoutMs],
    ['maxRequestBytes', options.maxRequestBytes],
    ['certPollIntervalMs', options.certPollIntervalMs],
    ['drainMs', options.drainMs],
  ] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0))
      throw new InvalidOptionError(`webhook.${name}`, 'must be a number >= 0');
  }
  for (const [name, value] of [
    ['maxConnections', options.maxConnections],
    ['maxConcurrentReviews', options.maxConcurrentReviews],
    ['maxInFlightBytes', options.maxInFlightBytes],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value >= 1))
      throw new InvalidOptionError(`webhook.${name}`, 'must be an integer >= 1');
  }
  if (Boolean(options.certFile) !== Boolean(options.keyFile))
    throw new InvalidOptionError('webhook', 'certFile and keyFile go together');
  if (options.certDir && options.certFile)
    throw new InvalidOptionError('webhook', 'give certDir or certFile/keyFile, not both');
}

export interface WebhookServerDeps {
  readonly registry: Registry;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Where to listen when `options.host` is not set. */
  readonly defaultHost: string;
}

class RequestTooLarge {
  constructor(readonly limit: number) {}
}

/** The body did not fit the in-flight budget as it arrived. */
class OverBudget {}

/** The body was still arriving when the review's time ran out. */
class BodyTimedOut {
  constructor(readonly timeoutMs: number) {}
}

/** A reply the server gives before any handler runs. */
interface EarlyReply {
  readonly status: number;
  readonly message: string;
  /** The rest of the body is unread: drop the connection after answering. */
  readonly drop?: boolean;
}

export class WebhookServer {
  private server: Server | undefined;
  private reloader: CertificateReloader | undefined;
  private selfSigned: ServingCertificate | undefined;
  private readonly metrics: WebhookMetrics;
  private readonly log: Logger;
  private readonly inFlight = new Set<AbortController>();
  private drained: (() => void) | undefined;
  private listening = false;
  private readonly budget: ReviewBudget;
  private clientCa: string | undefined;

  constructor(
    private readonly webhooks: Webhooks,
    private readonly options: WebhookServerOptions,
    private readonly deps: WebhookServerDeps,
  ) {
    validateWebhookServerOptions(options);
    this.metrics = webhookMetrics(deps.registry);
    this.log = deps.logger.child({ component: 'webhook' });
    this.budget = new ReviewBudget(
      options.maxConcurrentReviews ?? DEFAULT_WEBHOOK_MAX_CONCURRENT_REVIEWS,
      options.maxInFlightBytes ?? DEFAULT_WEBHOOK_MAX_IN_FLIGHT_BYTES,
    );
  }

  /** True from listening until stop begins: the manager's /readyz check. */
  get serving(): boolean {
    return this.listening;
  }

  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  /** The certificate now served (PEM): the `caBundle` for a self-signed one. */
  get certificatePem(): string | undefined {
    return this.reloader?.certificate?.cert ?? this.selfSigned?.cert;
  }

  /** Loads the certificate and listens; resolves once it accepts connections. */
  async listen(): Promise<void> {
    const files = this.options.certDir
      ? { certFile: join(this.options.certDir, 'tls.crt'), keyFile: join(this.options.certDir, 'tls.key') }
      : this.options.certFile && this.options.keyFile
        ? { certFile: this.options.certFile, keyFile: this.options.keyFile }
        : undefined;
    let pair: ServingCertificate;
    if (this.options.clientCAFile) {
      const ca = await readFile(this.options.clientCAFile, 'utf8');
      if (!ca.includes('-----BEGIN CERTIFICATE-----'))
        throw new InvalidOptionError('webhook.clientCAFile', `${this.options.clientCAFile} holds no PEM certificate`);
      this.clientCa = ca;
    }
    if (files) {
      this.reloader = new CertificateReloader({
        ...files,
        clock: this.deps.clock,
        logger: this.log,
        ...omitUndefined({ pollIntervalMs: this.options.certPollIntervalMs }),
        onChange: (next) =>
          this.server?.setSecureContext({
            cert: next.cert,
            key: next.key,
            minVersion: 'TLSv1.2',
            ...omitUndefined({ ca: this.clientCa }),
          }),
      });
      pair = await this.reloader.start();
    } else {
      pair = this.selfSigned = createSelfSignedCertificate(omitUndefined({ hosts: this.options.selfSignedHosts }));
    }
    const clientAuth = this.clientCa ? { ca: this.clientCa, requestCert: true, rejectUnauthorized: true } : {};
    const server = createServer(
      // Node checks its header timeout only this often (30 s by default): a slow sender would be held that long.
      {
        cert: pair.cert,
        key: pair.key,
        minVersion: 'TLSv1.2',
        ...clientAuth,
        connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      },
      (req, res) => void this.handle(req, res),
    );
    // A backstop only: each review cuts its own body at its own time (readBody).
    server.requestTimeout = 31_000;
    server.headersTimeout = 10_000;
    server.maxConnections = this.options.maxConnections ?? DEFAULT_WEBHOOK_MAX_CONNECTIONS;
    this.server = server;
    try {
      await listenOn(server, this.options.port ?? DEFAULT_WEBHOOK_PORT, this.options.host ?? this.deps.defaultHost);
    } catch (err) {
      this.reloader?.stop();
      throw err;
    }
    this.listening = true;
    this.log.info(
      {
        port: this.port,
        paths: [
          ...this.webhooks.admissionWebhooks().map((w) => w.path),
          ...(this.webhooks.conversions().length ? [CONVERSION_PATH] : []),
        ],
      },
      'webhook server listening',
    );
  }

  /**
   * Stops accepting, lets in-flight reviews finish for up to `drainMs`, then aborts what is left
   * (their handlers' signals) and closes every connection.
   */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.listening = false;
    this.reloader?.stop();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    if (this.inFlight.size > 0) {
      const drainMs = this.options.drainMs ?? DEFAULT_WEBHOOK_DRAIN_MS;
      await new Promise<void>((resolve) => {
        const timer = this.deps.clock.setTimer(drainMs, () => resolve(), { keepAlive: true });
        this.drained = () => {
          timer.cancel();
          resolve();
        };
      });
      this.drained = undefined;
      for (const c of this.inFlight) c.abort();
    }
    server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const conversion = path === CONVERSION_PATH && this.webhooks.conversions().length > 0;
    const admission = conversion ? undefined : this.webhooks.admissionAt(path);
    if (!conversion && !admission) return void this.reply(res, 404, 'text/plain', 'no webhook at this path\n');
    // Keep-alive connections are closed once this answer is sent when stopping.
    if (!this.listening) res.setHeader('connection', 'close');
    const started = this.deps.clock.monotonicNow();
    const timeoutMs = admission
      ? admissionTimeoutMs(admission, this.options.requestTimeoutMs)
      : (this.options.requestTimeoutMs ?? DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS);
    const control = new AbortController();
    let code = 500;
    let reserved = 0;
    let admitted = false;
    try {
      if (req.method !== 'POST') return void (code = this.reply(res, 405, 'text/plain', 'POST a review\n'));
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
        return void (code = this.reply(res, 415, 'text/plain', 'content-type must be application/json\n'));
      const limit = this.options.maxRequestBytes ?? DEFAULT_WEBHOOK_MAX_REQUEST_BYTES;
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > limit)
        return void (code = this.early(req, res, {
          status: 413,
          message: `request body exceeds ${limit} bytes`,
          drop: true,
        }));
      // Admitted on what the body declares (a streamed one grows its reservation as it arrives),
      // twice over: its chunks and the buffer they are joined into are both alive for a moment.
      reserved = Number.isFinite(declared) && declared > 0 ? 2 * declared : 0;
      if (!this.budget.tryAdmit(reserved)) {
        return void (code = this.early(req, res, {
          status: 429,
          message: 'too many reviews in flight; retry',
          drop: true,
        }));
      }
      admitted = true;
      this.inFlight.add(control);
      this.metrics.inFlight.inc({ webhook: path });
      let body: unknown;
      let lossless: boolean;
      try {
        const raw = await this.readBody(
          req,
          limit,
          started + timeoutMs - this.deps.clock.monotonicNow(),
          timeoutMs,
          (total) => {
            if (2 * total <= reserved) return true;
            if (!this.budget.tryGrow(2 * total - reserved, 2 * total)) return false;
            reserved = 2 * total;
            return true;
          },
        );
        const shape = scanJson(raw);
        if (shape.maxDepth > WEBHOOK_MAX_REVIEW_DEPTH)
          return void (code = this.early(req, res, {
            status: 400,
            message: `request body is nested deeper than ${WEBHOOK_MAX_REVIEW_DEPTH} levels`,
          }));
        // A mutator and a conversion work on a copy of the containers (strings are shared).
        const estimate =
          decodedBytesEstimate(raw.length, shape) + (admission?.type === 'validating' ? 0 : copiedBytesEstimate(shape));
        if (!this.budget.couldEverFit(estimate))
          return void (code = this.early(req, res, {
            status: 413,
            message: `request body would take about ${Math.ceil(estimate / 2 ** 20)} MiB to decode, over the server's budget`,
          }));
        if (!this.budget.tryGrow(estimate - reserved, estimate))
          return void (code = this.early(req, res, {
            status: 429,
            message: 'too many bytes of reviews in flight; retry',
          }));
        reserved = Math.max(reserved, estimate);
        ({ value: body, lossless } = decodeJson(raw.toString('utf8'), shape));
      } catch (err) {
        if (err instanceof RequestTooLarge)
          return void (code = this.early(req, res, {
            status: 413,
            message: `request body exceeds ${err.limit} bytes`,
            drop: true,
          }));
        if (err instanceof OverBudget)
          return void (code = this.early(req, res, {
            status: 429,
            message: 'too many bytes of reviews in flight; retry',
            drop: true,
          }));
        if (err instanceof BodyTimedOut)
          return void (code = this.early(req, res, {
            status: 408,
            message: `request body did not arrive within ${err.timeoutMs} ms`,
            drop: true,
          }));
        return void (code = this.reply(res, 400, 'text/plain', 'request body is not JSON\n'));
      }
      const deps = { clock: this.deps.clock, timeoutMs, signal: control.signal, startedAtMs: started };
      if (conversion) {
        const review = body as Partial<ConversionReview> | null;
        if (
          review?.apiVersion !== 'apiextensions.k8s.io/v1' ||
          review.kind !== 'ConversionReview' ||
          typeof review.request?.uid !== 'string'
        ) {
          return void (code = this.reply(
            res,
            400,
            'text/plain',
            'expected an apiextensions.k8s.io/v1 ConversionReview with a request\n',
          ));
        }
        const response = await reviewConversion(this.webhooks, review.request, { ...deps, path });
        if (response.result.status === 'Failure')
          this.log.warn({ webhook: path, uid: response.uid, message: response.result.message }, 'conversion failed');
        code = this.reply(
          res,
          200,
          'application/json',
          encodeJson(
            { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response } satisfies ConversionReview,
            lossless,
          ),
        );
      } else {
        const review = body as Partial<AdmissionReview> | null;
        if (
          review?.apiVersion !== 'admission.k8s.io/v1' ||
          review.kind !== 'AdmissionReview' ||
          typeof review.request?.uid !== 'string'
        ) {
          return void (code = this.reply(
            res,
            400,
            'text/plain',
            'expected an admission.k8s.io/v1 AdmissionReview with a request\n',
          ));
        }
        const response = await reviewAdmission(admission!, review.request, { ...deps, lossless });
        if (!response.allowed && (response.status?.code ?? 0) >= 500)
          this.log.warn(
            { webhook: path, uid: response.uid, message: response.status?.message },
            'webhook handler failed: request denied',
          );
        code = this.reply(
          res,
          200,
          'application/json',
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response,
          } satisfies AdmissionReview),
        );
      }
    } catch (err) {
      this.log.error({ err, webhook: path }, 'webhook request failed');
      if (!res.headersSent) code = this.reply(res, 500, 'text/plain', 'internal error\n');
    } finally {
      if (admitted) {
        this.budget.release(reserved);
        this.inFlight.delete(control);
        this.metrics.inFlight.dec({ webhook: path });
      }
      this.metrics.requests.inc({ webhook: path, code: String(code) });
      this.metrics.latency.observe({ webhook: path }, (this.deps.clock.monotonicNow() - started) / 1000);
      if (this.inFlight.size === 0) this.drained?.();
    }
  }

  /** Answers before any handler ran; with `drop`, the unread rest of the body is not waited for. */
  private early(req: IncomingMessage, res: ServerResponse, reply: EarlyReply): number {
    if (reply.drop) {
      res.setHeader('connection', 'close');
      res.once('finish', () => req.destroy());
    }
    if (reply.status === 429) res.setHeader('retry-after', '1');
    return this.reply(res, reply.status, 'text/plain', `${reply.message}\n`);
  }

  private reply(res: ServerResponse, status: number, contentType: string, body: string): number {
    if (!res.headersSent) res.writeHead(status, { 'content-type': contentType }).end(body);
    return status;
  }

  /**
   * The body, or a rejection as soon as it passes `limit` (`RequestTooLarge`), stops fitting the
   * budget (`OverBudget`, when `admit(total so far)` says no) or is still arriving after
   * `remainingMs` (`BodyTimedOut`: Node itself would only notice at its next connections check).
   */
  private readBody(
    req: IncomingMessage,
    limit: number,
    remainingMs: number,
    timeoutMs: number,
    admit: (total: number) => boolean,
  ): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let total = 0;
      const stop = (err: unknown): void => {
        timer.cancel();
        req.off('data', onData);
        req.pause();
        reject(err);
      };
      const timer = this.deps.clock.setTimer(Math.max(0, remainingMs), () => stop(new BodyTimedOut(timeoutMs)));
      const onData = (chunk: Buffer): void => {
        total += chunk.length;
        if (total > limit) return stop(new RequestTooLarge(limit));
        if (!admit(total)) return stop(new OverBudget());
        chunks.push(chunk);
      };
      req.on('data', onData);
      req.once('end', () => {
        timer.cancel();
        resolve(Buffer.concat(chunks, total));
      });
      req.once('error', (err) => {
        timer.cancel();
        reject(err);
      });
    });
  }
}
