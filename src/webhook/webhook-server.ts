/**
 * The HTTPS server kube-apiserver calls: admission webhooks at their paths, conversion at
 * `/convert`. Serves a certificate from files and swaps it in when they change (new TLS
 * connections get the new one; no restart), bounds each request body and each handler's time,
 * and on stop lets in-flight reviews finish (bounded) before it closes the connections.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { listenOn } from '../core/http-server-lifecycle.js';
import type { Logger } from '../core/logger.js';
import { createSelfSignedCertificate } from '../manager/self-signed-certificate.js';
import { reviewAdmission } from './admission.js';
import { CertificateReloader, type ServingCertificate } from './certificate-reloader.js';
import { reviewConversion } from './conversion.js';
import type { AdmissionReview, ConversionReview } from './review-types.js';
import { webhookMetrics, type WebhookMetrics } from './webhook-metrics.js';
import { CONVERSION_PATH, type Webhooks } from './webhooks.js';

/** controller-runtime's webhook port. @defaultValue 9443 */
export const DEFAULT_WEBHOOK_PORT = 9443;
/**
 * A handler's time; below kube-apiserver's default 10 s call timeout, so the writer reads the
 * handler's denial rather than "context deadline exceeded". @defaultValue 9,000 ms
 */
export const DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS = 9_000;
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
  /** @defaultValue {@link DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS} */
  readonly requestTimeoutMs?: number;
  /** Bigger bodies get 413 unread. @defaultValue {@link DEFAULT_WEBHOOK_MAX_REQUEST_BYTES} */
  readonly maxRequestBytes?: number;
  /** How often the certificate files are re-read besides the file watch. @defaultValue DEFAULT_CERT_POLL_INTERVAL_MS */
  readonly certPollIntervalMs?: number;
  /** @defaultValue {@link DEFAULT_WEBHOOK_DRAIN_MS} */
  readonly drainMs?: number;
}

