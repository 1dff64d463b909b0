/**
 * shardedClusters against a real API server (1.20): two replicas divide six member clusters with
 * real Leases; a kill -9 (in process: every request of the victim fails from one instant on, so it
 * neither renews nor releases) hands its clusters to the survivor. Clusters are plain names: the
 * fleet side is the fake one of the unit tests, recording engagements as intervals.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import { realClock } from '../core/clock.js';
import { seededRandom } from '../core/seeded-random.js';
import { JITTER_FACTOR } from '../leader-election/leader-elector-options.js';
import { LEASE_TYPE, holderOf, type Lease } from '../leader-election/lease-record.js';
import { createLogger } from '../logging/create-logger.js';
import { resolveShardingOptions } from '../sharding/sharding-options.js';
import { overlappingIntervals, type ReconcileInterval } from '../sharding/testing/reconcile-intervals.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { staticClusters } from './providers/static-clusters.js';
import { cuttableClient, fakeFleet, type FakeFleet } from './testing/sharded-clusters-harness.js';
import { clusterLeaseName, shardedClusters } from './sharded-clusters.js';

const TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
const DRAIN_MS = 100;
const NAMESPACE = 'default';
const CLUSTERS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
/** Real API calls and timers on a shared 2-core machine: the reads, the reclaim and the acquire. */
const LATENCY_MARGIN_MS = 1_000;

describe('shardedClusters on a real API server', () => {
  let env: TestEnv;
  let admin: KubeClient;
  const intervals: ReconcileInterval[] = [];
  const replicas: {
    name: string;
    fleet: FakeFleet;
    client: KubeClient;
    cut(): void;
    stop: AbortController;
    done: Promise<void>;
  }[] = [];

  async function startReplica(name: string, seed: number): Promise<(typeof replicas)[number]> {
    const random = seededRandom(seed);
    const sharding = resolveShardingOptions(
      { ring: 'fleet', namespace: NAMESPACE, identity: name, ...TIMINGS },
      random,
    );
    const client = await KubeClient.fromKubeconfig({
      kubeconfig: env.kubeconfig as unknown as Kubeconfig,
      backoff: { maxAttempts: 1 },
    });
    const net = cuttableClient(client);
    const fleet = fakeFleet(name, intervals, realClock, DRAIN_MS);
    const logger = createLogger({ level: process.env.FLEET_SHARDING_TEST_LOG ? 'info' : 'silent' }).child({
      replica: name,
    });
    const provider = shardedClusters(staticClusters(CLUSTERS.map((c) => ({ name: c, client: admin }))), {
      client: net.client,
      sharding,
      logger,
      random,
    });
    const stop = new AbortController();
    const done = provider.start(stop.signal, fleet.events).catch(() => undefined);
    const r = { name, fleet, client, cut: net.cut, stop, done };
    replicas.push(r);
    return r;
  }

  const divided = (rs: readonly { fleet: FakeFleet }[]): boolean => {
    const all = rs.flatMap((r) => r.fleet.engaged());
    return all.length === CLUSTERS.length && new Set(all).size === CLUSTERS.length;
  };

  before(async () => {
    env = await TestEnv.start();
    admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
  });

  after(async () => {
    for (const r of replicas) r.stop.abort();
    await Promise.all(replicas.map((r) => r.done));
    for (const r of replicas) await r.client.close();
    await admin?.close();
    await env?.stop();
  });

  test('two replicas divide six clusters with real Leases; after a kill -9 the survivor holds all six within leaseDuration + retryPeriod, with 0 overlapping engagements', async (t) => {
    // Seeds whose member ids split the six 3/3 (as in the unit tests).
    const a = await startReplica('replica-a', 11);
    const b = await startReplica('replica-b', 12);
    const startedAt = performance.now();
    await eventually(
      'the six clusters divided, both replicas holding some',
      () => divided([a, b]) && a.fleet.engaged().length > 0 && b.fleet.engaged().length > 0,
      { timeoutMs: 30_000 },
    );
    t.diagnostic(
      `divided in ${Math.round(performance.now() - startedAt)} ms: a=${a.fleet.engaged().join(',')} b=${b.fleet.engaged().join(',')}`,
    );
    for (const c of a.fleet.engaged()) {
      const lease = await admin.get<Lease>(LEASE_TYPE, clusterLeaseName('fleet', c), { namespace: NAMESPACE });
      assert.equal(holderOf(lease), 'replica-a', `the Lease of ${c} names its holder`);
    }
    // A few renew periods of steady state.
    await new Promise((r) => setTimeout(r, 2 * TIMINGS.retryPeriodMs));
    assert.equal(divided([a, b]), true);

    const killedAt = performance.now();
    a.cut();
    a.fleet.die();
    await eventually('the survivor holds all six', () => b.fleet.engaged().length === CLUSTERS.length, {
      timeoutMs: 4 * TIMINGS.leaseDurationMs,
      intervalMs: 20,
    });
    const failoverMs = performance.now() - killedAt;
    const bound = TIMINGS.leaseDurationMs + TIMINGS.retryPeriodMs * JITTER_FACTOR + DRAIN_MS;
    t.diagnostic(
      `kill -9: survivor holds all six ${Math.round(failoverMs)} ms after the kill (bound ${bound} ms + ${LATENCY_MARGIN_MS} ms margin)`,
    );
    assert.ok(failoverMs <= bound + LATENCY_MARGIN_MS, `took ${Math.round(failoverMs)} ms`);
    assert.deepEqual(overlappingIntervals(intervals), []);

    // The survivor shuts down cleanly: every cluster Lease released after its engagement ended.
    b.stop.abort();
    await b.done;
    assert.deepEqual(b.fleet.engaged(), []);
    for (const c of CLUSTERS) {
      const lease = await admin.get<Lease>(LEASE_TYPE, clusterLeaseName('fleet', c), { namespace: NAMESPACE });
      assert.equal(holderOf(lease), '', `${c} released`);
    }
  });
});
