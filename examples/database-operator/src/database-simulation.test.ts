/**
 * The reference operator under simulate() (issue 28): `createDatabaseOperator` unchanged, against
 * the fake client on the fake clock, under seeded fault schedules. Databases are created, scaled,
 * upgraded, relabelled and deleted; their owned objects drift. Deleted Databases have backup
 * disabled: the backup-before-delete path calls an HTTP service through `BackupClient`, which
 * `createDatabaseOperator` builds itself (no way to hand it a fake) on undici with real-time
 * timeouts, so it cannot run on the fake clock. `SIM_SEED=<n>` replays one seed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kinds, type KubeObject } from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import { normalizeObject, simulate, simulationSeeds, type Scenario } from 'operator-runtime/testing';
import { DATABASE, type Database } from './database.js';
import { createDatabaseOperator } from './operator.js';

const FILE = 'examples/database-operator/src/database-simulation.test.ts';
const CLEAN_SEEDS = 30;

function db(name: string, spec: Partial<Database['spec']> = {}): Database {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Database',
    metadata: { name, namespace: 'default' },
    spec: { engine: 'postgres', version: '15', replicas: 1, storage: '1Gi', backup: { enabled: false }, ...spec },
  } as Database;
}
const ref = (name: string) => ({ ...DATABASE, namespace: 'default', name });

function withoutData(secret: KubeObject): KubeObject {
  const { data: _data, ...rest } = secret as KubeObject & { data?: unknown };
  return rest;
}

const SCENARIO: Scenario = [
  { type: 'create', object: db('orders') },
  { type: 'create', object: db('sessions', { engine: 'mysql', version: '8.0' }) },
  { type: 'patch', target: ref('orders'), patch: { spec: { replicas: 3 } } },
  { type: 'create', object: db('analytics', { replicas: 2 }) },
  { type: 'patch', target: ref('sessions'), patch: { spec: { version: '8.4' } } },
  { type: 'delete', target: ref('analytics') },
  { type: 'patch', target: ref('orders'), patch: { spec: { version: '16' } } },
  {
    type: 'patch',
    target: { ...kinds.ConfigMap, namespace: 'default', name: 'orders-config' },
    patch: { data: { drift: 'yes' } },
  },
];

test(`the reference Database operator passes ${CLEAN_SEEDS} seeds with no finding`, async (t) => {
  const report = await simulate({
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
    scenario: SCENARIO,
    primaryKinds: [DATABASE],
    ownedKinds: [kinds.Secret, kinds.ConfigMap, kinds.Service, kinds.StatefulSet],
    cluster: { crds: [customResourceDefinition(DATABASE)] },
    // Generated passwords differ between any two runs; that they exist and are kept is what counts.
    normalize: (obj) => normalizeObject(obj.kind === 'Secret' ? withoutData(obj) : obj),
    seeds: simulationSeeds(CLEAN_SEEDS),
    replayFile: FILE,
  });
  t.diagnostic(
    `${report.clean}/${report.seedsRun.length} seeds clean; ${report.faultFreeCalls} calls in the fault-free run`,
  );
  for (const line of report.format().split('\n')) t.diagnostic(line);
  assert.deepEqual(report.failures, [], report.format());
});
