import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientListerWatcher } from '../cache/client-lister-watcher.js';
import { SharedInformer } from '../cache/informer.js';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import { silentLogger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import type { ReconcileContext } from '../controller/reconciler.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { conflictFor } from '../testing/fake-client/requests.js';
import { ShardGate } from './shard-gate.js';

const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };
const SHARD = 'shard.operator-runtime.io/db';
const DRAIN = 'drain.shard.operator-runtime.io/db';
const GRANT = 'grant.shard.operator-runtime.io/db';
const RELEASED = 'released.shard.operator-runtime.io/db';
const ME = 'aaaaaaaaaaaaaaaa';
const OTHER = 'bbbbbbbbbbbbbbbb';

function configMap(name: string, labels: Record<string, string>): KubeObject {
  return { ...CONFIGMAP, metadata: { name, namespace: 'default', labels } };
}

/** `labelSelector`: the primary informer is filtered by it, as in label mode. */
async function setup(objects: KubeObject[], labelSelector?: string, isMember?: () => boolean) {
  const clock = new FakeClock();
  const client = new FakeClient({ clock, objects });
  const informer = new SharedInformer<KubeObject>(
    clientListerWatcher(client, { ...CONFIGMAP, ...(labelSelector ? { labelSelector } : {}) }),
    { clock },
  );
  const stop = new AbortController();
  const run = informer.start(stop.signal);
  await informer.waitForSync(stop.signal);
  const gate = new ShardGate({
    type: CONFIGMAP,
    memberId: ME,
    shardLabel: SHARD,
    drainLabel: DRAIN,
    grantLabel: GRANT,
    releasedLabel: RELEASED,
    client,
    clock,
    logger: silentLogger,
    failedAckWaitMs: 500,
    ...(isMember ? { isMember } : {}),
  });
  const enqueued: string[] = [];
  const detach = gate.attach([informer], stop.signal, (key) => enqueued.push(key));
  await flushMicrotasks();
  const reconciled: string[] = [];
  let release: (() => void) | undefined;
  const reconciler = gate.wrap({
    reconcile: async (req) => {
      reconciled.push(req.name);
      if (req.name === 'slow') await new Promise<void>((r) => (release = r));
    },
  });
  const ctx: ReconcileContext = { signal: stop.signal, log: silentLogger, reconcileID: 'r' };
  const labelsOf = async (name: string): Promise<Record<string, string>> =>
    (await client.get<KubeObject>(CONFIGMAP, name, { namespace: 'default' })).metadata?.labels ?? {};
  return {
    clock,
    client,
    gate,
    enqueued,
    reconciled,
    reconcile: (name: string) => reconciler.reconcile({ namespace: 'default', name }, ctx),
    release: () => release?.(),
    labelsOf,
    stop: async () => {
      detach();
      stop.abort();
      await run;
    },
  };
}

test('only keys labelled with this member and not draining are reconciled', async () => {
  const s = await setup([
    configMap('mine', { [SHARD]: ME, [GRANT]: ME }),
    configMap('theirs', { [SHARD]: OTHER, [GRANT]: OTHER }),
    configMap('draining', { [SHARD]: ME, [GRANT]: ME, [DRAIN]: 'true' }),
    configMap('unassigned', {}),
  ]);
  try {
    for (const name of ['mine', 'theirs', 'draining', 'unassigned', 'never-existed']) await s.reconcile(name);
    assert.deepEqual(s.reconciled, ['mine']);
    assert.equal(s.gate.ownedCount(), 1);
  } finally {
    await s.stop();
  }
});

test('a drain is acknowledged only after the in-flight reconcile of the key ended, and no reconcile starts meanwhile', async () => {
  const s = await setup([configMap('slow', { [SHARD]: ME, [GRANT]: ME })]);
  try {
    const inFlight = s.reconcile('slow');
    await flushMicrotasks();
    assert.deepEqual(s.reconciled, ['slow']);
    // The sharder asks for the key.
    await s.client.patch(
      CONFIGMAP,
      'slow',
      { metadata: { labels: { [DRAIN]: 'true' } } },
      { type: 'merge', namespace: 'default' },
    );
    await flushMicrotasks();
    await s.clock.advance(1_000);
    assert.deepEqual(
      await s.labelsOf('slow'),
      { [SHARD]: ME, [GRANT]: ME, [DRAIN]: 'true' },
      'not acknowledged while the reconcile runs',
    );
    await s.reconcile('slow');
    assert.deepEqual(s.reconciled, ['slow'], 'a draining key is not admitted');
    s.release();
    await inFlight;
    await flushMicrotasks();
    assert.deepEqual(
      await s.labelsOf('slow'),
      { [RELEASED]: ME },
      'acknowledged: its labels removed, its release written',
    );
    assert.equal(s.gate.acknowledgedDrains, 1);
    await s.reconcile('slow');
    assert.deepEqual(s.reconciled, ['slow'], 'a handed-over key is never reconciled again here');
  } finally {
    await s.stop();
  }
});

