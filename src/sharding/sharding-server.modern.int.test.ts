/**
 * Sharding in server-side mode on Kubernetes 1.36 with `ShardedListAndWatch`: `mode: 'auto'` probes
 * the CRD-only server and picks `server`; each replica's informer selects its hash buckets of
 * `metadata.uid`, so the server sends it only its share. The membership and sharder Leases live on
 * the 1.20 API server the modern one delegates to (it serves no Leases).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import { createLogger } from '../logging/create-logger.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { NOTE_CRD } from '../testing/conformance/client-conformance.js';
import { Manager } from '../manager/manager.js';
import type { Sharding } from './sharding.js';
import { LeaderElector } from '../leader-election/leader-elector.js';
import type { KubeObject } from '../core/object-key.js';
import { bucketOf, bucketOwner } from './buckets.js';
import { shardLabel } from './sharding-options.js';
import { openInterval, overlappingIntervals, type ReconcileInterval } from './testing/reconcile-intervals.js';

const NOTE = { apiVersion: 'example.com/v1', kind: 'Note' };
const RING = 'notes';
const LEASE_NAMESPACE = 'default';
const NAMESPACE = 'sharded-notes';
const NOTES = 60;
// Roomy: a loaded CI machine must not miss a renew deadline (a missed one stops the replica, as it should).
const TIMINGS = { leaseDurationMs: 8_000, renewDeadlineMs: 6_000, retryPeriodMs: 1_000 };

describe('sharding on Kubernetes 1.36 with ShardedListAndWatch (server-side mode)', () => {
  let env: TestEnv;
  let admin: KubeClient;
  const intervals: ReconcileInterval[] = [];
  const replicas = new Map<
    string,
    { manager: Manager; clients: KubeClient[]; stop: AbortController; running: Promise<void> }
  >();

  async function startReplica(name: string): Promise<Manager> {
    const client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
    const leaseClient = await KubeClient.fromKubeconfig({
      kubeconfig: env.authDelegate!.kubeconfig as unknown as Kubeconfig,
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
        client: leaseClient,
        name: `${RING}-sharder`,
        namespace: LEASE_NAMESPACE,
        identity: name,
        ...TIMINGS,
        logger,
      }),
      sharding: { ring: RING, namespace: LEASE_NAMESPACE, identity: name, mode: 'auto', leaseClient, ...TIMINGS },
    });
    manager
      .controller('note')
      .for(NOTE)
      .complete(async (req, ctx) => {
        const interval = openInterval(intervals, `${req.namespace}/${req.name}`, name);
        try {
          await ctx.get();
          await delay(15, undefined, { signal: ctx.signal }).catch(() => undefined);
        } finally {
          interval.end();
        }
      });
    const stop = new AbortController();
    replicas.set(name, { manager, clients: [client, leaseClient], stop, running: manager.start(stop.signal) });
    return manager;
  }

  async function stopReplica(name: string): Promise<void> {
    const r = replicas.get(name)!;
    r.stop.abort();
    await r.running;
    for (const c of r.clients) await c.close();
    replicas.delete(name);
  }

  /** Notes in the replica's range informer (sharding's own, not the manager's cache). */
  async function cached(manager: Manager): Promise<KubeObject[]> {
    // The manager shows its ring as ShardMembership; the range informer is sharding's internal.
    const informers = await (manager.sharding as Sharding).primaryInformers(NOTE, () =>
      Promise.reject(new Error('not in server mode')),
    );
    return informers.flatMap((i) => i.reader.list());
  }

  async function notes(): Promise<KubeObject[]> {
    return (await admin.list<KubeObject>(NOTE, { namespace: NAMESPACE })).items;
  }

  /** Why `settled` last said no (shown when it times out). */
  let notSettled = '';

  /** Every Note labelled with the owner of its bucket, each replica caching exactly its buckets' Notes. */
  async function settled(members: readonly Manager[]): Promise<Map<string, number> | false> {
    const live = members.map((m) => m.sharding!.memberId).sort();
    const all = await notes();
    const counts = new Map<string, number>();
    const wrong = all.filter((note) => note.metadata?.labels?.[shardLabel(RING)] !== bucketOwner(bucketOf(note), live));
    if (wrong.length > 0) {
      notSettled = `${wrong.length} Notes not (yet) labelled with their bucket's owner, e.g. ${JSON.stringify(wrong[0]!.metadata?.labels ?? {})}`;
      return false;
    }
    for (const note of all)
      counts.set(bucketOwner(bucketOf(note), live)!, (counts.get(bucketOwner(bucketOf(note), live)!) ?? 0) + 1);
    for (const m of members) {
      const mine = await cached(m);
      const foreign = mine.filter((n) => bucketOwner(bucketOf(n), live) !== m.sharding!.memberId).length;
      if (mine.length !== (counts.get(m.sharding!.memberId) ?? 0) || foreign > 0) {
        notSettled = `${m.sharding!.memberId} caches ${mine.length} Notes (${foreign} outside its buckets), owns ${counts.get(m.sharding!.memberId) ?? 0}`;
        return false;
      }
    }
    return counts;
  }

  async function untilSettled<T>(what: string, check: () => Promise<T | false>): Promise<T> {
    try {
      return await eventually(what, check, { timeoutMs: 60_000 });
    } catch (err) {
      throw new Error(`${String(err)}; last: ${notSettled}`, { cause: err });
    }
  }

  before(async () => {
    env = await TestEnv.start({ server: 'modern', featureGates: { ShardedListAndWatch: true }, crds: [NOTE_CRD] });
    admin = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
    for (let i = 0; i < NOTES; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          admin.create<KubeObject>({ ...NOTE, metadata: { name: `n-${i + j}`, namespace: NAMESPACE } }),
        ),
      );
    }
  });

  after(async () => {
    for (const name of [...replicas.keys()]) await stopReplica(name);
    await admin?.close();
    await env?.stop();
  });

  test('auto picks server mode; each replica caches only its buckets’ Notes and reconciles only its own', async (t) => {
    const managers = await Promise.all(['s1', 's2'].map((n) => startReplica(n)));
    const counts = await untilSettled('every Note assigned to its bucket’s owner, caches matching', () =>
      settled(managers),
    );
    t.diagnostic(`server mode, 2 replicas, ${NOTES} Notes: cached ${[...counts.values()].join(' + ')}`);
    for (const m of managers) assert.equal(m.sharding!.mode, 'server');
    assert.equal(
      [...counts.values()].reduce((a, b) => a + b, 0),
      NOTES,
    );
    await eventually('every Note reconciled', () => new Set(intervals.map((r) => r.key)).size === NOTES, {
      timeoutMs: 30_000,
    });
    assert.deepEqual(overlappingIntervals(intervals), []);
  });

  test('a third replica joining takes its buckets over (drain, acknowledge, relist) with no overlapping reconciles', async (t) => {
    let churning = true;
    let round = 0;
    const churn = (async () => {
      while (churning) {
        round++;
        await Promise.all(
          Array.from({ length: NOTES }, (_, i) =>
            admin.patch(NOTE, `n-${i}`, { data: { round: String(round) } }, { type: 'merge', namespace: NAMESPACE }),
          ),
        );
        await delay(100);
      }
    })();
    try {
      const s3 = await startReplica('s3');
      const three = ['s1', 's2', 's3'].map((n) => replicas.get(n)!.manager);
      const counts = await untilSettled('the Notes of s3’s buckets moved to it', async () => {
        const c = await settled(three);
        return c && (c.get(s3.sharding!.memberId) ?? 0) > 0 ? c : false;
      });
      t.diagnostic(`after the join: cached ${[...counts.values()].join(' + ')}`);
    } finally {
      churning = false;
      await churn;
    }
    assert.deepEqual(overlappingIntervals(intervals), []);
  });
});
