/**
 * A fault-injecting HTTPS proxy in front of kube-apiserver, for an operator's own connection: it
 * terminates TLS with its own self-signed certificate (openssl CLI), forwards every request with
 * undici (watch responses streamed chunk by chunk) and, while a fault rule matches, answers with
 * an injected status (429 with Retry-After, 500, …), drops the connection without an answer,
 * delays the request, cuts a watch mid-stream (between events, or inside one), or rewrites a JSON
 * answer (a server that lies about its version, or one whose lists are huge). Clients use
 * `proxy.kubeconfig`.
 *
 * Bearer-token credentials pass through unchanged; client certificates do not (TLS ends here), so
 * use a token kubeconfig (TestEnv's admin one is). Upgrade requests (exec, port-forward) are not
 * proxied.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse, IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { stringify as toYaml } from 'yaml';
import { OperatorRuntimeError } from '../../core/errors.js';
import { TestEnvUnavailableError } from '../control-plane/existing-cluster.js';
import type { KubeconfigObject } from '../control-plane/test-env.js';

const run = promisify(execFile);

/** Which requests a rule applies to; every given field must match. */
export interface FaultMatch {
  /** HTTP method, upper case. */
  readonly method?: string;
  /** Tested against the path with its query string. */
  readonly path?: RegExp;
  /** Only watch requests (`watch=true`), or only non-watch requests. */
  readonly watch?: boolean;
}

export interface FaultRuleBase {
  readonly match?: FaultMatch;
  /** Share of matching requests that get the fault. @defaultValue 1 */
  readonly fraction?: number;
  /** The rule expires this long after `inject`. @defaultValue forever (until removed) */
  readonly durationMs?: number;
  /** The rule expires after injecting this many faults. @defaultValue unlimited */
  readonly count?: number;
}

/** Answer with `status` (a Kubernetes Status body) instead of forwarding. */
export interface StatusFault extends FaultRuleBase {
  readonly kind: 'status';
  readonly status: number;
  /** Sets Retry-After (and details.retryAfterSeconds). @defaultValue 1 for 429, none otherwise */
  readonly retryAfterSeconds?: number;
}

/** Destroy the client connection without any answer (the request is not forwarded). */
export interface DropFault extends FaultRuleBase {
  readonly kind: 'drop';
}

/** Hold the request this long before forwarding it (a slow or hung API server). */
export interface DelayFault extends FaultRuleBase {
  readonly kind: 'delay';
  readonly delayMs: number;
}

/** Forward a watch, then destroy its connection `afterMs` after the response started. */
export interface CutWatchFault extends FaultRuleBase {
  readonly kind: 'cut-watch';
  readonly afterMs: number;
  /**
   * Cut inside an event instead of between two: once `afterMs` has passed, the next chunk from the
   * API server is sent only up to the middle of its first event, then the connection is destroyed,
   * so the client's last line is a truncated JSON object. A watch that stays silent after `afterMs`
   * is not cut until an event comes. @defaultValue false: the cut falls between chunks, at `afterMs`
   */
  readonly midEvent?: boolean;
}

/** What a {@link RewriteFault} is told about the answer it rewrites. */
export interface RewrittenResponse {
  readonly status: number;
  /** The request's path with its query string. */
  readonly path: string;
}

/**
 * Forward a request that is not a watch, then send what `rewrite` makes of its JSON answer instead
 * of the answer (same status): a server that lies (a wrong `/version`), or one whose lists are
 * huge. The proxy asks the API server for an uncompressed answer; one that is not JSON is sent
 * unchanged (the rule still counts it as injected). Never matches a watch.
 */
export interface RewriteFault extends FaultRuleBase {
  readonly kind: 'rewrite';
  /**
   * Gets the parsed body; returns the body to send, as a value to serialize or as bytes sent as
   * they are (a huge list built once). Must not throw (a throw answers 502).
   */
  readonly rewrite: (body: unknown, response: RewrittenResponse) => unknown;
}

