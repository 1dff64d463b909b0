import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { closeServer, listenOn } from '../core/http-server-lifecycle.js';

export type RouteHandler = (req: IncomingMessage) => Promise<{ status: number; contentType: string; body: string }>;

export interface EndpointServerOptions {
  /** Serve HTTPS with this certificate and key (PEM) instead of plain HTTP. */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /**
   * TLS material that changes while serving (a rotated certificate): `start` gives the first pair
   * and calls `onChange` with each later one, which new connections then get. Wins over `tls`.
   */
  readonly tlsSource?: TlsSource;
  /**
   * Asked before every route: 200 lets the request through; 401, 403 or 500 answers with that
   * status (and no body worth reading). @defaultValue every request allowed
   */
  readonly authorize?: (req: IncomingMessage, path: string) => Promise<number>;
}

export interface TlsSource {
  start(
    onChange: (pair: { readonly cert: string; readonly key: string }) => void,
  ): Promise<{ readonly cert: string; readonly key: string }>;
  stop(): void;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  500: 'Internal Server Error',
};

/**
 * A tiny HTTP server for the manager's endpoints (/metrics, /healthz, /readyz). Runs as a runnable:
 * listens on start, closes (ending keep-alive connections) when the signal aborts.
 */
export class EndpointServer {
  private server: Server | undefined;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly routes: ReadonlyMap<string, RouteHandler>,
    private readonly options: EndpointServerOptions = {},
  ) {}

  /** `https` when serving TLS. */
  get scheme(): 'http' | 'https' {
    return this.options.tls || this.options.tlsSource ? 'https' : 'http';
  }

  /** The port actually bound (useful with port 0 in tests of this class). */
  get boundPort(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  /** Binds; resolves once listening (so start order "servers first" means reachable first). */
  async listen(): Promise<void> {
    const handler = (req: IncomingMessage, res: ServerResponse): void => void this.handle(req, res);
    const source = this.options.tlsSource;
    let tlsServer: HttpsServer | undefined;
    const tls = source
      ? await source.start((next) =>
          tlsServer?.setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' }),
        )
      : this.options.tls;
    if (tls) tlsServer = createTlsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, handler);
    const server: Server = tlsServer ?? createServer(handler);
    this.server = server;
    try {
      await listenOn(server, this.port, this.host);
    } catch (err) {
      source?.stop();
      throw err;
    }
  }

  async close(): Promise<void> {
    this.options.tlsSource?.stop();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await closeServer(server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = this.routes.get(path);
    try {
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      if (this.options.authorize) {
        const status = await this.options.authorize(req, path);
        if (status !== 200) {
          const headers: Record<string, string> = { 'content-type': 'text/plain' };
          if (status === 401) headers['www-authenticate'] = 'Bearer';
          res.writeHead(status, headers).end(`${STATUS_TEXT[status] ?? 'Denied'}\n`);
          return;
        }
      }
      const out = await route(req);
      res.writeHead(out.status, { 'content-type': out.contentType }).end(out.body);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
}
