import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import { silentLogger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { ApiError } from '../client/api-error.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { internalErrorFor } from '../testing/fake-client/requests.js';
import { LEASE_TYPE, formatMicroTime, type Lease } from '../leader-election/lease-record.js';
import { ownerOf } from './rendezvous.js';
import { Sharder } from './sharder.js';
import { registerShardingMetrics } from './sharding-metrics.js';
import {
  MEMBER_LABEL,
  RING_LABEL,
  drainLabel,
  grantLabel,
  memberLeaseName,
  releasedLabel,
  resolveShardingOptions,
  shardLabel,
} from './sharding-options.js';

const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };
const RING = 'db';
const SHARD = shardLabel(RING);
const DRAIN = drainLabel(RING);
const GRANT = grantLabel(RING);
const RELEASED = releasedLabel(RING);
const TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
const KEYS = Array.from({ length: 30 }, (_, i) => `k${i}`);

async function setup(
  members: string[],
  events?: { event(obj: KubeObject, type: string, reason: string, message: string): void },
) {
  const clock = new FakeClock();
  const client = new FakeClient({
    clock,
    objects: KEYS.map((name) => ({ ...CONFIGMAP, metadata: { name, namespace: 'default' } })),
  });
  const registry = createMetricsRegistry();
  const sharding = resolveShardingOptions({
    ring: RING,
    namespace: 'ops',
    identity: 'sharder',
    mode: 'label',
    ...TIMINGS,
  });
  const { metrics } = registerShardingMetrics(registry, {
    ring: RING,
    mode: () => 'label',
    ownedByKind: () => new Map(),
  });
  const sharder = new Sharder({
    client,
    leaseClient: client,
    sharding,
    kinds: () => [CONFIGMAP],
    clock,
    logger: silentLogger,
    registry,
    metrics,
    mode: async () => 'label',
    ...(events ? { events } : {}),
  });
  const join = async (member: string): Promise<void> => {
    await client.create<Lease>({
      ...LEASE_TYPE,
      metadata: {
        name: memberLeaseName(RING, member),
        namespace: 'ops',
        labels: { [RING_LABEL]: RING, [MEMBER_LABEL]: member },
      },
      spec: { holderIdentity: `id-${member}`, renewTime: formatMicroTime(clock.now()) },
    });
  };
  const renew = async (member: string): Promise<void> => {
    await client.patch(
      LEASE_TYPE,
      memberLeaseName(RING, member),
      { spec: { renewTime: formatMicroTime(clock.now()) } },
      { type: 'merge', namespace: 'ops' },
    );
  };
  /** Advances time in renew-period steps, renewing `renewing` each step. */
  const run = async (ms: number, renewing: readonly string[]): Promise<void> => {
    for (let t = 0; t < ms; t += TIMINGS.retryPeriodMs) {
      for (const m of renewing) await renew(m);
      await clock.advance(TIMINGS.retryPeriodMs);
      await flushMicrotasks();
    }
  };
  const labels = async (): Promise<Map<string, Record<string, string>>> =>
    new Map(
      (await client.list<KubeObject>(CONFIGMAP, { namespace: 'default' })).items.map((o) => [
        o.metadata!.name!,
        o.metadata?.labels ?? {},
      ]),
    );
  for (const m of members) await join(m);
  const stop = new AbortController();
  const running = sharder.start(stop.signal);
  return {
    client,
    sharder,
    registry,
    join,
    run,
    labels,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

test('unassigned objects go to their rendezvous owner among the live members, after one renew period of looking at the ring', async () => {
  const s = await setup(['aaa', 'bbb']);
  try {
    await s.run(TIMINGS.retryPeriodMs * 2, ['aaa', 'bbb']);
    for (const [name, l] of await s.labels())
      assert.deepEqual(
        l,
        { [SHARD]: ownerOf(`default/${name}`, ['aaa', 'bbb']), [GRANT]: ownerOf(`default/${name}`, ['aaa', 'bbb']) },
        name,
      );
  } finally {
    await s.stop();
  }
});

test('a join: keys of live owners are drained, not moved; the acknowledgement (labels removed) lets the sharder assign the joiner', async () => {
  const s = await setup(['aaa', 'bbb']);
  try {
    await s.run(TIMINGS.retryPeriodMs * 2, ['aaa', 'bbb']);
    await s.join('ccc');
    await s.run(TIMINGS.retryPeriodMs * 2, ['aaa', 'bbb', 'ccc']);
    const after = await s.labels();
    const moving = KEYS.filter((k) => ownerOf(`default/${k}`, ['aaa', 'bbb', 'ccc']) === 'ccc');
    assert.ok(moving.length > 0);
    for (const k of KEYS) {
      const l = after.get(k)!;
      assert.notEqual(l[SHARD], 'ccc', `${k}: never assigned to the joiner before its owner acknowledged`);
      assert.equal(l[DRAIN] !== undefined, moving.includes(k), `${k}: drained iff it moves`);
    }
    // The owner of one moving key acknowledges.
    const acked = moving[0]!;
    const owner = after.get(acked)![SHARD]!;
    await s.client.patch(
      CONFIGMAP,
      acked,
      { metadata: { labels: { [SHARD]: null, [GRANT]: null, [DRAIN]: null, [RELEASED]: owner } } },
      { type: 'merge', namespace: 'default' },
    );
    await s.run(TIMINGS.retryPeriodMs, ['aaa', 'bbb', 'ccc']);
    assert.deepEqual((await s.labels()).get(acked), { [SHARD]: 'ccc', [GRANT]: 'ccc' });
    const handover = (await s.registry.getSingleMetricAsString('sharding_handover_duration_seconds')).match(
      /sharding_handover_duration_seconds_count\{ring="db"\} (\d+)/,
    );
    assert.equal(handover?.[1], '1');
  } finally {
    await s.stop();
  }
});

test('a member that stops renewing keeps its keys until its Lease is expired on the sharder’s clock, then loses them without a drain', async () => {
  const s = await setup(['aaa', 'bbb']);
  try {
    await s.run(TIMINGS.retryPeriodMs * 2, ['aaa', 'bbb']);
    const ofBbb = KEYS.filter((k) => ownerOf(`default/${k}`, ['aaa', 'bbb']) === 'bbb');
    // bbb goes silent (kill -9): a renew period short of leaseDuration since its last renew, nothing moves.
    await s.run(TIMINGS.leaseDurationMs - 2 * TIMINGS.retryPeriodMs, ['aaa']);
    for (const k of ofBbb) assert.deepEqual((await s.labels()).get(k), { [SHARD]: 'bbb', [GRANT]: 'bbb' }, k);
    await s.run(TIMINGS.retryPeriodMs * 4, ['aaa']);
    for (const k of ofBbb)
      assert.deepEqual(
        (await s.labels()).get(k),
        { [SHARD]: 'aaa', [GRANT]: 'aaa' },
        `${k}: reassigned directly, no drain`,
      );
    const moves = await s.registry.getSingleMetricAsString('sharding_key_moves_total');
    assert.match(moves, new RegExp(`sharding_key_moves_total\\{ring="db",reason="owner-dead"\\} ${ofBbb.length}`));
  } finally {
    await s.stop();
  }
});

test('an object the server refuses to relabel (422) is reported by a Warning Event and counted, retried with backoff, and assigned once the server accepts it; a 500 is retried without being counted', async () => {
  const events: { name: string | undefined; type: string; reason: string }[] = [];
  const s = await setup(['aaa'], {
    event: (obj, type, reason) => events.push({ name: obj.metadata?.name, type, reason }),
  });
  let refuse = true;
  s.client.intercept((req) => {
    if (req.verb !== 'patch' || (req.name !== 'k0' && req.name !== 'k1') || !refuse) return undefined;
    if (req.name === 'k1') return internalErrorFor(req);
    return new ApiError({
      status: 422,
      reason: 'Invalid',
      message: 'Widget.example.com "k0" is invalid: spec.size: Invalid value: 50: must be <= 10',
    });
  });
  try {
    await s.run(TIMINGS.retryPeriodMs * 4, ['aaa']);
    assert.deepEqual(s.sharder.unassignableByKind(), new Map([['ConfigMap', 1]]), 'k0 counted; k1 (a 500) not');
    assert.ok(events.length >= 2, `retried: ${events.length} attempts reported`);
    assert.deepEqual(events[0], { name: 'k0', type: 'Warning', reason: 'ShardAssignmentFailed' });
    assert.ok(events.every((e) => e.name === 'k0'));
    assert.equal((await s.labels()).get('k0')?.[SHARD], undefined);
    refuse = false;
    await s.run(TIMINGS.retryPeriodMs * 4, ['aaa']);
    assert.equal((await s.labels()).get('k0')?.[SHARD], 'aaa');
    assert.equal((await s.labels()).get('k1')?.[SHARD], 'aaa');
    assert.deepEqual(s.sharder.unassignableByKind(), new Map([['ConfigMap', 0]]));
  } finally {
    await s.stop();
  }
});