export type FaultRule = StatusFault | DropFault | DelayFault | CutWatchFault | RewriteFault;
export type FaultKind = FaultRule['kind'];

export interface FaultProxyStats {
  readonly requests: number;
  /** Requests sent on to the API server (a cut watch and a delayed request count too). */
  readonly forwarded: number;
  readonly injected: Readonly<Record<FaultKind, number>>;
}

/** A removable injected rule. */
export interface FaultHandle {
  /** Faults this rule injected so far. */
  readonly injected: number;
  remove(): void;
}

/** What the proxy forwards to; a TestEnv fits. */
export interface FaultProxyUpstream {
  /** `https://host:port` */
  readonly server: string;
  /** PEM that verifies the API server's serving certificate. */
  readonly caPem: string;
  /** A token kubeconfig for the API server; `proxy.kubeconfig` is this pointed at the proxy. */
  readonly kubeconfig: KubeconfigObject;
  /** True for a TestEnv against an existing cluster, which the proxy refuses. */
  readonly existingCluster?: boolean;
}

export interface FaultProxyOptions {
  readonly upstream: FaultProxyUpstream;
  /** Random source for `fraction` (tests). @defaultValue Math.random */
  readonly random?: () => number;
}

export class FaultProxyError extends OperatorRuntimeError {
  declare readonly code: 'ERR_FAULT_PROXY';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_FAULT_PROXY', message, options);
  }
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'proxy-authorization',
  'proxy-authenticate',
]);

const REASONS: Record<number, string> = {
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
  502: 'BadGateway',
};

interface ActiveRule {
  readonly rule: FaultRule;
  readonly expiresAt: number;
  injected: number;
  removed: boolean;
}

export class FaultProxy {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  /** The upstream kubeconfig, pointed at the proxy and trusting its certificate. */
  readonly kubeconfig: KubeconfigObject;
  /** PEM of the proxy's self-signed serving certificate. */
  readonly caPem: string;

  private readonly rules: ActiveRule[] = [];
  private readonly sockets = new Set<Socket>();
  /** Watch answers being streamed now, for `cutWatches`. */
  private readonly watches = new Set<ServerResponse>();
  private readonly counts = {
    requests: 0,
    forwarded: 0,
    injected: { status: 0, drop: 0, delay: 0, 'cut-watch': 0, rewrite: 0 } as Record<FaultKind, number>,
  };
  private readonly random: () => number;
  private closed = false;

  private constructor(
    private readonly server: Server,
    private readonly agent: Agent,
    private readonly upstream: FaultProxyUpstream,
    port: number,
    caPem: string,
    random: () => number,
  ) {
    this.url = `https://127.0.0.1:${port}`;
    this.caPem = caPem;
    this.random = random;
    const kubeconfig = structuredClone(upstream.kubeconfig);
    for (const c of kubeconfig.clusters) {
      c.cluster.server = this.url;
      c.cluster['certificate-authority-data'] = Buffer.from(caPem).toString('base64');
      delete c.cluster['certificate-authority'];
    }
    this.kubeconfig = kubeconfig;
  }

  /** Listens on a free loopback port; forwards everything until a rule is injected. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    // Its token pass-through and its faults are for a control plane of the test's own.
    if (options.upstream.existingCluster)
      throw new TestEnvUnavailableError('FaultProxy', 'fault injection is for a control plane TestEnv started itself');
    const { keyPem, certPem } = await selfSignedCertificate();
    const agent = new Agent({ connect: { ca: options.upstream.caPem }, connections: 128 });
    const server = createServer({ key: keyPem, cert: certPem });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const proxy = new FaultProxy(server, agent, options.upstream, port, certPem, options.random ?? Math.random);
    server.on('connection', (s: Socket) => {
      proxy.sockets.add(s);
      s.once('close', () => proxy.sockets.delete(s));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      proxy.handle(req, res).catch(() => res.destroy());
    });
    return proxy;
  }

  /** Adds a rule; rules are tried in the order they were injected, the first that fires wins. */
  inject(rule: FaultRule): FaultHandle {
    if (rule.fraction !== undefined && !(rule.fraction >= 0 && rule.fraction <= 1))
      throw new FaultProxyError(`fraction must be within [0, 1], got ${rule.fraction}`);
    const active: ActiveRule = {
      rule,
      expiresAt: rule.durationMs !== undefined ? Date.now() + rule.durationMs : Infinity,
      injected: 0,
      removed: false,
    };
    this.rules.push(active);
    return {
      get injected() {
        return active.injected;
      },
      remove: () => {
        active.removed = true;
      },
    };
  }

