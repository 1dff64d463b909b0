/**
 * The backup service the Database operator calls before a Database is deleted: a real HTTP server
 * on loopback with a start/poll API, a log of every backup, and fault knobs for tests
 * (error rate, latency, hang, down).
 *
 *   POST /backups            {"database":"ns/name","uid":"..."}  (Idempotency-Key header: one backup per key)
 *                            → 202 {"id","state":"running",...}  (the same backup again for a repeated key)
 *   GET  /backups/<id>       → 200 {"id","state":"running"|"completed",...}
 *   GET  /backups            → 200 [every backup]
 *   PUT  /faults             {"errorRate":0.5,"latencyMs":100,"hang":false,"down":false}
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface Backup {
  readonly id: string;
  readonly database: string;
  readonly uid: string;
  readonly idempotencyKey: string;
  state: 'running' | 'completed';
  readonly startedAt: string;
  completedAt?: string;
  /** Times this backup was requested (retries with the same key). */
  requests: number;
}

export interface BackupFaults {
  /** Fraction of requests answered 503. */
  readonly errorRate?: number;
  /** Added before answering. */
  readonly latencyMs?: number;
  /** Accept connections, never answer. */
  readonly hang?: boolean;
  /** Refuse every request with 503 (the service is "down"). */
  readonly down?: boolean;
}

export interface BackupServiceOptions {
  /** How long a backup runs before it completes. @defaultValue 1000 */
  readonly backupDurationMs?: number;
  /** @defaultValue 0 (a free port) */
  readonly port?: number;
  readonly host?: string;
}

export class BackupService {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly byId = new Map<string, Backup>();
  private readonly byKey = new Map<string, Backup>();
  private faults: BackupFaults = {};
  private readonly durationMs: number;
  /** Requests answered with an injected error. */
  injectedErrors = 0;

  constructor(private readonly options: BackupServiceOptions = {}) {
    this.durationMs = options.backupDurationMs ?? 1000;
  }

  get url(): string {
    const address = this.server?.address();
    const port = typeof address === 'object' && address !== null ? address.port : undefined;
    if (!port) throw new Error('backup service not started');
    return `http://${this.options.host ?? '127.0.0.1'}:${port}`;
  }

  setFaults(faults: BackupFaults): void {
    this.faults = { ...faults };
  }

  /** Every backup ever started, oldest first. */
  backups(): Backup[] {
    return [...this.byId.values()];
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve());
    });
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const body = await readBody(req);
    if (req.method === 'PUT' && url.pathname === '/faults') {
      this.setFaults(parseFaults(body));
      return send(res, 200, this.faults);
    }
    if (this.faults.hang) return; // the socket stays open, nothing is answered
    if (this.faults.latencyMs) await new Promise((r) => setTimeout(r, this.faults.latencyMs));
    if (this.faults.down || (this.faults.errorRate && Math.random() < this.faults.errorRate)) {
      this.injectedErrors++;
      return send(res, 503, { error: 'backup service unavailable (injected)' }, { 'retry-after': '1' });
    }
    if (req.method === 'POST' && url.pathname === '/backups') return this.startBackup(req, body, res);
    if (req.method === 'GET' && url.pathname === '/backups') return send(res, 200, this.backups());
    const match = /^\/backups\/([\w-]+)$/.exec(url.pathname);
    if (req.method === 'GET' && match) {
      const backup = this.byId.get(match[1]!);
      return backup ? send(res, 200, this.settle(backup)) : send(res, 404, { error: 'no such backup' });
    }
    send(res, 404, { error: 'not found' });
  }

  private startBackup(req: IncomingMessage, body: string, res: ServerResponse): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return send(res, 400, { error: 'body must be JSON' });
    }
    const request = { database: stringField(parsed, 'database'), uid: stringField(parsed, 'uid') };
    if (!request.database || !request.uid) return send(res, 400, { error: 'database and uid are required' });
    const key = String(req.headers['idempotency-key'] ?? request.uid);
    const existing = this.byKey.get(key);
    if (existing) {
      existing.requests++;
      return send(res, 202, this.settle(existing));
    }
    const backup: Backup = {
      id: randomUUID(),
      database: request.database,
      uid: request.uid,
      idempotencyKey: key,
      state: 'running',
      startedAt: new Date().toISOString(),
      requests: 1,
    };
    this.byId.set(backup.id, backup);
    this.byKey.set(key, backup);
    send(res, 202, backup);
  }

  /** Completes a backup once its duration has passed (checked when read: no timers to leak). */
  private settle(backup: Backup): Backup {
    if (backup.state === 'running' && Date.now() - Date.parse(backup.startedAt) >= this.durationMs) {
      backup.state = 'completed';
      backup.completedAt = new Date().toISOString();
    }
    return backup;
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (data += c));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

/** A property of a parsed JSON value (a body is checked, never trusted), or undefined. */
function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, name) : undefined;
}

function stringField(value: unknown, name: string): string | undefined {
  const v = field(value, name);
  return typeof v === 'string' ? v : undefined;
}

/** The fault knobs a PUT /faults body sets; a field of the wrong type is left unset. */
function parseFaults(body: string): BackupFaults {
  const value: unknown = JSON.parse(body || '{}');
  const faults: { -readonly [K in keyof BackupFaults]: BackupFaults[K] } = {};
  for (const name of ['errorRate', 'latencyMs'] as const) {
    const v = field(value, name);
    if (typeof v === 'number') faults[name] = v;
  }
  for (const name of ['hang', 'down'] as const) {
    const v = field(value, name);
    if (typeof v === 'boolean') faults[name] = v;
  }
  return faults;
}
