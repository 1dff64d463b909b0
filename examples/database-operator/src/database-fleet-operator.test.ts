/**
 * createDatabaseOperator with a fleet: the DatabaseFleet controller runs on the manager (a
 * FakeClient host, FakeClient members, a FakeClock) and its RBAC is declared; without a fleet
 * nothing of it is there (config/rbac.yaml is unchanged).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, createMetricsRegistry, patchStatus } from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import { offlineClient, rbacManifests } from 'operator-runtime/rbac';
import { FakeClient } from 'operator-runtime/testing/fake-client';
import { FakeClock } from 'operator-runtime/testing';
import { DATABASE } from './database.js';
import { DATABASE_FLEET } from './database-fleet.js';
import { DEFAULT_ROLLOUT_POLL_MS, type FleetMemberView } from './database-fleet-reconciler.js';
import { createDatabaseOperator, type DatabaseOperatorOptions } from './operator.js';

const BASE = {
  registry: createMetricsRegistry(),
  logger: createLogger({ level: 'silent' }),
  backupEndpoint: 'http://backup.invalid:8090',
  metricsPort: 0,
  healthPort: 0,
} satisfies Omit<DatabaseOperatorOptions, 'client'>;

function fleetRules(options: Omit<DatabaseOperatorOptions, 'client' | 'registry'>): string[] {
  const { manager } = createDatabaseOperator({
    ...options,
    client: offlineClient(),
    registry: createMetricsRegistry(),
  });
  const rules: string[] = [];
  for (const m of rbacManifests(manager, {
    name: 'database-operator',
    serviceAccount: { name: 'database-operator', namespace: 'database-operator-system' },
  })) {
    if (!('rules' in m) || !Array.isArray(m.rules)) continue;
    for (const r of m.rules)
      for (const res of r.resources ?? [])
        if (res.startsWith('databasefleets')) rules.push(`${res}:${r.verbs.join(',')}`);
  }
  return rules.sort();
}

test('with a fleet the operator declares what the DatabaseFleet controller needs in the host cluster, and no more', () => {
  assert.deepEqual(fleetRules(BASE), []);
  assert.deepEqual(fleetRules({ ...BASE, fleet: { view: { clusters: () => [] } } }), [
    'databasefleets/status:patch',
    'databasefleets:list,watch',
  ]);
});

test('the operator with a fleet rolls a DatabaseFleet out through its manager, one member at a time', async () => {
  const clock = new FakeClock(Date.UTC(2026, 11, 2));
  const host = new FakeClient({
    clock,
    crds: [customResourceDefinition(DATABASE), customResourceDefinition(DATABASE_FLEET)],
  });
  const members: FleetMemberView[] = ['one', 'two'].map((name) => {
    const fake = new FakeClient({
      clock,
      crds: [customResourceDefinition(DATABASE)],
      objects: [
        {
          apiVersion: 'example.com/v1',
          kind: 'Database',
          metadata: { name: 'orders', namespace: 'shop' },
          spec: { engine: 'postgres', version: '15', replicas: 1, storage: '1Gi' },
        },
      ],
    });
    return { name, labels: { env: 'prod' }, client: fake, apiClient: fake, synced: true };
  });
  const operator = createDatabaseOperator({
    ...BASE,
    client: host,
    clock,
    fleet: { view: { clusters: () => members } },
  });
  assert.ok(operator.fleetController && operator.memberReconciler);
  const version = async (m: FleetMemberView) =>
    (await m.client.get(DATABASE, 'orders', { namespace: 'shop' })).spec.version;
  /** Steps the fake clock until `until` holds (bounded: a rollout that stalls fails the test). */
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 50; i++) {
      if (await check()) return;
      await clock.advance(DEFAULT_ROLLOUT_POLL_MS / 4);
    }
    assert.fail(`never: ${what}`);
  };
  const settle = async (m: FleetMemberView) => {
    const db = await m.client.get(DATABASE, 'orders', { namespace: 'shop' });
    const at = new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    await patchStatus(m.client, db, {
      phase: 'Ready',
      conditions: [{ type: 'Ready', status: 'True', reason: 'ReplicasReady', message: '1/1', lastTransitionTime: at }],
    });
  };
  const stop = new AbortController();
  const running = operator.manager.start(stop.signal);
  try {
    await host.create({
      apiVersion: 'example.com/v1',
      kind: 'DatabaseFleet',
      metadata: { name: 'pg', namespace: 'ops' },
      spec: { version: '16', clusterSelector: { matchLabels: { env: 'prod' } } },
    });
    await until('member one gets 16', async () => (await version(members[0]!)) === '16');
    assert.equal(await version(members[1]!), '15');
    await settle(members[0]!);
    await until('member two gets 16', async () => (await version(members[1]!)) === '16');
    await settle(members[1]!);
    await until(
      'the fleet is Consistent',
      async () => (await host.get(DATABASE_FLEET, 'pg', { namespace: 'ops' })).status?.phase === 'Consistent',
    );
  } finally {
    stop.abort();
    await running;
    await operator.close();
  }
});
