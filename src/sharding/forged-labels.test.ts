/**
 * Regression (issue 24, item 4): shard labels edited by someone other than the operator — a GitOps
 * revert, `kubectl label`, a tenant allowed to patch the object — while the owner reconciles the key
 * must never make a second replica reconcile it. The real Sharder and two real gates (label mode) on
 * the fake client and clock; the label keys are spelled out so this file also runs against the code
 * before the fix (where each case overlapped).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientListerWatcher } from '../cache/client-lister-watcher.js';
import { SharedInformer } from '../cache/informer.js';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import { silentLogger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import type { ReconcileContext } from '../controller/reconciler.js';
import { LEASE_TYPE, formatMicroTime, type Lease } from '../leader-election/lease-record.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { ownerOf } from './rendezvous.js';
import { ShardGate } from './shard-gate.js';
import { Sharder } from './sharder.js';
import { registerShardingMetrics } from './sharding-metrics.js';
import { MEMBER_LABEL, RING_LABEL, memberLeaseName, resolveShardingOptions } from './sharding-options.js';

const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };
const RING = 'db';
const SHARD = `shard.operator-runtime.io/${RING}`;
const DRAIN = `drain.shard.operator-runtime.io/${RING}`;
const GRANT = `grant.shard.operator-runtime.io/${RING}`;
const RELEASED = `released.shard.operator-runtime.io/${RING}`;
const TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
const KEYS = Array.from({ length: 20 }, (_, i) => `k${i}`);
const A = 'aaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbb';

async function ring(initialMembers: readonly string[]) {
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
  });
  const stop = new AbortController();
  const ctx: ReconcileContext = { signal: stop.signal, log: silentLogger, reconcileID: 'r' };

  /** Who is reconciling each key now, every time two members did at once, and every reconcile started. */
  const active = new Map<string, Set<string>>();
  const overlaps: string[] = [];
  const started: string[] = [];
  /** Reconciles to keep running (by member/name) until their release is called. */
  const holds = new Map<string, Promise<void>>();
  const releases = new Map<string, () => void>();
  const reconcilers = new Map<string, ReturnType<ShardGate['wrap']>>();
  const runs: Promise<unknown>[] = [];
  const members: string[] = [];
  const reconcile = (member: string, name: string): Promise<unknown> => {
    const done = reconcilers.get(member)!.reconcile({ namespace: 'default', name }, ctx);
    runs.push(done);
    return done;
  };
  /** Starts `member`'s reconcile of `name` and keeps it running until the returned function is called. */
  const hold = async (member: string, name: string): Promise<() => Promise<void>> => {
    holds.set(`${member}/${name}`, new Promise<void>((resolve) => releases.set(`${member}/${name}`, resolve)));
    const run = reconcile(member, name);
    await flushMicrotasks();
    assert.ok(active.get(`default/${name}`)?.has(member), `${member} is reconciling ${name}`);
    return async () => {
      releases.get(`${member}/${name}`)!();
      await run;
      await flushMicrotasks();
    };
  };

  const join = async (member: string): Promise<void> => {
    members.push(member);
    await client.create<Lease>({
      ...LEASE_TYPE,
      metadata: {
        name: memberLeaseName(RING, member),
        namespace: 'ops',
        labels: { [RING_LABEL]: RING, [MEMBER_LABEL]: member },
      },
      spec: { holderIdentity: `id-${member}`, renewTime: formatMicroTime(clock.now()) },
    });
    const informer = new SharedInformer<KubeObject>(
      clientListerWatcher(client, { ...CONFIGMAP, labelSelector: `${SHARD}=${member}` }),
      { clock },
    );
    runs.push(informer.start(stop.signal));
    await informer.waitForSync(stop.signal);
    const gate = new ShardGate({
      type: CONFIGMAP,
      memberId: member,
      shardLabel: SHARD,
      drainLabel: DRAIN,
      grantLabel: GRANT,
      releasedLabel: RELEASED,
      client,
      clock,
      logger: silentLogger,
      failedAckWaitMs: TIMINGS.retryPeriodMs,
    });
    reconcilers.set(
      member,
      gate.wrap({
        reconcile: async (req) => {
          const key = `${req.namespace}/${req.name}`;
          const now = active.get(key) ?? new Set<string>();
          if (now.size > 0) overlaps.push(`${key}: ${member} started while ${[...now].join(', ')} reconciled it`);
          now.add(member);
          active.set(key, now);
          started.push(`${member}/${req.name}`);
          try {
            const held = holds.get(`${member}/${req.name}`);
            holds.delete(`${member}/${req.name}`);
            if (held) await held;
          } finally {
            now.delete(member);
          }
        },
      }),
    );
    // What a sharded controller does: reconcile a key when it becomes this member's.
    gate.attach([informer], stop.signal, (key) => void reconcile(member, key.split('/')[1]!));
  };

  /** Advances time in renew-period steps, every member renewing its Lease each step. */
  const run = async (ms: number): Promise<void> => {
    for (let t = 0; t < ms; t += TIMINGS.retryPeriodMs) {
      for (const m of members)
        await client.patch(
          LEASE_TYPE,
          memberLeaseName(RING, m),
          { spec: { renewTime: formatMicroTime(clock.now()) } },
          { type: 'merge', namespace: 'ops' },
        );
      await clock.advance(TIMINGS.retryPeriodMs);
      await flushMicrotasks();
    }
  };
  const labelsOf = async (name: string): Promise<Record<string, string>> =>
    (await client.get<KubeObject>(CONFIGMAP, name, { namespace: 'default' })).metadata?.labels ?? {};
  /** Someone other than the operator edits the labels (a merge patch, no resourceVersion). */
  const edit = (name: string, labels: Record<string, string | null>) =>
    client.patch(CONFIGMAP, name, { metadata: { labels } }, { type: 'merge', namespace: 'default' });

  for (const m of initialMembers) await join(m);
  const sharderRun = sharder.start(stop.signal);
  return {
    join,
    run,
    hold,
    labelsOf,
    edit,
    overlaps,
    started,
    stop: async () => {
      stop.abort();
      for (const release of releases.values()) release();
      await sharderRun;
      await Promise.allSettled(runs);
    },
  };
}

