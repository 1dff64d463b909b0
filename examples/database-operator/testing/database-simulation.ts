/**
 * The reference operator as simulate() runs it (database-simulation.test.ts, and
 * bench/simulation.bench.ts): `createDatabaseOperator` unchanged, a 20-step scenario of creates,
 * scaling, upgrades, deletes and drift of owned objects.
 *
 * Deleted Databases have backup disabled: the backup-before-delete path calls an HTTP service
 * through a `BackupClient` that `createDatabaseOperator` builds itself (no way to hand it a fake),
 * on undici with real-time timeouts, so it cannot run on the fake clock.
 */
import { kinds, type KubeObject } from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import { normalizeObject, type Scenario, type SimulationOptions } from 'operator-runtime/testing';
import { DATABASE, type Database } from '../src/database.js';
import { createDatabaseOperator } from '../src/operator.js';

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
  { type: 'create', object: db('analytics', { replicas: 2 }) },
  { type: 'patch', target: ref('sessions'), patch: { spec: { version: '8.4' } } },
  { type: 'create', object: db('billing', { version: '14' }) },
  { type: 'delete', target: ref('analytics') },
  { type: 'patch', target: ref('orders'), patch: { spec: { version: '16' } } },
  { type: 'patch', target: owned(kinds.ConfigMap, 'orders-config'), patch: { data: { drift: 'yes' } } },
  { type: 'patch', target: ref('billing'), patch: { spec: { replicas: 2 } } },
  { type: 'create', object: db('search', { engine: 'mysql', version: '8.4' }) },
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

function withoutData(secret: KubeObject): KubeObject {
  const { data: _data, ...rest } = secret as KubeObject & { data?: unknown };
  return rest;
}

export function databaseSimulation(): SimulationOptions {
  return {
    setup: ({ client, clock, logger, registry }) =>
      createDatabaseOperator({
        client,
        clock,
        logger,
        registry,
        backupEndpoint: 'http://backup.invalid:8090',
        metricsPort: 0,
        healthPort: 0,
      }),
    scenario: DATABASE_SCENARIO,
    primaryKinds: [DATABASE],
    ownedKinds: [kinds.Secret, kinds.ConfigMap, kinds.Service, kinds.StatefulSet],
    cluster: { crds: [customResourceDefinition(DATABASE)] },
    // Generated passwords differ between any two runs; that they exist and are kept is what counts.
    normalize: (obj) => normalizeObject(obj.kind === 'Secret' ? withoutData(obj) : obj),
  };
}
