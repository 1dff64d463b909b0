/**
 * The chaos workload: Databases created, their specs changed and some deleted, continuously,
 * through the admin client straight to kube-apiserver (faults make some writes fail; that is
 * counted, not fatal). Remembers what it deleted so the invariants can check backups and garbage
 * collection per deleted object.
 */
import type { KubeClient } from 'operator-runtime';
import { DATABASE, FINALIZER, type Database } from '../../examples/database-operator/src/database.js';

export interface DeletedDatabase {
  readonly name: string;
  /** '' when the delete's answer was lost and only the name's absence tells. */
  readonly uid: string;
  /**
   * Whether the operator's finalizer was on the object when we deleted it. One created and deleted
   * before any reconcile (no leader at the time, say) is deleted at once, without a backup — as
   * Kubernetes does it; only finalized objects owe a backup.
   */
  readonly hadFinalizer: boolean;
}

export class DatabaseWorkload {
  readonly names: string[] = [];
  readonly deleted: DeletedDatabase[] = [];
  writes = 0;
  failedWrites = 0;
  private next = 0;

  constructor(
    private readonly admin: KubeClient,
    private readonly namespace = 'default',
    private readonly random: () => number = Math.random,
  ) {}

  /** Creates `count` Databases, retrying each until it exists. */
  async create(count: number): Promise<void> {
    for (let i = 0; i < count; i++) await this.createOne();
  }

  /** Until `signal` aborts: every `periodMs`, change a spec (most often), delete one, or create one. */
  async churn(signal: AbortSignal, periodMs: number): Promise<void> {
    while (!signal.aborted) {
      const roll = this.random();
      try {
        if (roll < 0.7) await this.changeSpec(signal);
        else if (roll < 0.85 && this.names.length > 2) await this.deleteOne(signal);
        else await this.createOne(signal);
      } catch {
        this.failedWrites++;
      }
      await new Promise((r) => setTimeout(r, periodMs));
    }
  }

  private async createOne(signal?: AbortSignal): Promise<void> {
    const name = `db-${this.next++}`;
    const postgres = this.random() < 0.5;
    for (let attempt = 0; ; attempt++) {
      try {
        this.writes++;
        await this.admin.create(
          {
            apiVersion: 'example.com/v1',
            kind: 'Database',
            metadata: { name, namespace: this.namespace },
            spec: {
              engine: postgres ? 'postgres' : 'mysql',
              version: postgres ? '16' : '8.0',
              replicas: 1,
              storage: '1Gi',
            },
          },
          { ...(signal ? { signal } : {}) },
        );
        this.names.push(name);
        return;
      } catch (err) {
        if ((err as { reason?: string }).reason === 'AlreadyExists') {
          this.names.push(name);
          return;
        }
        this.failedWrites++;
        if (signal?.aborted || attempt > 20) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private async changeSpec(signal: AbortSignal): Promise<void> {
    const name = this.pick();
    if (!name) return;
    this.writes++;
    await this.admin.patch(
      DATABASE,
      name,
      { spec: { replicas: 1 + Math.floor(this.random() * 3) } },
      { namespace: this.namespace, type: 'merge', signal },
    );
  }

  private async deleteOne(signal: AbortSignal): Promise<void> {
    const name = this.pick();
    if (!name) return;
    const db = await this.admin.get<Database>(DATABASE, name, { namespace: this.namespace, signal });
    this.writes++;
    await this.admin.delete(DATABASE, name, {
      namespace: this.namespace,
      signal,
      preconditions: { uid: db.metadata.uid },
    });
    this.names.splice(this.names.indexOf(name), 1);
    this.deleted.push({
      name,
      uid: db.metadata.uid,
      hadFinalizer: db.metadata.finalizers?.includes(FINALIZER) ?? false,
    });
  }

  private pick(): string | undefined {
    return this.names[Math.floor(this.random() * this.names.length)];
  }
}