export function validateWebhookServerOptions(options: WebhookServerOptions): void {
  for (const [name, value] of [['port', options.port], ['requestTimeoutMs', options.requestTimeoutMs], ['maxRequestBytes', options.maxRequestBytes], ['certPollIntervalMs', options.certPollIntervalMs], ['drainMs', options.drainMs]] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new InvalidOptionError(`webhook.${name}`, 'must be a number >= 0');
  }
  if (Boolean(options.certFile) !== Boolean(options.keyFile)) throw new InvalidOptionError('webhook', 'certFile and keyFile go together');
  if (options.certDir && options.certFile) throw new InvalidOptionError('webhook', 'give certDir or certFile/keyFile, not both');
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

export class WebhookServer {
  private server: Server | undefined;
  private reloader: CertificateReloader | undefined;
  private selfSigned: ServingCertificate | undefined;
  private readonly metrics: WebhookMetrics;
  private readonly log: Logger;
  private readonly inFlight = new Set<AbortController>();
  private drained: (() => void) | undefined;
  private listening = false;

  constructor(
    private readonly webhooks: Webhooks,
    private readonly options: WebhookServerOptions,
    private readonly deps: WebhookServerDeps,
  ) {
    validateWebhookServerOptions(options);
    this.metrics = webhookMetrics(deps.registry);
    this.log = deps.logger.child({ component: 'webhook' });
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
      : this.options.certFile && this.options.keyFile ? { certFile: this.options.certFile, keyFile: this.options.keyFile } : undefined;
    let pair: ServingCertificate;
    if (files) {
      this.reloader = new CertificateReloader({
        ...files,
        clock: this.deps.clock,
        logger: this.log,
        ...(this.options.certPollIntervalMs !== undefined ? { pollIntervalMs: this.options.certPollIntervalMs } : {}),
        onChange: (next) => this.server?.setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' }),
      });
      pair = await this.reloader.start();
    } else {
      pair = this.selfSigned = createSelfSignedCertificate(this.options.selfSignedHosts ? { hosts: this.options.selfSignedHosts } : {});
    }
    const server = createServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }, (req, res) => void this.handle(req, res));
    // Slow senders are bounded too: a body must arrive within the request timeout.
    server.requestTimeout = (this.options.requestTimeoutMs ?? DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS) + 1_000;
    server.headersTimeout = Math.min(server.requestTimeout, 10_000);
    this.server = server;
    try {
      await listenOn(server, this.options.port ?? DEFAULT_WEBHOOK_PORT, this.options.host ?? this.deps.defaultHost);
    } catch (err) {
      this.reloader?.stop();
      throw err;
    }
    this.listening = true;
    this.log.info({ port: this.port, paths: [...this.webhooks.admissionWebhooks().map((w) => w.path), ...(this.webhooks.conversions().length ? [CONVERSION_PATH] : [])] }, 'webhook server listening');
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
    const control = new AbortController();
    this.inFlight.add(control);
    this.metrics.inFlight.inc({ webhook: path });
    let code = 500;
    try {
      if (req.method !== 'POST') return void (code = this.reply(res, 405, 'text/plain', 'POST a review\n'));
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return void (code = this.reply(res, 415, 'text/plain', 'content-type must be application/json\n'));
      let body: unknown;
      try {
        body = JSON.parse(await this.readBody(req));
      } catch (err) {
        if (err instanceof RequestTooLarge) {
          // The rest is never read: answer, then drop the connection it would arrive on.
          res.setHeader('connection', 'close');
          res.once('finish', () => req.destroy());
          code = this.reply(res, 413, 'text/plain', `request body exceeds ${err.limit} bytes\n`);
          return;
        }
        return void (code = this.reply(res, 400, 'text/plain', 'request body is not JSON\n'));
      }
      const timeoutMs = this.options.requestTimeoutMs ?? DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS;
      const deps = { clock: this.deps.clock, timeoutMs, signal: control.signal };
      if (conversion) {
        const review = body as Partial<ConversionReview> | null;
        if (review?.apiVersion !== 'apiextensions.k8s.io/v1' || review.kind !== 'ConversionReview' || typeof review.request?.uid !== 'string') {
          return void (code = this.reply(res, 400, 'text/plain', 'expected an apiextensions.k8s.io/v1 ConversionReview with a request\n'));
        }
        const response = await reviewConversion(this.webhooks, review.request, { ...deps, path });
        if (response.result.status === 'Failure') this.log.warn({ webhook: path, uid: response.uid, message: response.result.message }, 'conversion failed');
        code = this.reply(res, 200, 'application/json', JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response } satisfies ConversionReview));
      } else {
        const review = body as Partial<AdmissionReview> | null;
        if (review?.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview' || typeof review.request?.uid !== 'string') {
          return void (code = this.reply(res, 400, 'text/plain', 'expected an admission.k8s.io/v1 AdmissionReview with a request\n'));
        }
        const response = await reviewAdmission(admission!, review.request, deps);
        if (!response.allowed && (response.status?.code ?? 0) >= 500) this.log.warn({ webhook: path, uid: response.uid, message: response.status?.message }, 'webhook handler failed: request denied');
        code = this.reply(res, 200, 'application/json', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response } satisfies AdmissionReview));
      }
    } catch (err) {
      this.log.error({ err, webhook: path }, 'webhook request failed');
      if (!res.headersSent) code = this.reply(res, 500, 'text/plain', 'internal error\n');
    } finally {
      this.inFlight.delete(control);
      this.metrics.inFlight.dec({ webhook: path });
      this.metrics.requests.inc({ webhook: path, code: String(code) });
      this.metrics.latency.observe({ webhook: path }, (this.deps.clock.monotonicNow() - started) / 1000);
      if (this.inFlight.size === 0) this.drained?.();
    }
  }

  private reply(res: ServerResponse, status: number, contentType: string, body: string): number {
    if (!res.headersSent) res.writeHead(status, { 'content-type': contentType }).end(body);
    return status;
  }

  /** The body as text, or `RequestTooLarge` as soon as it passes the limit (a declared length over it is refused unread). */
  private readBody(req: IncomingMessage): Promise<string> {
    const limit = this.options.maxRequestBytes ?? DEFAULT_WEBHOOK_MAX_REQUEST_BYTES;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return Promise.reject(new RequestTooLarge(limit));
    return new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let total = 0;
      const onData = (chunk: Buffer): void => {
        total += chunk.length;
        if (total > limit) {
          req.off('data', onData);
          req.pause();
          reject(new RequestTooLarge(limit));
          return;
        }
        chunks.push(chunk);
      };
      req.on('data', onData);
      req.once('end', () => resolve(Buffer.concat(chunks, total).toString('utf8')));
      req.once('error', reject);
    });
  }
}
