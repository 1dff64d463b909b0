/** The operator's side of the backup service: start-or-look-up a backup, through resilient HTTP. */
import { createHttpClient, type HttpClient, type HttpClientOptions } from 'operator-runtime/helpers';
import type { Registry } from 'prom-client';
import { BackupServiceError } from './backup-endpoints.js';
import type { Database } from './database.js';

export interface BackupState {
  readonly id: string;
  readonly state: 'running' | 'completed';
}

export interface BackupClientOptions {
  readonly registry?: Registry;
  /** Per-attempt timeout: a hanging service must not hold a worker. @defaultValue 2000 */
  readonly attemptTimeoutMs?: number;
  /** Hosts (`URL.host`) the metrics name; any other is `other`, so tenants cannot mint series. @defaultValue none */
  readonly metricHosts?: readonly string[];
  /** undici dispatcher (a MockAgent in tests). */
  readonly dispatcher?: HttpClientOptions['dispatcher'];
}

/**
 * What the reconciler needs of the backup service. `BackupClient` speaks its HTTP API; a test or a
 * simulation hands `createDatabaseOperator` another (testing/simulated-backup-service.ts).
 */
export interface BackupService {
  /** Starts the backup of this Database, or returns the one already started (idempotent per uid). */
  backup(endpoint: string, db: Database, signal: AbortSignal): Promise<BackupState>;
  close(): Promise<void>;
}

export class BackupClient implements BackupService {
  private readonly http: HttpClient;

  constructor(options: BackupClientOptions = {}) {
    this.http = createHttpClient({
      backoff: { maxAttempts: 3, initialMs: 200, maxMs: 2_000 },
      attemptTimeoutMs: options.attemptTimeoutMs ?? 2_000,
      // A backup answer is a few hundred bytes; nothing larger is read into memory.
      maxResponseBytes: 64 * 1024,
      metricHosts: options.metricHosts ?? [],
      ...(options.registry ? { registry: options.registry } : {}),
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
  }

  /**
   * Starts the backup of this Database, or returns the one already started: the Database's uid is
   * the idempotency key, so polling is the same call and a retried request never starts a second
   * backup. `endpoint` must already be allowed (see backup-endpoints.ts). Throws
   * `HttpRequestError`, or `BackupServiceError` (status code only: the body is the service's, and
   * error text ends up where tenants read it) for an answer it cannot use.
   */
  async backup(endpoint: string, db: Database, signal: AbortSignal): Promise<BackupState> {
    const res = await this.http.request(new URL('/backups', endpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ database: `${db.metadata.namespace}/${db.metadata.name}`, uid: db.metadata.uid }),
      idempotencyKey: db.metadata.uid,
      signal,
    });
    if (res.status !== 202 && res.status !== 200) throw new BackupServiceError(res.status);
    let parsed: unknown;
    try {
      parsed = res.json();
    } catch {
      parsed = undefined; // JSON.parse's message quotes the body
    }
    const id: unknown = typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'id') : undefined;
    const state: unknown = typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'state') : undefined;
    // The id is shown in status: a short token or nothing.
    if (
      typeof id !== 'string' ||
      !/^[A-Za-z0-9._-]{1,64}$/.test(id) ||
      (state !== 'running' && state !== 'completed')
    ) {
      throw new BackupServiceError(res.status, true);
    }
    return { id, state };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