const keyOwnedBy = (owner: string, members: readonly string[]): string =>
  KEYS.find((k) => ownerOf(`default/${k}`, members) === owner)!;

for (const { what, labels } of [
  { what: 'its shard label removed', labels: { [SHARD]: null } },
  {
    what: 'its shard and grant labels removed in one write (a GitOps revert)',
    labels: { [SHARD]: null, [GRANT]: null },
  },
]) {
  test(`a key being drained from a live owner that is mid-reconcile, ${what}: the joiner does not start until the owner finished and released it`, async () => {
    const r = await ring([A]);
    try {
      await r.run(TIMINGS.retryPeriodMs * 2);
      const key = keyOwnedBy(B, [A, B]);
      assert.equal((await r.labelsOf(key))[SHARD], A);
      const finish = await r.hold(A, key);
      await r.join(B);
      await r.run(TIMINGS.retryPeriodMs * 2);
      assert.equal((await r.labelsOf(key))[DRAIN], 'true', 'the sharder asked A for the key');
      await r.edit(key, labels);
      await r.run(TIMINGS.leaseDurationMs * 2);
      assert.deepEqual(r.overlaps, []);
      assert.ok(!r.started.includes(`${B}/${key}`), 'B never started the key while A reconciled it');
      await finish();
      await r.run(TIMINGS.retryPeriodMs * 4);
      assert.deepEqual(r.overlaps, []);
      assert.equal((await r.labelsOf(key))[SHARD], B, 'handed over once A released it');
      assert.ok(r.started.includes(`${B}/${key}`), 'and B reconciled it then');
    } finally {
      await r.stop();
    }
  });
}

for (const { what, labels } of [
  { what: 'its shard label set to another live member (kubectl label --overwrite)', labels: { [SHARD]: B } },
  { what: 'its grant label set to another live member', labels: { [GRANT]: B } },
]) {
  test(`a key whose owner is mid-reconcile, ${what}: no other member starts it, and it stays with its owner`, async () => {
    const r = await ring([A, B]);
    try {
      await r.run(TIMINGS.retryPeriodMs * 2);
      const key = keyOwnedBy(A, [A, B]);
      assert.equal((await r.labelsOf(key))[SHARD], A);
      const finish = await r.hold(A, key);
      await r.edit(key, labels);
      await r.run(TIMINGS.leaseDurationMs * 2);
      assert.deepEqual(r.overlaps, []);
      assert.ok(!r.started.includes(`${B}/${key}`), 'B never started the key');
      await finish();
      await r.run(TIMINGS.retryPeriodMs * 4);
      assert.deepEqual(r.overlaps, []);
      const after = await r.labelsOf(key);
      assert.equal(after[SHARD], A, 'granted to its rendezvous owner again');
      assert.equal(after[GRANT], A);
      assert.equal(after[DRAIN], undefined);
    } finally {
      await r.stop();
    }
  });
}
