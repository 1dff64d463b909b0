import { test } from 'node:test';
import assert from 'node:assert/strict';
import { whenAborted } from '../core/abort.js';
import { FakeClock } from '../core/fake-clock.js';
import { silentLogger } from '../core/logger.js';
import { seededRandom } from '../core/seeded-random.js';
import { JITTER_FACTOR } from '../leader-election/leader-elector-options.js';
import { LEASE_TYPE, holderOf, type Lease } from '../leader-election/lease-record.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { resolveShardingOptions } from '../sharding/sharding-options.js';
import { overlappingIntervals, type ReconcileInterval } from '../sharding/testing/reconcile-intervals.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import type { ClusterProvider } from './cluster-provider.js';
import { staticClusters } from './providers/static-clusters.js';
import { cuttableClient, fakeFleet } from './testing/sharded-clusters-harness.js';
import { CLUSTER_LABEL, CLUSTER_RING_LABEL, clusterLeaseName, shardedClusters } from './sharded-clusters.js';

const TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
/** How long a disengaged cluster's in-flight reconcile takes to end (the fake fleet). */
const DRAIN_MS = 100;
const CLUSTERS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];

interface Bed {
  readonly clock: FakeClock;
  readonly api: FakeClient;
  /** Every engagement of every replica, on the fake clock (a cluster is the key). */
  readonly intervals: ReconcileInterval[];
  start(name: string): Replica;
}

interface Replica {
  readonly name: string;
  readonly memberId: string;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  /** Clusters engaged now. */
  engaged(): string[];
  /** kill -9: every request fails from now on (no renew, no release), its engagements end now. */
  kill(): void;
  /** Cut from the API server but alive: it must fence itself (its engagements end only by disengage). */
  partition(): void;
}

function bed(): Bed {
  const clock = new FakeClock();
  const api = new FakeClient({ clock });
  const intervals: ReconcileInterval[] = [];
  // Seeds whose member ids split the six 3/3, and give a third replica two of them.
  let seed = 11;
  const start = (name: string): Replica => {
    const random = seededRandom(seed++);
    const sharding = resolveShardingOptions({ ring: 'fleet', namespace: 'ops', identity: name, ...TIMINGS }, random);
    const net = cuttableClient(api);
    const fleet = fakeFleet(name, intervals, clock, DRAIN_MS);
    const inner = staticClusters(CLUSTERS.map((c) => ({ name: c, client: api })));
    const provider = shardedClusters(inner, {
      client: net.client,
      sharding,
      clock,
      logger: silentLogger,
      registry: createMetricsRegistry(),
      random,
    });
    const stop = new AbortController();
    const done = provider.start(stop.signal, fleet.events).catch(() => undefined);
    return {
      name,
      memberId: sharding.memberId,
      stop,
      done,
      engaged: () => fleet.engaged(),
      kill: () => {
        net.cut();
        fleet.die();
      },
      partition: () => net.cut(),
    };
  };
  return { clock, api, intervals, start };
}

/** Advances the fake clock in steps until `done()` holds; returns the fake time it took, or Infinity. */
async function until(clock: FakeClock, done: () => boolean, limitMs: number, stepMs = 10): Promise<number> {
  const from = clock.monotonicNow();
  while (!done()) {
    if (clock.monotonicNow() - from > limitMs) return Infinity;
    await clock.advance(stepMs);
  }
  return clock.monotonicNow() - from;
}

function divided(replicas: readonly Replica[]): boolean {
  const all = replicas.flatMap((r) => r.engaged());
  return all.length === CLUSTERS.length && new Set(all).size === CLUSTERS.length;
}

async function shutdown(b: Bed, replicas: readonly Replica[]): Promise<void> {
  for (const r of replicas) r.stop.abort();
  const settled = Promise.all(replicas.map((r) => r.done));
  let finished = false;
  void settled.then(() => (finished = true));
  assert.notEqual(await until(b.clock, () => finished, 60_000, 100), Infinity, 'every replica stopped');
}