  /** Writes `kubeconfig` as a file (mode 0600), for an operator run as a child process or kubectl. */
  async writeKubeconfig(path: string): Promise<void> {
    await writeFile(path, toYaml(this.kubeconfig), { mode: 0o600 });
  }

  /** Removes every rule: everything is forwarded again. */
  clear(): void {
    for (const r of this.rules) r.removed = true;
    this.rules.length = 0;
  }

  /**
   * Cuts every watch being streamed now (their connections destroyed), as a rule cannot: rules act
   * on new requests. Returns how many were cut.
   */
  cutWatches(): number {
    const open = [...this.watches];
    for (const res of open) {
      res.socket?.destroy();
      res.destroy();
    }
    this.watches.clear();
    return open.length;
  }

  stats(): FaultProxyStats {
    return { requests: this.counts.requests, forwarded: this.counts.forwarded, injected: { ...this.counts.injected } };
  }

  /** Stops listening and cuts every open connection (watches included). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
    await this.agent.destroy();
  }

  private pick(req: IncomingMessage, isWatch: boolean): ActiveRule | undefined {
    const now = Date.now();
    for (const r of this.rules) {
      const { rule } = r;
      if (r.removed || now >= r.expiresAt || (rule.count !== undefined && r.injected >= rule.count)) continue;
      const m = rule.match;
      if (m?.method !== undefined && m.method !== req.method) continue;
      if (m?.path !== undefined && !m.path.test(req.url ?? '')) continue;
      if (m?.watch !== undefined && m.watch !== isWatch) continue;
      if (rule.kind === 'cut-watch' && !isWatch) continue;
      if (rule.kind === 'rewrite' && isWatch) continue;
      if (this.random() >= (rule.fraction ?? 1)) continue;
      return r;
    }
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.counts.requests++;
    const url = req.url ?? '/';
    const isWatch = /[?&]watch=(true|1)(&|$)/.test(url) || url.includes('/watch/');
    const hit = this.pick(req, isWatch);
    if (hit) {
      hit.injected++;
      this.counts.injected[hit.rule.kind]++;
    }
    const rule = hit?.rule;
    if (rule?.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    if (rule?.kind === 'status') {
      req.resume();
      const retryAfter = rule.retryAfterSeconds ?? (rule.status === 429 ? 1 : undefined);
      const body = JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `injected by operator-runtime fault proxy: ${rule.status}`,
        reason: REASONS[rule.status] ?? 'InternalError',
        ...(retryAfter !== undefined ? { details: { retryAfterSeconds: retryAfter } } : {}),
        code: rule.status,
      });
      res.writeHead(rule.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
      });
      res.end(body);
      return;
    }
    if (rule?.kind === 'delay') {
      await new Promise((r) => setTimeout(r, rule.delayMs));
      if (res.destroyed) return;
    }
    if (isWatch) {
      this.watches.add(res);
      res.once('close', () => this.watches.delete(res));
    }
    await this.forward(req, res, url, rule?.kind === 'cut-watch' || rule?.kind === 'rewrite' ? rule : undefined);
  }

  private async forward(
    req: IncomingMessage,
    res: ServerResponse,
    url: string,
    fault: CutWatchFault | RewriteFault | undefined,
  ): Promise<void> {
    this.counts.forwarded++;
    const ac = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    let upstream: Awaited<ReturnType<typeof request>>;
    try {
      upstream = await request(`${this.upstream.server}${url}`, {
        method: req.method as 'GET',
        headers: forwardHeaders(req.headers, { identity: fault?.kind === 'rewrite' }),
        body: hasBody ? req : undefined,
        dispatcher: this.agent,
        signal: ac.signal,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
    } catch {
      // The API server is down or restarting: what a client of a real load balancer would see.
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('fault proxy: upstream unreachable');
      }
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    if (fault?.kind === 'rewrite') {
      await sendRewritten(res, upstream, headers, fault, url);
      return;
    }
    res.writeHead(upstream.statusCode, headers);
    res.flushHeaders();
    let timer: NodeJS.Timeout | undefined;
    // Set once a mid-event cut is due: the next chunk is the one cut.
    let cutDue = false;
    if (fault?.kind === 'cut-watch') {
      timer = setTimeout(() => {
        if (fault.midEvent) {
          cutDue = true;
          return;
        }
        res.socket?.destroy();
        upstream.body.destroy();
      }, fault.afterMs);
    }
    try {
      for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
        if (res.destroyed) break;
        if (cutDue) {
          await sendPartOfFirstEvent(res, chunk);
          res.socket?.destroy();
          res.destroy();
          break;
        }
        // Watch events must reach the client as they come, not when a buffer fills.
        if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
      }
      res.end();
    } catch {
      res.destroy();
    } finally {
      if (timer) clearTimeout(timer);
      upstream.body.destroy();
    }
  }
}

function forwardHeaders(
  headers: IncomingHttpHeaders,
  options: { readonly identity: boolean },
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  // A body to rewrite must come uncompressed.
  if (options.identity) delete out['accept-encoding'];
  return out;
}

/** Reads the whole answer, rewrites it when it is JSON, and sends it with its new length. */
async function sendRewritten(
  res: ServerResponse,
  upstream: Awaited<ReturnType<typeof request>>,
  headers: Record<string, string | string[]>,
  fault: RewriteFault,
  url: string,
): Promise<void> {
  let body = Buffer.from(await upstream.body.arrayBuffer());
  const type = String(headers['content-type'] ?? '');
  if (/\bjson\b/.test(type) && headers['content-encoding'] === undefined) {
    let rewritten: unknown;
    try {
      rewritten = fault.rewrite(JSON.parse(body.toString('utf8')), { status: upstream.statusCode, path: url });
    } catch {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('fault proxy: the rewrite rule threw');
      }
      return;
    }
    body = rewritten instanceof Uint8Array ? Buffer.from(rewritten) : Buffer.from(JSON.stringify(rewritten));
  }
  if (res.destroyed) return;
  delete headers['content-length'];
  res.writeHead(upstream.statusCode, { ...headers, 'content-length': String(body.length) });
  res.end(body);
}

/**
 * Writes `chunk` up to the middle of its first event (watch events are newline-terminated JSON
 * lines), so what reaches the client ends inside an object; resolves once it is flushed.
 */
function sendPartOfFirstEvent(res: ServerResponse, chunk: Buffer): Promise<void> {
  const newline = chunk.indexOf(0x0a);
  const eventEnd = newline < 0 ? chunk.length : newline;
  const part = chunk.subarray(0, Math.max(1, Math.floor(eventEnd / 2)));
  return new Promise((resolve) => {
    res.write(part, () => resolve());
  });
}

async function selfSignedCertificate(): Promise<{ keyPem: string; certPem: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'operator-runtime-fault-proxy-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      `/CN=operator-runtime-fault-proxy-${randomUUID().slice(0, 8)}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ]);
    return { keyPem: await readFile(keyFile, 'utf8'), certPem: await readFile(certFile, 'utf8') };
  } catch (err) {
    throw new FaultProxyError('cannot create the proxy certificate with the openssl CLI', { cause: err });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