test('the acknowledgement is conditioned on the resourceVersion seen: a conflict re-reads and never strips a newer assignment', async () => {
  const s = await setup([configMap('k', { [SHARD]: ME, [GRANT]: ME })]);
  try {
    const patches: unknown[] = [];
    let failNext = true;
    s.client.intercept((req) => {
      // Only the gate's acknowledgements carry a resourceVersion.
      if (req.verb !== 'patch' || !JSON.stringify(req.body).includes('"resourceVersion"')) return undefined;
      patches.push(req.body);
      if (!failNext) return undefined;
      failNext = false;
      return conflictFor(req);
    });
    await s.client.patch(
      CONFIGMAP,
      'k',
      { metadata: { labels: { [DRAIN]: 'true' } } },
      { type: 'merge', namespace: 'default' },
    );
    const drainedRv = (await s.client.get<KubeObject>(CONFIGMAP, 'k', { namespace: 'default' })).metadata
      ?.resourceVersion;
    await flushMicrotasks();
    // The first acknowledgement conflicted; meanwhile the key went to another member directly.
    await s.client.patch(
      CONFIGMAP,
      'k',
      { metadata: { labels: { [SHARD]: OTHER, [GRANT]: OTHER, [DRAIN]: null } } },
      { type: 'merge', namespace: 'default' },
    );
    await s.clock.advance(1_000);
    await flushMicrotasks();
    assert.deepEqual(await s.labelsOf('k'), { [SHARD]: OTHER, [GRANT]: OTHER }, 'the newer assignment stands');
    const acks = patches;
    assert.equal(acks.length, 1, 'one acknowledgement was tried, none after the key left');
    assert.equal((acks[0] as { metadata: { resourceVersion: string } }).metadata.resourceVersion, drainedRv);
  } finally {
    await s.stop();
  }
});

test('a key whose object was deleted while owned gets its deletion reconcile here, once', async () => {
  const s = await setup([configMap('gone', { [SHARD]: ME, [GRANT]: ME })]);
  try {
    await s.client.delete(CONFIGMAP, 'gone', { namespace: 'default' });
    await flushMicrotasks();
    assert.equal(s.gate.admit('default/gone'), 'deleted-while-owned');
    await s.reconcile('gone');
    assert.deepEqual(s.reconciled, ['gone']);
    assert.equal(s.gate.admit('default/gone'), 'not-owned');
  } finally {
    await s.stop();
  }
});

test('a key that becomes this member’s by a label-only update is enqueued (the primary’s default predicate would drop that update)', async () => {
  const s = await setup([configMap('k', {})]);
  try {
    assert.deepEqual(s.enqueued, []);
    await s.client.patch(
      CONFIGMAP,
      'k',
      { metadata: { labels: { [SHARD]: ME, [GRANT]: ME } } },
      { type: 'merge', namespace: 'default' },
    );
    await flushMicrotasks();
    assert.deepEqual(s.enqueued, ['default/k']);
    await s.client.patch(
      CONFIGMAP,
      'k',
      { metadata: { annotations: { touched: 'yes' } } },
      { type: 'merge', namespace: 'default' },
    );
    await flushMicrotasks();
    assert.deepEqual(s.enqueued, ['default/k'], 'only the transition to ours enqueues');
  } finally {
    await s.stop();
  }
});

test('an object whose label someone else took off is not taken for deleted: the server is asked, and nothing runs', async () => {
  const s = await setup(
    [configMap('stripped', { [SHARD]: ME, [GRANT]: ME }), configMap('deleted', { [SHARD]: ME, [GRANT]: ME })],
    `${SHARD}=${ME}`,
  );
  try {
    await s.client.patch(
      CONFIGMAP,
      'stripped',
      { metadata: { labels: { [SHARD]: null } } },
      { type: 'merge', namespace: 'default' },
    );
    await s.client.delete(CONFIGMAP, 'deleted', { namespace: 'default' });
    await flushMicrotasks();
    // Both left the label-filtered cache while ours (the watch's DELETED carries the labelled object).
    assert.equal(s.gate.admit('default/stripped'), 'deleted-while-owned');
    assert.equal(s.gate.admit('default/deleted'), 'deleted-while-owned');
    await s.reconcile('stripped');
    await s.reconcile('deleted');
    assert.deepEqual(s.reconciled, ['deleted'], 'only the real deletion is reconciled');
    assert.deepEqual(
      await s.labelsOf('stripped'),
      { [RELEASED]: ME },
      'and the stripped one released: its grant taken off, its release written',
    );
    assert.equal(s.gate.admit('default/stripped'), 'not-owned');
    assert.equal(s.gate.admit('default/deleted'), 'not-owned', 'a deletion is reconciled once');
  } finally {
    await s.stop();
  }
});

test('once the membership Lease is no longer held (renew deadline passed), nothing is admitted, even before the controllers were told to stop', async () => {
  let member = true;
  const s = await setup([configMap('mine', { [SHARD]: ME, [GRANT]: ME })], undefined, () => member);
  try {
    await s.reconcile('mine');
    member = false;
    await s.reconcile('mine');
    assert.deepEqual(s.reconciled, ['mine']);
  } finally {
    await s.stop();
  }
});
