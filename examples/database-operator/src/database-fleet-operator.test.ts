/**
 * The operator with a fleet: the manager engages FakeClient members (a FakeClient host, a
 * FakeClock), the Database controller reconciles each member's Databases there, the DatabaseFleet
 * controller rolls a version out across them, and its RBAC is declared; without a fleet nothing of
 * it is there (config/rbac.yaml is unchanged).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, createMetricsRegistry, patchStatus, type Client } from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import { offlineClient, rbacManifests } from 'operator-runtime/rbac';
import { FakeClient } from 'operator-runtime/testing/fake-client';
import { staticClusters } from 'operator-runtime/fleet';
import { FakeClock } from 'operator-runtime/testing';
import { DATABASE } from './database.js';
import { DATABASE_FLEET } from './database-fleet.js';
import { DEFAULT_ROLLOUT_POLL_MS } from './database-fleet-reconciler.js';
import { STATEFUL_SET } from './database-reconciler.js';
import { createDatabaseOperator, type DatabaseOperatorOptions } from './operator.js';
import { createOperatorUnderTest } from '../testing/operator-rig.js';

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
  assert.deepEqual(fleetRules({ ...BASE, fleet: { members: { provider: staticClusters([]) } } }), [
    'databasefleets/status:patch',
    'databasefleets:list,watch',
  ]);
});

test("the operator with a fleet reconciles each member's Databases there and rolls a DatabaseFleet out, one member at a time", async () => {
  const clock = new FakeClock(Date.UTC(2026, 11, 2));
  const host = new FakeClient({
    clock,
    crds: [customResourceDefinition(DATABASE), customResourceDefinition(DATABASE_FLEET)],
  });
  const members = ['one', 'two'].map((name) => ({
    name,
    client: new FakeClient({
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
    }),
  }));
  const operator = createOperatorUnderTest({
    ...BASE,
    client: host,
    clock,
    fleet: {
      members: { provider: staticClusters(members.map((m) => ({ ...m, labels: { env: 'prod' } }))) },
    },
  });
  assert.ok(operator.fleetController);
  const database = (client: Client) => client.get(DATABASE, 'orders', { namespace: 'shop' });
  /** Steps the fake clock until `until` holds (bounded: a rollout that stalls fails the test). */
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 50; i++) {
      if (await check().catch(() => false)) return;
      await clock.advance(DEFAULT_ROLLOUT_POLL_MS / 4);
    }
    assert.fail(`never: ${what}`);
  };
  /** The member's StatefulSet rolled out (what its controller would report): the Database becomes Ready. */
  const settle = (m: (typeof members)[number]) =>
    until(`${m.name}'s Database is Ready`, async () => {
      const db = await database(m.client);
      const sts = await m.client.get(STATEFUL_SET, 'orders', { namespace: 'shop' });
      if (sts.spec?.template.spec?.containers[0]?.image !== `postgres:${db.spec.version}`) return false;
      if (sts.status?.observedGeneration !== sts.metadata?.generation)
        await patchStatus(m.client, sts, {
          replicas: 1,
          readyReplicas: 1,
          observedGeneration: sts.metadata?.generation,
        });
      return db.status?.phase === 'Ready' && db.status.observedGeneration === db.metadata.generation;
    });
  const stop = new AbortController();
  const running = operator.manager.start(stop.signal);
  try {
    for (const m of members) await settle(m);
    await host.create({
      apiVersion: 'example.com/v1',
      kind: 'DatabaseFleet',
      metadata: { name: 'pg', namespace: 'ops' },
      spec: { version: '16', clusterSelector: { matchLabels: { env: 'prod' } } },
    });
    await until('member one gets 16', async () => (await database(members[0]!.client)).spec.version === '16');
    assert.equal((await database(members[1]!.client)).spec.version, '15');
    await settle(members[0]!);
    await until('member two gets 16', async () => (await database(members[1]!.client)).spec.version === '16');
    await settle(members[1]!);
    await until(
      'the fleet is Consistent',
      async () => (await host.get(DATABASE_FLEET, 'pg', { namespace: 'ops' })).status?.phase === 'Consistent',
    );
    for (const m of members) {
      const sts = await m.client.get(STATEFUL_SET, 'orders', { namespace: 'shop' });
      assert.equal(sts.spec?.template.spec?.containers[0]?.image, 'postgres:16', `${m.name} runs 16`);
    }
  } finally {
    stop.abort();
    await running;
    await operator.close();
  }
});
