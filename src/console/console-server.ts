import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidOptionError } from '../core/errors.js';
import { closeServer, listenOn } from '../core/http-server-lifecycle.js';
import { CONSOLE_CSP, CONSOLE_HTML } from './console-page.js';
import type { ConsoleSnapshot } from './console-state.js';

/** @defaultValue 8082 (next to the metrics 8080 and health 8081 ports) */
export const DEFAULT_CONSOLE_PORT = 8082;
/**
 * Loopback: the console shows error messages and object names, so it is reached through
 * `kubectl port-forward` unless someone decides otherwise. @defaultValue '127.0.0.1'
 */
export const DEFAULT_CONSOLE_HOST = '127.0.0.1';

export interface ConsoleServerOptions {
  /** 0 binds a free port (see `boundPort`). @defaultValue {@link DEFAULT_CONSOLE_PORT} */
  readonly port?: number;
  /** @defaultValue {@link DEFAULT_CONSOLE_HOST} */
  readonly host?: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * Serves the console, read-only: `GET /` is the page, `GET /api/state` the JSON it polls. Anything
 * else is 404, any other method 405. Bound to loopback, it also refuses requests whose Host header
 * is not a loopback name, so a web page cannot read it through DNS rebinding.
 */
export class ConsoleServer {
  readonly port: number;
  readonly host: string;
  private server: Server | undefined;

  constructor(
    private readonly snapshot: () => ConsoleSnapshot,
    options: ConsoleServerOptions = {},
  ) {
    this.port = options.port ?? DEFAULT_CONSOLE_PORT;
    this.host = options.host ?? DEFAULT_CONSOLE_HOST;
    if (!(Number.isInteger(this.port) && this.port >= 0 && this.port <= 65_535)) throw new InvalidOptionError('console.port', 'must be an integer from 0 to 65535');
  }

  get boundPort(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  /** The page's URL once listening. */
  get url(): string | undefined {
    const port = this.boundPort;
    if (port === undefined) return undefined;
    const host = this.host === '0.0.0.0' || this.host === '::' ? '127.0.0.1' : this.host.includes(':') ? `[${this.host}]` : this.host;
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

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (LOOPBACK_HOSTS.has(this.host) && !LOOPBACK_HOSTS.has(hostOf(req.headers.host))) {
      res.writeHead(421, { 'content-type': 'text/plain; charset=utf-8' }).end('misdirected request: the console answers loopback host names only\n');
      return;
    }
    const path = (req.url ?? '/').split('?')[0]!;
    if (path !== '/' && path !== '/api/state') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('the console is read-only\n');
      return;
    }
    try {
      const [contentType, body] = path === '/' ? ['text/html; charset=utf-8', CONSOLE_HTML] : ['application/json; charset=utf-8', JSON.stringify(this.snapshot())];
      res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`console snapshot failed: ${err instanceof Error ? err.name : 'error'}\n`);
    }
  }
}

/** The host name of a Host header, without port (IPv6 literals keep their brackets). */
function hostOf(header: string | undefined): string {
  if (!header) return '';
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  return header.split(':')[0]!.toLowerCase();
}
