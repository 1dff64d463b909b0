/**
 * A scripted HTTP(S) server for the client's unit tests: each test answers requests with its own
 * handler and inspects what arrived. Not part of the public API.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { OperatorRuntimeError } from '../../core/errors.js';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export type Handler = (req: RecordedRequest, res: http.ServerResponse) => void | Promise<void>;

export class FakeApiServer {
  readonly requests: RecordedRequest[] = [];
  private handler: Handler = (_req, res) => {
    res.statusCode = 404;
    res.end();
  };

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(tls?: { cert: string; key: string }): Promise<FakeApiServer> {
    const holder: { self?: FakeApiServer } = {};
    const listener = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rec: RecordedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        holder.self!.requests.push(rec);
        Promise.resolve(holder.self!.handler(rec, res)).catch((err: unknown) => {
          res.statusCode = 599;
          res.end(String(err));
        });
      });
    };
    const server = tls ? https.createServer({ cert: tls.cert, key: tls.key }, listener) : http.createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    holder.self = new FakeApiServer(server, `${tls ? 'https' : 'http'}://127.0.0.1:${port}`);
    return holder.self;
  }

  handle(handler: Handler): void {
    this.handler = handler;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function sendStatus(
  res: http.ServerResponse,
  code: number,
  reason: string,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): void {
  sendJson(
    res,
    code,
    { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, ...extra },
    headers,
  );
}

/** Waits (in real time, briefly) until the fake clock has a pending timer: the code under test is sleeping. */
export async function untilTimerPending(clock: { pendingTimers: number }, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (clock.pendingTimers === 0) {
    if (Date.now() > deadline) throw new OperatorRuntimeError('ERR_TIMEOUT', 'no timer became pending');
    await new Promise((r) => setImmediate(r));
  }
}
