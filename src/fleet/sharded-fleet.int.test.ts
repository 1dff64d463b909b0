/**
 * `fleet: { sharded: true }` through the Manager, on a real kube-apiserver 1.20: two replicas
 * (managers in this process, each with its ring membership and leader election) divide six member
 * clusters, every reconcile recorded with its replica; one replica stops and the other takes its
 * clusters; no two reconciles of one cluster's key ever overlap. The six "members" are six names
 * for the host's own API server (what is sharded here is the clusters' engagement, not their data;
 * member control planes are in fleet.int.test.ts and the chaos scenarios).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeClient } from '../client/kube-client.js';
import type { KubeObject } from '../core/object-key.js';
import { LeaderElector } from '../leader-election/leader-elector.js';
import { Manager } from '../manager/manager.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { openInterval, overlappingIntervals, type ReconcileInterval } from '../sharding/testing/reconcile-intervals.js';
import { ownerOf } from '../sharding/rendezvous.js';
import { staticClusters } from './providers/static-clusters.js';

const RING = 'fleet';
const CLUSTERS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
const TIMINGS = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };
const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' };

describe('a sharded fleet through the manager', () => {
  let env: TestEnv;
  let admin: KubeClient;
  let namespace: string;
  const records: ReconcileInterval[] = [];
  const replicas = new Map<
    string,
    { manager: Manager; client: KubeClient; stop: AbortController; running: Promise<void> }
  >();

  async function startReplica(name: string): Promise<Manager> {
    const client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    const manager = new Manager({
      client,
      metricsPort: 0,
      healthPort: 0,
      gracefulShutdownMs: 5_000,
      leaderElection: new LeaderElector({ client, name: `${RING}-leader`, namespace, identity: name, ...TIMINGS }),
      sharding: { ring: RING, namespace, identity: name, mode: 'label', ...TIMINGS },
      fleet: {
        provider: staticClusters(CLUSTERS.map((cluster) => ({ name: cluster, kubeconfig: env.kubeconfig }))),
        sharded: true,
      },
    });
    manager
      .fleetController('config-maps')
      .for<KubeObject>(CONFIG_MAP)
      .withOptions({ maxConcurrentReconciles: 4 })
      .complete(async (request, ctx) => {
        if (request.namespace !== namespace) return;
        const interval = openInterval(records, `${request.cluster}/${request.name}`, name);
        try {
          await delay(20, undefined, { signal: ctx.signal }).catch(() => undefined);
        } finally {
          interval.end();
        }
      });
    const stop = new AbortController();
    replicas.set(name, { manager, client, stop, running: manager.start(stop.signal) });
    return manager;
  }

  async function stopReplica(name: string): Promise<void> {
    const r = replicas.get(name)!;
    r.stop.abort();
    await r.running;
    await r.client.close();
    replicas.delete(name);
  }

  const engagedBy = (name: string): string[] =>
    replicas
      .get(name)!
      .manager.fleet!.clusters()
      .map((c) => c.name)
      .sort();

  before(async () => {
    env = await TestEnv.start();
    admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    namespace = await env.createNamespace('fleet-shard');
  });
  after(async () => {
    for (const name of [...replicas.keys()]) await stopReplica(name);
    await admin?.close();
    await env?.stop();
  });

  test('two replicas divide six clusters, one stops and the other takes them all, no reconcile overlaps', async () => {
    for (let i = 0; i < 3; i++)
      await admin.create({ ...CONFIG_MAP, metadata: { name: `cm-${i}`, namespace }, data: { v: '0' } });
    await startReplica('a');
    await startReplica('b');
    // Rendezvous over the two member ids decides who should hold what; wait until that holds.
    const ids = { a: replicas.get('a')!.manager.sharding!.memberId, b: replicas.get('b')!.manager.sharding!.memberId };
    const expected = (replica: 'a' | 'b'): string[] =>
      CLUSTERS.filter((c) => ownerOf(c, [ids.a, ids.b]) === ids[replica]).sort();
    await eventually(
      'the clusters divided as rendezvous hashing assigns them, each engaged by exactly one replica',
      () =>
        JSON.stringify(engagedBy('a')) === JSON.stringify(expected('a')) &&
        JSON.stringify(engagedBy('b')) === JSON.stringify(expected('b')),
      { timeoutMs: 30_000 },
    );
    console.log(`sharded fleet: a engaged ${engagedBy('a').join(',')}; b engaged ${engagedBy('b').join(',')}`);
    let writes = 0;
    const churn = (async () => {
      for (; replicas.size > 0 && writes < 200; writes++) {
        await admin.patch(
          CONFIG_MAP,
          `cm-${writes % 3}`,
          { data: { v: String(writes) } },
          { type: 'merge', namespace },
        );
        await delay(50);
      }
    })();
    await delay(2_000);
    const stoppedAt = Date.now();
    await stopReplica('a');
    await eventually('b engaged every cluster', () => engagedBy('b').length === CLUSTERS.length, {
      timeoutMs: TIMINGS.leaseDurationMs * 3,
    });
    const takeoverMs = Date.now() - stoppedAt;
    console.log(`sharded fleet: a stopped cleanly → b engaged all six ${takeoverMs} ms later`);
    await delay(1_000);
    writes = 200;
    await churn;
    assert.ok(takeoverMs < TIMINGS.leaseDurationMs * 2, `takeover in ${takeoverMs} ms`);
    assert.deepEqual(overlappingIntervals(records), [], 'no two reconciles of one cluster key at once');
    assert.ok(records.some((r) => r.replica === 'b'));
  });
});
