/**
 * Sharding against a real kube-apiserver 1.20 (label mode): managers in one process share a ring
 * over 60 Widgets. Every reconcile is recorded (start, end, replica) and no two records of a key may
 * overlap in time, while replicas join, leave, and one is cut off from the API server (it must fence
 * itself before its Widgets are taken over), under a steady stream of spec changes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import { createLogger } from '../logging/create-logger.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { Manager } from '../manager/manager.js';
import { LeaderElector } from '../leader-election/leader-elector.js';
import type { KubeObject } from '../core/object-key.js';
import { FaultProxy } from '../testing/chaos/fault-proxy.js';
import { drainLabel, shardLabel } from './sharding-options.js';
import { openInterval, overlappingIntervals, type ReconcileInterval } from './testing/reconcile-intervals.js';
import { WIDGET_CRD } from '../testing/conformance/client-conformance.js';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };
const RING = 'widgets';
const NAMESPACE = 'default';
const WIDGETS = 60;
// Roomy: a loaded CI machine must not miss a renew deadline (a missed one stops the replica, as it should).
const TIMINGS = { leaseDurationMs: 8_000, renewDeadlineMs: 6_000, retryPeriodMs: 1_000 };

interface Widget extends KubeObject {
  spec: { size: number };
}

describe('sharding on a real API server (label mode)', () => {
  let env: TestEnv;
  let admin: KubeClient;
  const records: ReconcileInterval[] = [];
  const replicas = new Map<
    string,
    { manager: Manager; client: KubeClient; stop: AbortController; running: Promise<void> }
  >();

  async function startReplica(name: string, via?: FaultProxy): Promise<Manager> {
    const client = await KubeClient.fromKubeconfig({
      kubeconfig: (via?.kubeconfig ?? env.kubeconfig) as unknown as Kubeconfig,
      backoff: { maxAttempts: 1 },
    });
    const logger = createLogger({
      level: process.env.SHARDING_TEST_LOG === 'debug' ? 'debug' : process.env.SHARDING_TEST_LOG ? 'info' : 'silent',
    }).child({ replica: name });
    const manager = new Manager({
      client,
      metricsPort: 0,
      healthPort: 0,
      logger,
      gracefulShutdownMs: 5_000,
      leaderElection: new LeaderElector({
        client,
        name: `${RING}-sharder`,
        namespace: NAMESPACE,
        identity: name,
        ...TIMINGS,
        logger,
      }),
      sharding: { ring: RING, namespace: NAMESPACE, identity: name, mode: 'label', ...TIMINGS },
    });
    manager
      .controller('widget')
      .for(WIDGET)
      .withOptions({ maxConcurrentReconciles: 4 })
      .complete(async (req, ctx) => {
        const interval = openInterval(records, `${req.namespace}/${req.name}`, name);
        try {
          await ctx.get();
          // Long enough that a second replica starting on the key would overlap.
          await delay(15, undefined, { signal: ctx.signal }).catch(() => undefined);
        } finally {
          interval.end();
        }
      });
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    // A replica that fences itself rejects on its own; the test that partitions it looks at why.
    running.catch(() => undefined);
    replicas.set(name, { manager, client, stop, running });
    return manager;
  }

  async function stopReplica(name: string): Promise<void> {
    const r = replicas.get(name)!;
    r.stop.abort();
    await r.running;
    await r.client.close();
    replicas.delete(name);
  }

  /** Objects in the replica's sharded Widget informer. */
  function cachedWidgets(manager: Manager): number {
    const informer = manager.informers
      .list()
      .find((i) => i.name.includes('Widget') && i.name.includes(shardLabel(RING)));
    return informer?.reader.list().length ?? 0;
  }

  /** Each Widget's owner; a Widget being handed over (drain label set) counts as unassigned. */
  async function assignment(): Promise<Map<string, string>> {
    const list = await admin.list<Widget>(WIDGET, { namespace: NAMESPACE });
    return new Map(
      list.items.map((w) => [
        w.metadata!.name!,
        w.metadata?.labels?.[drainLabel(RING)] === undefined ? (w.metadata?.labels?.[shardLabel(RING)] ?? '') : '',
      ]),
    );
  }

  /** Every Widget labelled with one of `members`, none draining, and each replica's cache exactly its share. */
  async function settled(members: readonly Manager[]): Promise<Map<string, number> | false> {
    const ids = new Map(members.map((m) => [m.sharding!.memberId, m]));
    const labels = await assignment();
    if (labels.size !== WIDGETS) return false;
    const counts = new Map<string, number>();
    for (const owner of labels.values()) {
      if (!ids.has(owner)) return false;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    for (const [id, m] of ids) if (cachedWidgets(m) !== (counts.get(id) ?? 0)) return false;
    return counts;
  }

  /** Changes every Widget's spec, so each is reconciled again by its owner. */
  async function touchAll(round: number): Promise<void> {
    await Promise.all(
      Array.from({ length: WIDGETS }, (_, i) =>
        admin.patch(
          WIDGET,
          `w-${i}`,
          { spec: { size: 1 + ((round + i) % 10) } },
          { type: 'merge', namespace: NAMESPACE },
        ),
      ),
    );
  }

  before(async () => {
    env = await TestEnv.start({ crds: [WIDGET_CRD] });
    admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    await Promise.all(
      Array.from({ length: WIDGETS }, (_, i) =>
        admin.create<Widget>({
          ...WIDGET,
          metadata: { name: `w-${i}`, namespace: NAMESPACE },
          spec: { size: 1 + (i % 10) },
        }),
      ),
    );
  });

  after(async () => {
    for (const name of [...replicas.keys()]) await stopReplica(name);
    await admin?.close();
    await env?.stop();
  });

  test('three replicas: every Widget assigned, reconciled by its owner only, each cache holding its share', async () => {
    const managers = await Promise.all(['r1', 'r2', 'r3'].map((n) => startReplica(n)));
    const counts = await eventually(
      'every Widget assigned to one of the three, caches matching',
      () => settled(managers),
      { timeoutMs: 60_000 },
    );
    assert.equal(
      [...counts.values()].reduce((a, b) => a + b, 0),
      WIDGETS,
    );
    for (const n of counts.values())
      assert.ok(n > 0, `every replica owns some Widgets: ${JSON.stringify([...counts])}`);
    await eventually('every Widget reconciled', () => new Set(records.map((r) => r.key)).size === WIDGETS, {
      timeoutMs: 30_000,
    });
    const owners = await assignment();
    const byMember = new Map(managers.map((m, i) => [m.sharding!.memberId, `r${i + 1}`]));
    const since = performance.now();
    await touchAll(1);
    await eventually(
      'every Widget reconciled after a spec change',
      () => new Set(records.filter((r) => r.startMs >= since).map((r) => r.key)).size === WIDGETS,
      { timeoutMs: 30_000 },
    );
    for (const r of records.filter((x) => x.startMs >= since)) {
      assert.equal(r.replica, byMember.get(owners.get(r.key.split('/')[1]!)!), `${r.key} reconciled by its owner`);
    }
    assert.deepEqual(overlappingIntervals(records), []);
  });

  test('a replica leaving and one joining move keys with no overlapping reconciles', async () => {
    let round = 2;
    let churning = true;
    const churn = (async () => {
      while (churning) {
        await touchAll(round++);
        await delay(100);
      }
    })();
    try {
      await stopReplica('r1');
      const two = ['r2', 'r3'].map((n) => replicas.get(n)!.manager);
      await eventually('r1’s Widgets moved to r2 and r3', () => settled(two), { timeoutMs: 60_000 });
      const r4 = await startReplica('r4');
      const three = [...two, r4];
      const counts = await eventually(
        'some Widgets handed over to r4',
        async () => {
          const c = await settled(three);
          return c && (c.get(r4.sharding!.memberId) ?? 0) > 0 ? c : false;
        },
        { timeoutMs: 60_000 },
      );
      assert.equal(
        [...counts.values()].reduce((a, b) => a + b, 0),
        WIDGETS,
      );
      const since = performance.now();
      await eventually(
        'r4 reconciles its Widgets',
        () => records.some((r) => r.replica === 'r4' && r.startMs >= since),
        { timeoutMs: 30_000 },
      );
    } finally {
      churning = false;
      await churn;
    }
    assert.deepEqual(overlappingIntervals(records), []);
  });

  test('a partitioned replica fences itself; its Widgets go to the others once its Lease expired, with no overlapping reconciles', async (t) => {
    const proxy = await FaultProxy.start({ upstream: env });
    let round = 100;
    let churning = true;
    let churn: Promise<void> | undefined;
    try {
      const r5 = await startReplica('r5', proxy);
      const before = ['r2', 'r3', 'r4'].map((n) => replicas.get(n)!.manager);
      await eventually(
        'r5 owns some Widgets',
        async () => {
          const c = await settled([...before, r5]);
          return c && (c.get(r5.sharding!.memberId) ?? 0) > 0;
        },
        { timeoutMs: 60_000 },
      );
      churn = (async () => {
        while (churning) {
          await touchAll(round++);
          await delay(100);
        }
      })();
      // Every request of r5 from now on is dropped: it cannot renew its membership Lease.
      const partitionedAt = performance.now();
      proxy.inject({ kind: 'drop' });
      const outcome = await replicas.get('r5')!.running.then(
        () => 'resolved',
        (err: { code?: string }) => err.code,
      );
      const fencedAfterMs = performance.now() - partitionedAt;
      assert.equal(outcome, 'ERR_LEADERSHIP_LOST', 'r5 stopped because it lost its ring membership');
      const ofR5 = records.filter((r) => r.replica === 'r5');
      const keysOfR5 = new Set(ofR5.map((r) => r.key));
      const lastOfR5 = Math.max(...ofR5.map((r) => r.endMs));
      await eventually('r5’s Widgets moved to the three others', () => settled(before), { timeoutMs: 60_000 });
      await eventually(
        'r5’s Widgets reconciled elsewhere',
        () => records.some((r) => r.replica !== 'r5' && keysOfR5.has(r.key) && r.startMs > lastOfR5),
        { timeoutMs: 30_000 },
      );
      const takenOverAfterMs =
        Math.min(
          ...records
            .filter((r) => r.replica !== 'r5' && keysOfR5.has(r.key) && r.startMs > lastOfR5)
            .map((r) => r.startMs),
        ) - partitionedAt;
      t.diagnostic(
        `partitioned r5 stopped ${Math.round(fencedAfterMs)} ms after the partition (renewDeadline ${TIMINGS.renewDeadlineMs} ms); first reconcile of one of its Widgets elsewhere ${Math.round(takenOverAfterMs)} ms after it (leaseDuration ${TIMINGS.leaseDurationMs} ms)`,
      );
      assert.ok(takenOverAfterMs > fencedAfterMs, 'taken over only after r5 stopped');
      assert.ok(
        records.some((r) => r.replica === 'r5'),
        'r5 reconciled Widgets before the partition',
      );
    } finally {
      churning = false;
      await churn;
      const r5 = replicas.get('r5');
      if (r5) {
        r5.stop.abort();
        await r5.running.catch(() => undefined);
        await r5.client.close();
        replicas.delete('r5');
      }
      await proxy.close();
    }
    assert.deepEqual(overlappingIntervals(records), []);
  });
});
