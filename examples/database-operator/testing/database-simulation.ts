/**
 * The reference operator as simulate() runs it (database-simulation.test.ts, and
 * bench/simulation.bench.ts): the operator unchanged, built by the rig (operator-rig.ts) on the
 * simulation's clock, through a 20-step scenario of creates, scaling, upgrades, deletes and drift
 * of owned objects.
 *
 * The backup service is simulated-backup-service.ts, handed to the operator as its
 * `backups`: two of the three deleted Databases have backup on, and the invariant below asks that
 * each of them, once gone, has a completed backup — the finalizer may be released only after it.
 */
import { kinds, type Client, type KubeObject } from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import {
  DEFAULT_END_STATE_IGNORED_KINDS,
  normalizeObject,
  type RunRecord,
  type Scenario,
  type SimulationOptions,
} from 'operator-runtime/testing/simulation';
import type { BackupService } from '../src/backup-client.js';
import { DATABASE, type Database } from '../src/database.js';
import { createOperatorUnderTest } from './operator-rig.js';
import { BACKUP_RECORD, BACKUP_RECORD_KIND_SPEC, SimulatedBackupService } from './simulated-backup-service.js';

function db(name: string, spec: Partial<Database['spec']> = {}): Database {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Database',
    metadata: { name, namespace: 'default' },
    spec: { engine: 'postgres', version: '15', replicas: 1, storage: '1Gi', backup: { enabled: false }, ...spec },
  } as Database;
}

const ref = (name: string) => ({ ...DATABASE, namespace: 'default', name });
const owned = (kind: { apiVersion: string; kind: string }, name: string) => ({ ...kind, namespace: 'default', name });

/** Twenty steps, one second apart. */
export const DATABASE_SCENARIO: Scenario = [
  { type: 'create', object: db('orders') },
  { type: 'create', object: db('sessions', { engine: 'mysql', version: '8.0' }) },
  { type: 'patch', target: ref('orders'), patch: { spec: { replicas: 3 } } },
  { type: 'create', object: db('analytics', { replicas: 2, backup: { enabled: true } }) },
  { type: 'patch', target: ref('sessions'), patch: { spec: { version: '8.4' } } },
  { type: 'create', object: db('billing', { version: '14' }) },
  { type: 'delete', target: ref('analytics') },
  { type: 'patch', target: ref('orders'), patch: { spec: { version: '16' } } },
  { type: 'patch', target: owned(kinds.ConfigMap, 'orders-config'), patch: { data: { drift: 'yes' } } },
  { type: 'patch', target: ref('billing'), patch: { spec: { replicas: 2 } } },
  { type: 'create', object: db('search', { engine: 'mysql', version: '8.4', backup: { enabled: true } }) },
  { type: 'delete', target: owned(kinds.Service, 'sessions') },
  { type: 'patch', target: ref('search'), patch: { spec: { replicas: 3 } } },
  { type: 'patch', target: ref('billing'), patch: { spec: { version: '15' } } },
  { type: 'delete', target: ref('sessions') },
  { type: 'patch', target: ref('orders'), patch: { spec: { storage: '2Gi' } } },
  { type: 'create', object: db('audit') },
  { type: 'patch', target: owned(kinds.ConfigMap, 'billing-config'), patch: { data: { drift: 'yes' } } },
  { type: 'delete', target: ref('search') },
  { type: 'patch', target: ref('audit'), patch: { spec: { replicas: 2 } } },
];

/** Databases the scenario deletes with backup on: each must be backed up before it goes. */
const DELETED_WITH_BACKUP = ['analytics', 'search'];

/**
 * Every Database deleted with backup on that ever held data (the operator created its StatefulSet)
 * is gone only with a completed backup record. One created and deleted while no operator process
 * was at work never got a StatefulSet, so there is nothing to back up (`SIM_SEED=197` replays such a run).
 */
function backedUpBeforeDelete(objects: readonly KubeObject[], run: RunRecord): string[] {
  const present = (kind: string, name: string) =>
    objects.find((o) => o.kind === kind && o.metadata?.namespace === 'default' && o.metadata?.name === name);
  const heldData = (name: string) =>
    run.writes.some(
      (w) => w.verb === 'create' && w.kind === 'StatefulSet' && w.namespace === 'default' && w.name === name,
    );
  return DELETED_WITH_BACKUP.flatMap((name) => {
    if (present('Database', name)) return []; // still terminating: the finalizer oracle speaks to that
    if (!heldData(name)) return [];
    const record = present(BACKUP_RECORD.kind, name) as (KubeObject & { data?: Record<string, string> }) | undefined;
    return record?.data?.state === 'completed'
      ? []
      : [
          `Database default/${name} held data and is gone without a completed backup (record: ${record?.data?.state ?? 'none'})`,
        ];
  });
}

function withoutData(secret: KubeObject): KubeObject {
  const { data: _data, ...rest } = secret as KubeObject & { data?: unknown };
  return rest;
}

export interface DatabaseSimulationOptions {
  /** The backup service each operator process gets. @defaultValue a {@link SimulatedBackupService} on the process's client */
  readonly backups?: (client: Client) => BackupService;
}

export function databaseSimulation(options: DatabaseSimulationOptions = {}): SimulationOptions {
  const backups = options.backups ?? ((client: Client) => new SimulatedBackupService(client));
  return {
    setup: ({ client, clock, logger, registry }) =>
      createOperatorUnderTest({
        client,
        clock,
        logger,
        registry,
        backupEndpoint: 'http://backup.invalid:8090',
        backups: backups(client),
        metricsPort: 0,
        healthPort: 0,
      }),
    scenario: DATABASE_SCENARIO,
    primaryKinds: [DATABASE],
    ownedKinds: [kinds.Secret, kinds.ConfigMap, kinds.Service, kinds.StatefulSet, BACKUP_RECORD],
    cluster: { crds: [customResourceDefinition(DATABASE)], kinds: [BACKUP_RECORD_KIND_SPEC] },
    // Whether a backup was ever needed depends on timing (a Database created and deleted while no
    // operator was at work never held data); the invariant judges backups, not the end-state diff.
    endStateIgnoredKinds: [...DEFAULT_END_STATE_IGNORED_KINDS, BACKUP_RECORD.kind],
    // Generated passwords differ between any two runs; that they exist and are kept is what counts.
    invariants: backedUpBeforeDelete,
    normalize: (obj) => normalizeObject(obj.kind === 'Secret' ? withoutData(obj) : obj),
  };
}
