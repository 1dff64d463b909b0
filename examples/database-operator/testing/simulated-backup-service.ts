/**
 * The backup service as simulate() runs it: an external system whose state lives in the simulated
 * cluster, so it outlives operator restarts as the real service does. A backup is a `BackupRecord`
 * object named after its Database (no owner: deleting the Database does not take it); the first
 * request starts it (`running`), the next one finds it `completed`. Its calls go through the operator
 * process's own client, so a fault can hit them too — a crash between starting a backup and polling
 * it is one of the states the reference operator must survive. No timer: progress is counted in
 * requests.
 */
import { ignoreNotFound, kind, type Client, type KubeObject } from 'operator-runtime';
import type { BackupService, BackupState } from '../src/backup-client.js';
import type { Database } from '../src/database.js';

export interface BackupRecord extends KubeObject {
  data?: { state?: 'running' | 'completed' };
}

/** The simulated backup service's own kind; the simulation's store serves it ({@link BACKUP_RECORD_KIND_SPEC}). */
export const BACKUP_RECORD = kind<BackupRecord>('simulation.example.com/v1', 'BackupRecord');

/** How the fake client serves {@link BACKUP_RECORD}. */
export const BACKUP_RECORD_KIND_SPEC = {
  ...BACKUP_RECORD,
  plural: 'backuprecords',
  schema: {
    type: 'object',
    properties: { data: { type: 'object', properties: { state: { type: 'string' } } } },
  },
} as const;

export class SimulatedBackupService implements BackupService {
  constructor(private readonly client: Client) {}

  async backup(_endpoint: string, db: Database, signal: AbortSignal): Promise<BackupState> {
    const { name, namespace } = db.metadata;
    const record = await ignoreNotFound(this.client.get(BACKUP_RECORD, name, { namespace, signal }));
    // Named after the Database, not its uid: uids are random, and runs are compared with each other.
    const id = `backup-${name}`.slice(0, 64);
    if (!record) {
      await this.client.create(
        { ...BACKUP_RECORD, metadata: { name, namespace }, data: { state: 'running' } },
        { signal },
      );
      return { id, state: 'running' };
    }
    if (record.data?.state !== 'completed')
      await this.client.update({ ...record, data: { state: 'completed' } }, { signal });
    return { id, state: 'completed' };
  }

  async close(): Promise<void> {}
}
