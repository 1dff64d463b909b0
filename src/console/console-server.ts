import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realClock, type Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { closeServer, listenOn } from '../core/http-server-lifecycle.js';
import { CONSOLE_CSP, CONSOLE_HTML } from './console-page.js';
import type { ConsoleSnapshot } from './console-state.js';
import type { ObjectTimeline } from './object-history.js';

/** One object's remembered reconciles (`ConsoleState.timeline`), served at `api/history`. */
export type TimelineSource = (controller: string, key: string) => ObjectTimeline | undefined;

/** @defaultValue 8082 (next to the metrics 8080 and health 8081 ports) */
export const DEFAULT_CONSOLE_PORT = 8082;
/**
 * Loopback: the console shows error messages and object names, so it is reached through
 * `kubectl port-forward` unless someone decides otherwise. @defaultValue '127.0.0.1'
 */
export const DEFAULT_CONSOLE_HOST = '127.0.0.1';

/**
 * A snapshot is built at most this often; polls in between get the same one (every open tab polls,
 * and a snapshot of a controller with 100,000 keys in backoff is not free). @defaultValue 1_000
 */
export const DEFAULT_CONSOLE_SNAPSHOT_MAX_AGE_MS = 1_000;

export interface ConsoleServerOptions {
  /** 0 binds a free port (see `boundPort`). @defaultValue {@link DEFAULT_CONSOLE_PORT} */
  readonly port?: number;
  /** @defaultValue {@link DEFAULT_CONSOLE_HOST} */
  readonly host?: string;
  /**
   * Host names (without port) the console answers besides loopback names, the bound address and
   * the address a connection arrived on — e.g. a Service's DNS name. Any other `Host` gets 421, so a
   * web page cannot read the console through DNS rebinding, whatever address it is bound to.
   */
  readonly allowedHosts?: readonly string[];
  /** Paces the snapshot cache. @defaultValue realClock */
  readonly clock?: Clock;
}

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '::1', '[::1]'];
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '']);

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * Serves the console, read-only: `GET /` is the page, `GET /api/state` the JSON it polls,
 * `GET /api/history?controller=…&key=…` one object's remembered reconciles (its timeline). Anything
 * else is 404, any other method 405. Whatever address it is bound to, it refuses requests whose Host
 * header is not on its allow-list (loopback names, the bound address, the connection's local
 * address, `allowedHosts`), so a web page cannot read it through DNS rebinding. The snapshot is
 * built at most once per {@link DEFAULT_CONSOLE_SNAPSHOT_MAX_AGE_MS}, however many tabs poll.
 */
export class ConsoleServer {
  readonly port: number;
  readonly host: string;
  private server: Server | undefined;
  private readonly allowed: ReadonlySet<string>;
  private readonly clock: Clock;
  private cached: { readonly builtAtMs: number; readonly json: string } | undefined;

  constructor(
    private readonly snapshot: () => ConsoleSnapshot,
    options: ConsoleServerOptions = {},
    private readonly timeline?: TimelineSource,
  ) {
    this.port = options.port ?? DEFAULT_CONSOLE_PORT;
    this.host = options.host ?? DEFAULT_CONSOLE_HOST;
    if (!(Number.isInteger(this.port) && this.port >= 0 && this.port <= 65_535))
      throw new InvalidOptionError('console.port', 'must be an integer from 0 to 65535');
    this.clock = options.clock ?? realClock;
    const allowed = new Set(LOOPBACK_HOSTS);
    if (!WILDCARD_HOSTS.has(this.host)) allowed.add(normalizeHost(this.host));
    for (const h of options.allowedHosts ?? []) {
      if (typeof h !== 'string' || h === '' || h.includes('/'))
        throw new InvalidOptionError('console.allowedHosts', 'must be host names or addresses, without scheme or port');
      allowed.add(normalizeHost(h));
    }
    this.allowed = allowed;
  }

  get boundPort(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  /** The page's URL once listening. */
  get url(): string | undefined {
    const port = this.boundPort;
    if (port === undefined) return undefined;
    const host =
      this.host === '0.0.0.0' || this.host === '::'
        ? '127.0.0.1'
        : this.host.includes(':')
          ? `[${this.host}]`
          : this.host;
    return `http://${host}:${port}/`;
  }

  async listen(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    this.server = server;
    await listenOn(server, this.port, this.host);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await closeServer(server);
  }

  /** The snapshot as JSON; polls within {@link DEFAULT_CONSOLE_SNAPSHOT_MAX_AGE_MS} of the last build share it. */
  private snapshotJson(): string {
    const now = this.clock.monotonicNow();
    const c = this.cached;
    if (c && now - c.builtAtMs < DEFAULT_CONSOLE_SNAPSHOT_MAX_AGE_MS) return c.json;
    const json = JSON.stringify(this.snapshot());
    this.cached = { builtAtMs: now, json };
    return json;
  }

  /** One object's timeline; an object with none remembered (or history off) has no reconciles. */
  private timelineJson(query: URLSearchParams): string {
    const controller = query.get('controller')!;
    const key = query.get('key')!;
    return JSON.stringify(this.timeline?.(controller, key) ?? { controller, key, reconciles: [] });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    // Always on: it used to be skipped when bound to a non-loopback address (issue 24).
    const host = hostOf(req.headers.host);
    const local = req.socket.localAddress;
    if (!this.allowed.has(host) && !(local !== undefined && host === normalizeHost(local.replace(/^::ffff:/, '')))) {
      res
        .writeHead(421, { 'content-type': 'text/plain; charset=utf-8' })
        .end('misdirected request: this Host is not one the console answers (see console.allowedHosts)\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://console');
    const path = url.pathname;
    if (path !== '/' && path !== '/api/state' && path !== '/api/history') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
        .end('the console is read-only\n');
      return;
    }
    if (path === '/api/history' && !(url.searchParams.get('controller') && url.searchParams.get('key'))) {
      res
        .writeHead(400, { 'content-type': 'text/plain; charset=utf-8' })
        .end('api/history needs the query parameters controller and key\n');
      return;
    }
    try {
      const [contentType, body] =
        path === '/'
          ? ['text/html; charset=utf-8', CONSOLE_HTML]
          : path === '/api/history'
            ? ['application/json; charset=utf-8', this.timelineJson(url.searchParams)]
            : ['application/json; charset=utf-8', this.snapshotJson()];
      res
        .writeHead(200, { ...SECURITY_HEADERS, 'content-type': contentType })
        .end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      res
        .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
        .end(`console snapshot failed: ${err instanceof Error ? err.name : 'error'}\n`);
    }
  }
}

/** The host name of a Host header, without port (IPv6 literals keep their brackets). */
function hostOf(header: string | undefined): string {
  if (!header) return '';
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1).toLowerCase();
  return header.split(':')[0]!.toLowerCase();
}

/** An address or name as it appears in a Host header: lower case, IPv6 literals bracketed. */
function normalizeHost(host: string): string {
  const h = host.toLowerCase();
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}
