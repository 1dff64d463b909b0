import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RouteHandler = (req: IncomingMessage) => Promise<{ status: number; contentType: string; body: string }>;

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
  ) {}

  /** The port actually bound (useful with port 0 in tests of this class). */
  get boundPort(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  /** Binds; resolves once listening (so start order "servers first" means reachable first). */
  async listen(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = this.routes.get(path);
    try {
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      const out = await route(req);
      res.writeHead(out.status, { 'content-type': out.contentType }).end(out.body);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
}