test('two replicas divide six member clusters: each engaged by exactly one, both hold some, one Lease per cluster labelled with the ring', async () => {
  const b = bed();
  const a = b.start('replica-a');
  const c = b.start('replica-b');
  const tookMs = await until(
    b.clock,
    () => divided([a, c]) && a.engaged().length > 0 && c.engaged().length > 0,
    20_000,
  );
  assert.notEqual(tookMs, Infinity, `divided: a=${a.engaged().join(',')} b=${c.engaged().join(',')}`);
  // Stays divided (no flapping) for a while.
  await b.clock.advance(5_000);
  assert.equal(divided([a, c]), true);
  assert.deepEqual(overlappingIntervals(b.intervals), []);
  const lease = await b.api.get<Lease>(LEASE_TYPE, clusterLeaseName('fleet', 'alpha'), { namespace: 'ops' });
  assert.deepEqual(lease.metadata?.labels, { [CLUSTER_RING_LABEL]: 'fleet', [CLUSTER_LABEL]: 'alpha' });
  const holder = a.engaged().includes('alpha') ? 'replica-a' : 'replica-b';
  assert.equal(holderOf(lease), holder);
  await shutdown(b, [a, c]);
});

test('kill -9 of one replica: the survivor engages all six within leaseDuration + retryPeriod (+ jitter), never overlapping', async (t) => {
  const b = bed();
  const a = b.start('replica-a');
  const c = b.start('replica-b');
  assert.notEqual(
    await until(b.clock, () => divided([a, c]) && a.engaged().length > 0 && c.engaged().length > 0, 20_000),
    Infinity,
  );
  await b.clock.advance(2_000);
  const victim = a.engaged().length >= c.engaged().length ? a : c;
  const survivor = victim === a ? c : a;
  const lost = victim.engaged();
  victim.kill();
  const bound = TIMINGS.leaseDurationMs + TIMINGS.retryPeriodMs * JITTER_FACTOR + DRAIN_MS;
  const failoverMs = await until(b.clock, () => survivor.engaged().length === CLUSTERS.length, 4 * bound);
  t.diagnostic(`kill -9: ${lost.length} clusters taken over in ${failoverMs} ms of fake time (bound ${bound} ms)`);
  assert.ok(failoverMs <= bound, `took ${failoverMs} ms, bound ${bound} ms`);
  assert.deepEqual(overlappingIntervals(b.intervals), []);
  victim.stop.abort();
  await shutdown(b, [survivor, victim]);
});

test('a replica cut from the API server disengages its clusters (drained) before the survivor can engage them', async (t) => {
  const b = bed();
  const a = b.start('replica-a');
  const c = b.start('replica-b');
  assert.notEqual(
    await until(b.clock, () => divided([a, c]) && a.engaged().length > 0 && c.engaged().length > 0, 20_000),
    Infinity,
  );
  await b.clock.advance(2_000);
  const cutAt = b.clock.monotonicNow();
  a.partition();
  const fencedMs = await until(b.clock, () => a.engaged().length === 0, 10_000);
  const takenMs = await until(b.clock, () => c.engaged().length === CLUSTERS.length, 10_000);
  t.diagnostic(
    `partition: fenced ${fencedMs} ms after the cut, survivor holds all six ${fencedMs + takenMs} ms after it`,
  );
  assert.ok(fencedMs < TIMINGS.leaseDurationMs, `fenced after ${fencedMs} ms`);
  assert.ok(
    b.clock.monotonicNow() - cutAt <= TIMINGS.leaseDurationMs + TIMINGS.retryPeriodMs * JITTER_FACTOR + DRAIN_MS,
  );
  assert.deepEqual(overlappingIntervals(b.intervals), []);
  await shutdown(b, [a, c]);
});

