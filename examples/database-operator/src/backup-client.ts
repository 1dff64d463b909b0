/** The operator's side of the backup service: start-or-look-up a backup, through resilient HTTP. */
import { createHttpClient, type HttpClient } from 'operator-runtime';
import type { Registry } from 'prom-client';
import type { Database } from './database.js';

export interface BackupState {
  readonly id: string;
  readonly state: 'running' | 'completed';
}

export interface BackupClientOptions {
  readonly registry?: Registry;
  /** Per-attempt timeout: a hanging service must not hold a worker. @defaultValue 2000 */
  readonly attemptTimeoutMs?: number;
}

export class BackupClient {
  private readonly http: HttpClient;

  constructor(options: BackupClientOptions = {}) {
    this.http = createHttpClient({
      retries: 2,
      baseDelayMs: 200,
      maxDelayMs: 2_000,
      attemptTimeoutMs: options.attemptTimeoutMs ?? 2_000,
      ...(options.registry ? { registry: options.registry } : {}),
    });
  }

  /**
   * Starts the backup of this Database, or returns the one already started: the Database's uid is
   * the idempotency key, so polling is the same call and a retried request never starts a second
   * backup. Throws `HttpRequestError` (or an Error for a non-2xx answer) when the service fails.
   */
  async backup(endpoint: string, db: Database, signal: AbortSignal): Promise<BackupState> {
    const res = await this.http.request(new URL('/backups', endpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ database: `${db.metadata.namespace}/${db.metadata.name}`, uid: db.metadata.uid }),
      idempotencyKey: db.metadata.uid,
      signal,
    });
    if (res.status !== 202 && res.status !== 200) throw new Error(`backup service answered ${res.status}: ${res.text().slice(0, 200)}`);
    return res.json<BackupState>();
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
