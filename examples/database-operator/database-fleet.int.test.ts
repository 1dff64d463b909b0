/**
 * The DatabaseFleet against real API servers: the generated CRD (config/crd.yaml) is accepted and
 * enforced by kube-apiserver 1.20 and the 1.36 CRD-only server (the server is the oracle for the
 * schema), and the reconciler rolls a version out across three member API servers one at a time,
 * halting on a Degraded member and resuming after it recovers. Each member's Database operator is
 * played by `settle`/`degrade` (status writes as its reconciler makes them); the reconciler is
 * driven reconcile by reconcile, so the test decides when time passes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, KubeClient, isNotFound, patchStatus, type ClusterView, type Kubeconfig } from 'operator-runtime';
import { TestEnv, readManifests, recordingLogger } from 'operator-runtime/testing';
import { DATABASE } from './src/database.js';
import { DATABASE_FLEET } from './src/database-fleet.js';
import { DatabaseFleetReconciler } from './src/database-fleet-reconciler.js';

const CRDS = await readManifests(new URL('./config/crd.yaml', import.meta.url));
const NS = 'default';

async function clientOf(env: TestEnv): Promise<KubeClient> {
  return KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
}

for (const server of ['kube-apiserver', 'modern'] as const) {
  describe(`the DatabaseFleet CRD on ${server === 'modern' ? 'the 1.36 CRD-only server' : 'kube-apiserver 1.20'}`, () => {
    let env: TestEnv;
    let client: KubeClient;
    before(async () => {
      env = await TestEnv.start({ crds: CRDS, server });
      client = await clientOf(env);
    });
    after(async () => {
      await client?.close();
      await env?.stop();
    });

    test('a DatabaseFleet with matchLabels and matchExpressions is stored as sent; its status goes through /status', async () => {
      const spec = {
        version: '16',
        clusterSelector: {
          matchLabels: { env: 'prod' },
          matchExpressions: [{ key: 'region', operator: 'In', values: ['eu', 'us'] }],
        },
        databaseSelector: { matchLabels: { tier: 'gold' } },
      };
      await client.create({
        apiVersion: 'example.com/v1',
        kind: 'DatabaseFleet',
        metadata: { name: 'stored', namespace: NS },
        spec: { ...spec, unknownField: 'pruned' },
      });
      const fleet = await client.get(DATABASE_FLEET, 'stored', { namespace: NS });
      assert.deepEqual(fleet.spec, spec, 'unknown fields pruned, the rest kept');
      const { object } = await patchStatus(client, fleet, {
        phase: 'RollingOut',
        targetVersion: '16',
        currentCluster: 'a',
        clusters: [{ name: 'a', state: 'Upgrading', databases: 1, ready: 0, versions: ['15', '16'], message: 'x' }],
      });
      assert.equal(object.status?.clusters?.[0]?.state, 'Upgrading');
      assert.equal(object.metadata.generation, fleet.metadata.generation, '/status does not bump generation');
    });

    test('the server refuses what the schema forbids: a version that is not one, a cluster state that is not one', async () => {
      const err = await client
        .create({
          apiVersion: 'example.com/v1',
          kind: 'DatabaseFleet',
          metadata: { name: 'bad-version', namespace: NS },
          spec: { version: 'latest', clusterSelector: {} },
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(err instanceof ApiError && err.status === 422, `422 for version "latest" (got ${String(err)})`);
      assert.match(err.message, /spec\.version/);
      await client.create({
        apiVersion: 'example.com/v1',
        kind: 'DatabaseFleet',
        metadata: { name: 'bad-state', namespace: NS },
        spec: { version: '16', clusterSelector: {} },
      });
      const statusErr = await client
        .patchStatus(
          DATABASE_FLEET,
          'bad-state',
          {
            status: { clusters: [{ name: 'a', state: 'Sideways', databases: 0, ready: 0, versions: [], message: '' }] },
          },
          { namespace: NS },
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(
        statusErr instanceof ApiError && statusErr.status === 422,
        `422 for state Sideways (got ${String(statusErr)})`,
      );
    });
  });
}

describe('a DatabaseFleet rollout across three member API servers (1.36 CRD-only servers)', () => {
  const envs: TestEnv[] = [];
  const clients: KubeClient[] = [];
  let host: KubeClient;
  const members: ClusterView[] = [];
  const events: string[] = [];

  before(async () => {
    // One at a time: the machine is shared, and each start is an etcd plus an API server.
    for (const name of ['host', 'member-a', 'member-b', 'member-c']) {
      const env = await TestEnv.start({ crds: CRDS, server: 'modern' });
      envs.push(env);
      const client = await clientOf(env);
      clients.push(client);
      if (name === 'host') host = client;
      else {
        await client.create({
          apiVersion: 'example.com/v1',
          kind: 'Database',
          metadata: { name: 'orders', namespace: NS },
          spec: { engine: 'postgres', version: '15', replicas: 1, storage: '1Gi' },
        });
        members.push({ name, labels: { env: 'prod' }, client, apiClient: client, synced: true });
      }
    }
  });
  after(async () => {
    for (const c of clients) await c.close();
    for (const e of envs) await e.stop();
  });

  const version = async (m: ClusterView) => (await m.client.get(DATABASE, 'orders', { namespace: NS })).spec.version;
  const versions = async () => Promise.all(members.map(version));
  const setStatus = async (m: ClusterView, degraded: boolean) => {
    const db = await m.client.get(DATABASE, 'orders', { namespace: NS });
    await patchStatus(m.client, db, {
      phase: degraded ? 'Degraded' : 'Ready',
      conditions: [
        {
          type: 'Ready',
          status: degraded ? 'False' : 'True',
          reason: degraded ? 'ReplicasNotReady' : 'ReplicasReady',
          message: degraded ? '0/1 replicas ready' : '1/1 replicas ready',
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      ],
    });
  };

  test('one member at a time; halts on a Degraded member and touches no other; resumes after it recovers; ends with all on 16', async () => {
    const reconciler = new DatabaseFleetReconciler({
      client: host,
      fleet: { clusters: () => members },
      recorder: { event: (_o, _t, reason, message) => void events.push(`${reason}: ${message}`) },
    });
    await host.create({
      apiVersion: 'example.com/v1',
      kind: 'DatabaseFleet',
      metadata: { name: 'pg', namespace: NS },
      spec: { version: '16', clusterSelector: { matchLabels: { env: 'prod' } } },
    });
    const reconcile = () =>
      reconciler.reconcile(
        { namespace: NS, name: 'pg' },
        {
          signal: AbortSignal.timeout(30_000),
          log: recordingLogger(),
          reconcileID: 'int',
          cluster: { name: '', labels: {}, client: host, apiClient: host, synced: true },
          get: () =>
            host.get(DATABASE_FLEET, 'pg', { namespace: NS }).catch((err: unknown) => {
              if (isNotFound(err)) return undefined;
              throw err;
            }),
        },
      );
    const phase = async () => (await host.get(DATABASE_FLEET, 'pg', { namespace: NS })).status?.phase;

    await reconcile();
    assert.deepEqual(await versions(), ['16', '15', '15']);
    await reconcile(); // not Ready yet: waits
    assert.deepEqual(await versions(), ['16', '15', '15']);
    await setStatus(members[0]!, false);
    await reconcile();
    assert.deepEqual(await versions(), ['16', '16', '15']);
    await setStatus(members[1]!, true); // member-b turns Degraded on 16
    for (let i = 0; i < 3; i++) {
      await reconcile();
      assert.equal(await phase(), 'Halted');
      assert.deepEqual(await versions(), ['16', '16', '15'], 'member-c untouched while halted');
    }
    await setStatus(members[1]!, false);
    await reconcile();
    assert.deepEqual(await versions(), ['16', '16', '16']);
    await setStatus(members[2]!, false);
    await reconcile();
    assert.equal(await phase(), 'Consistent');
    const fleet = await host.get(DATABASE_FLEET, 'pg', { namespace: NS });
    assert.deepEqual(
      fleet.status?.clusters?.map((c) => `${c.name}:${c.state}`),
      ['member-a:UpToDate', 'member-b:UpToDate', 'member-c:UpToDate'],
    );
    assert.equal(fleet.status?.observedGeneration, fleet.metadata.generation);
    assert.deepEqual(
      events.map((e) => e.split(':')[0]),
      [
        'RolloutStarted',
        'ClusterUpgradeStarted',
        'ClusterUpgraded',
        'ClusterUpgradeStarted',
        'RolloutHalted',
        'ClusterUpgraded',
        'RolloutResumed',
        'ClusterUpgradeStarted',
        'ClusterUpgraded',
        'RolloutComplete',
      ],
    );
  });
});