test('a third replica joins: clusters move to it with no instant where two replicas have one engaged', async () => {
  const b = bed();
  const replicas = [b.start('replica-a'), b.start('replica-b')];
  assert.notEqual(await until(b.clock, () => divided(replicas), 20_000), Infinity);
  await b.clock.advance(1_000);
  const third = b.start('replica-c');
  replicas.push(third);
  assert.notEqual(
    await until(b.clock, () => divided(replicas) && third.engaged().length > 0, 20_000),
    Infinity,
    'the third replica holds some clusters',
  );
  await b.clock.advance(5_000);
  assert.equal(divided(replicas), true);
  const moved = b.intervals.filter((i) => i.replica === 'replica-c').length;
  assert.ok(moved > 0);
  assert.deepEqual(overlappingIntervals(b.intervals), []);
  await shutdown(b, replicas);
});

test('a replica shutting down cleanly hands its clusters over faster than leaseDuration, never overlapping', async (t) => {
  const b = bed();
  const a = b.start('replica-a');
  const c = b.start('replica-b');
  assert.notEqual(
    await until(b.clock, () => divided([a, c]) && a.engaged().length > 0 && c.engaged().length > 0, 20_000),
    Infinity,
  );
  await b.clock.advance(1_000);
  a.stop.abort();
  const handOverMs = await until(b.clock, () => c.engaged().length === CLUSTERS.length, 20_000);
  t.diagnostic(
    `clean shutdown: hand-over in ${handOverMs} ms of fake time (leaseDuration ${TIMINGS.leaseDurationMs} ms)`,
  );
  assert.ok(handOverMs < TIMINGS.leaseDurationMs, `took ${handOverMs} ms`);
  assert.deepEqual(a.engaged(), []);
  assert.deepEqual(overlappingIntervals(b.intervals), []);
  await shutdown(b, [a, c]);
});

test('a cluster the inner provider drops is disengaged, drained, and only then its Lease released', async () => {
  const clock = new FakeClock();
  const api = new FakeClient({ clock });
  const intervals: ReconcileInterval[] = [];
  const random = seededRandom(11);
  const sharding = resolveShardingOptions({ ring: 'fleet', namespace: 'ops', identity: 'solo', ...TIMINGS }, random);
  const fleet = fakeFleet('solo', intervals, clock, DRAIN_MS);
  let drop: ((name: string) => void) | undefined;
  const inner: ClusterProvider = {
    description: 'two clusters',
    start: async (signal, events) => {
      for (const name of ['alpha', 'bravo'])
        events.engage({ name, revision: '1', connect: () => Promise.resolve(api) });
      drop = (name) => void events.disengage(name);
      await whenAborted(signal);
    },
  };
  const stop = new AbortController();
  const done = shardedClusters(inner, { client: api, sharding, clock, logger: silentLogger, random }).start(
    stop.signal,
    fleet.events,
  );
  assert.notEqual(await until(clock, () => fleet.engaged().length === 2, 10_000), Infinity);
  const leaseOf = async (): Promise<string> =>
    holderOf(await api.get<Lease>(LEASE_TYPE, clusterLeaseName('fleet', 'alpha'), { namespace: 'ops' }));
  drop?.('alpha');
  await clock.advance(DRAIN_MS / 2);
  assert.deepEqual(fleet.engaged(), ['alpha', 'bravo'], 'still draining');
  assert.equal(await leaseOf(), 'solo', 'held while draining');
  assert.notEqual(await until(clock, () => fleet.engaged().length === 1, 1_000), Infinity);
  await clock.advance(50);
  assert.equal(await leaseOf(), '', 'released once drained');
  stop.abort();
  let finished = false;
  void done.then(() => (finished = true));
  assert.notEqual(await until(clock, () => finished, 10_000), Infinity);
});

test('requiredPermissions: Leases in the sharding namespace, plus what the inner provider needs', () => {
  const sharding = resolveShardingOptions({ ring: 'fleet', namespace: 'ops', identity: 'x', ...TIMINGS });
  const p = shardedClusters(staticClusters([]), { client: new FakeClient(), sharding });
  const perms = p.requiredPermissions?.() ?? [];
  assert.equal(perms.length, 1);
  assert.equal(perms[0]?.namespace, 'ops');
  assert.deepEqual([...(perms[0]?.verbs ?? [])].sort(), ['create', 'get', 'list', 'patch', 'update', 'watch']);
});
