/**
 * Read-your-own-writes through the delegating client, over a real informer fed by a scripted
 * lister-watcher whose watch a test can hold back (the watch lag that makes a cached read miss a
 * write that already returned), on the fake clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorStatus, type StatusBody } from '../client/api-error.js';
import type { Client } from '../client/contracts.js';
import type { ObjectLike } from '../client/client-options.js';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import { keyOf, type KubeObject } from '../core/object-key.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { createDelegatingClient, type DelegatingClientOptions } from './delegating-client.js';
import { InformerCache, type InformerCacheOptions } from './informer-cache.js';
import { InformerFactory } from './informer-factory.js';
import type { InformerSpec } from './informer-spec.js';
import { matchesLabels, parseLabelSelector } from './label-selector.js';
import type { ListerWatcher, ListerWatchEvent } from './lister-watcher.js';
import { DEFAULT_OWN_WRITES_WAIT_MS, isObserved, OWN_WRITES_POLL_MS } from './own-writes.js';
import { compareResourceVersions } from './resource-version-order.js';
import { FakeListerWatcher } from './testing/fake-lister-watcher.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const cm = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  ...CM,
  metadata: { name, namespace: 'ns', labels },
});

/** Holds watch events while closed, releasing them in order when opened. */
class WatchGate {
  private open = true;
  private waiters: (() => void)[] = [];
  hold(): void {
    this.open = false;
  }
  release(): void {
    this.open = true;
    for (const w of this.waiters.splice(0)) w();
  }
  async pass(): Promise<void> {
    while (!this.open) await new Promise<void>((r) => this.waiters.push(r));
  }
}

/**
 * The lister-watcher of `spec`, its watch held by `gate`. A label selector is applied as the API
 * server does: only matching objects, and an object that stops matching is DELETED.
 */
function gated(lw: FakeListerWatcher<KubeObject>, gate: WatchGate, spec: InformerSpec): ListerWatcher<KubeObject> {
  const selector = parseLabelSelector(spec.labelSelector ?? '');
  const matches = (o: KubeObject): boolean => matchesLabels(selector, o.metadata?.labels);
  const shown = new Set<string>();
  return {
    list: async (o) => {
      const page = await lw.list(o);
      const items = page.items.filter(matches);
      for (const i of items) shown.add(keyOf(i));
      return { ...page, items };
    },
    watch: (o) => ({
      async *[Symbol.asyncIterator](): AsyncGenerator<ListerWatchEvent<KubeObject>> {
        for await (const e of lw.watch(o)) {
          await gate.pass();
          if (e.type === 'BOOKMARK') {
            yield e;
            continue;
          }
          const key = keyOf(e.object);
          const was = shown.has(key);
          const is = e.type !== 'DELETED' && matches(e.object);
          if (is) shown.add(key);
          else shown.delete(key);
          if (is) yield { type: was ? 'MODIFIED' : 'ADDED', object: e.object };
          else if (was) yield { type: 'DELETED', object: e.object };
        }
      },
    }),
  };
}

interface SetupOptions extends DelegatingClientOptions {
  readonly cache?: InformerCacheOptions;
  /** Answer deletes with the deleted object (as some kinds do) instead of a Status. */
  readonly deleteReturnsObject?: boolean;
}

/** The server: writes go to the fake lister-watcher, which answers them as the API server would. */
function setup(options: SetupOptions = {}) {
  const lw = new FakeListerWatcher<KubeObject>([cm('existing')]);
  const gate = new WatchGate();
  const clock = new FakeClock(0);
  const factory = new InformerFactory((spec) => gated(lw, gate, spec), { clock });
  const uids = new Map<string, string>();
  let nextUid = 1;
  const stamp = <T extends ObjectLike>(obj: T): T => {
    const key = keyOf(obj);
    if (!uids.has(key)) uids.set(key, `uid-${nextUid++}`);
    return { ...obj, metadata: { ...obj.metadata, uid: uids.get(key) } };
  };
  const stored = (name: string): KubeObject | undefined => lw.current().find((o) => o.metadata?.name === name);
  const server = {
    mapper: { mapping: () => Promise.reject(new Error('unused')), cached: () => undefined },
    create: async (obj: KubeObject) => lw.create(stamp(obj)),
    update: async (obj: KubeObject) => lw.update(stamp(obj)),
    updateStatus: async (obj: KubeObject) => lw.update(stamp(obj)),
    patch: async (_t: unknown, name: string, patch: { metadata?: { labels?: Record<string, string> } }) =>
      lw.update(stamp({ ...stored(name)!, metadata: { ...stored(name)!.metadata, ...patch.metadata } })),
    delete: async (_t: unknown, name: string): Promise<KubeObject | StatusBody> => {
      const before = stored(name)!;
      lw.delete(keyOf(before));
      uids.delete(keyOf(before));
      if (options.deleteReturnsObject)
        return { ...before, metadata: { ...before.metadata, resourceVersion: lw.resourceVersion } };
      return { kind: 'Status', status: 'Success', details: { name, kind: 'configmaps', uid: before.metadata?.uid } };
    },
  };
  const registry = createMetricsRegistry();
  const cache = new InformerCache(factory, options.cache);
  // The double answers only what these tests call; the delegating client calls methods by name.
  const client = createDelegatingClient(server as unknown as Client, cache, { clock, registry, ...options });
  const ac = new AbortController();
  const run = factory.start(ac.signal);
  const names = async (opts: Parameters<Client['list']>[1] = {}): Promise<string[]> =>
    (await client.list<KubeObject>(CM, { namespace: 'ns', ...opts })).items.map((o) => o.metadata!.name!).sort();
  /** Resolves `p` if it settles while the clock is stepped by `ms`; 'pending' if not. */
  const within = async <T>(p: Promise<T>, ms = 0): Promise<T | 'pending'> => {
    let settled = false;
    void p.then(
      () => (settled = true),
      () => (settled = true),
    );
    await clock.advance(ms);
    return settled ? p : 'pending';
  };
  const counter = async (outcome: string): Promise<number> => {
    const m = await registry.getSingleMetric('cache_read_own_writes_total')?.get();
    return m?.values.filter((v) => v.labels.outcome === outcome).reduce((a, v) => a + v.value, 0) ?? 0;
  };
  const stop = async (): Promise<void> => {
    gate.release();
    ac.abort();
    await run;
  };
  return { lw, gate, clock, client, names, within, counter, stop };
}

test('a list after a create waits until the informer has the created object; freshness: cached answers at once without it', async () => {
  const s = setup();
  assert.deepEqual(await s.within(s.names()), ['existing'], 'the first read starts the informer');
  s.gate.hold();
  await s.client.create(cm('child'));
  assert.deepEqual(await s.within(s.names({ freshness: 'cached' })), ['existing'], 'opted out: the stale cache');
  const fresh = s.names();
  assert.equal(await s.within(fresh, OWN_WRITES_POLL_MS * 4), 'pending', 'waits while the watch lags');
  s.gate.release();
  assert.deepEqual(await s.within(fresh), ['child', 'existing']);
  assert.equal(await s.counter('waited'), 1);
  assert.deepEqual(await s.within(s.names()), ['child', 'existing'], 'observed writes are not waited for again');
  assert.equal(await s.counter('waited'), 1);
  await s.stop();
});

test('a get after an update or a label patch answers at least the written resourceVersion', async () => {
  const s = setup();
  await s.within(s.names());
  s.gate.hold();
  const updated = await s.client.update({ ...cm('existing'), data: { v: '2' } } as KubeObject);
  const got = s.client.get<KubeObject>(CM, 'existing', { namespace: 'ns' });
  assert.equal(await s.within(got, 100), 'pending');
  s.gate.release();
  const fresh = await s.within(got);
  assert.notEqual(fresh, 'pending');
  assert.equal(fresh === 'pending' ? '' : fresh.metadata?.resourceVersion, updated.metadata?.resourceVersion);
  s.gate.hold();
  const patched = await s.client.patch(
    CM,
    'existing',
    { metadata: { labels: { a: 'b' } } },
    { type: 'merge', namespace: 'ns' },
  );
  const listed = s.client.list<KubeObject>(CM, { namespace: 'ns', labelSelector: 'a=b' });
  assert.equal(await s.within(listed, 100), 'pending');
  s.gate.release();
  const after = await s.within(listed);
  assert.deepEqual(after === 'pending' ? after : after.items.map((o) => o.metadata?.resourceVersion), [
    patched.metadata?.resourceVersion,
  ]);
  await s.stop();
});

test('after a delete answered by a Status (no resourceVersion), a list does not show the object and a get is a 404', async () => {
  const s = setup();
  await s.client.create(cm('doomed'));
  assert.deepEqual(await s.within(s.names()), ['doomed', 'existing']);
  s.gate.hold();
  const status = await s.client.delete(CM, 'doomed', { namespace: 'ns' });
  assert.equal('kind' in status ? status.kind : undefined, 'Status');
  assert.deepEqual(await s.within(s.names({ freshness: 'cached' })), ['doomed', 'existing'], 'the lagging cache');
  const listed = s.names();
  const got = s.client.get(CM, 'doomed', { namespace: 'ns' }).then(
    () => 'found',
    (err: unknown) => err,
  );
  assert.equal(await s.within(listed, 100), 'pending');
  assert.equal(await s.within(got), 'pending');
  s.gate.release();
  assert.deepEqual(await s.within(listed), ['existing']);
  assert.equal(apiErrorStatus(await got), 404);
  await s.stop();
});

test('a create then a delete before the informer saw either: the list waits until neither shows', async () => {
  const s = setup({ deleteReturnsObject: true });
  await s.within(s.names());
  s.gate.hold();
  await s.client.create(cm('brief'));
  await s.client.delete(CM, 'brief', { namespace: 'ns' });
  // The store does not hold it (it never did), but the informer has yet to show it and then drop it.
  const listed = s.names();
  assert.equal(await s.within(listed, 100), 'pending');
  s.gate.release();
  assert.deepEqual(await s.within(listed), ['existing']);
  await s.stop();
});

test('a read waits at most ownWritesWaitMs, then answers the cache as it is, counts it, and the next read does not wait again', async () => {
  const s = setup({ ownWritesWaitMs: 1_000 });
  await s.within(s.names());
  s.gate.hold();
  await s.client.create(cm('late'));
  const listed = s.names();
  assert.equal(await s.within(listed, 999), 'pending');
  assert.deepEqual(await s.within(listed, 1), ['existing'], 'timed out: the cache as it is');
  assert.equal(await s.counter('timed_out'), 1);
  assert.deepEqual(await s.within(s.names()), ['existing'], 'a forgotten write is not waited for again');
  assert.equal(await s.counter('timed_out'), 1);
  await s.stop();
});

test('an aborted read rejects with AbortedError and counts the abort', async () => {
  const s = setup();
  await s.within(s.names());
  s.gate.hold();
  await s.client.create(cm('x'));
  const ac = new AbortController();
  const listed = s.names({ signal: ac.signal });
  await s.within(listed, 10);
  ac.abort();
  await assert.rejects(listed, { code: 'ERR_ABORTED' });
  assert.equal(await s.counter('aborted'), 1);
  await s.stop();
});

test('a write the informer filters out (label-selected cache) is not waited for; one that leaves the selection is waited for until dropped', async () => {
  const s = setup({ cache: { labelSelectorsByKind: [{ ...CM, labelSelector: 'mine=yes' }] } });
  await s.client.create(cm('kept', { mine: 'yes' }));
  assert.deepEqual(await s.within(s.names()), ['kept']);
  s.gate.hold();
  await s.client.create(cm('other'));
  assert.deepEqual(await s.within(s.names()), ['kept'], 'answered at once: the cache never holds it');
  await s.client.patch(CM, 'kept', { metadata: { labels: {} } }, { type: 'merge', namespace: 'ns' });
  const listed = s.names();
  assert.equal(await s.within(listed, 100), 'pending');
  s.gate.release();
  assert.deepEqual(await s.within(listed), []);
  await s.stop();
});

test('ownWritesWaitMs: 0 turns read-your-own-writes off', async () => {
  const s = setup({ ownWritesWaitMs: 0 });
  await s.within(s.names());
  s.gate.hold();
  await s.client.create(cm('unseen'));
  assert.deepEqual(await s.within(s.names()), ['existing']);
  await s.stop();
});

test('a write of a kind no informer holds yet records nothing: the first read lists after it', async () => {
  const s = setup();
  await s.client.create(cm('first'));
  s.gate.hold();
  assert.deepEqual(await s.within(s.names()), ['existing', 'first']);
  await s.stop();
});

test('observed: the exact version, or (etcd revisions) the watch progressed to it; opaque versions compare for equality only', () => {
  const holding = (rv: string | undefined, uid = 'u1') => ({
    reader: {
      get: (key: string) =>
        key === 'ns/a' && rv !== undefined ? { metadata: { name: 'a', uid, resourceVersion: rv } } : undefined,
    } as unknown as Parameters<typeof isObserved>[0]['reader'],
  });
  const present = (resourceVersion: string) => ({ type: 'present', resourceVersion }) as const;
  assert.equal(isObserved(holding('9'), 'ns/a', present('9'), '9'), true);
  assert.equal(isObserved(holding('8'), 'ns/a', present('9'), '8'), false);
  assert.equal(isObserved(holding('8'), 'ns/a', present('9'), '10'), true, 'progress past it');
  assert.equal(isObserved(holding('12'), 'ns/a', present('9'), undefined), true, 'a newer version stored');
  assert.equal(isObserved(holding('b'), 'ns/a', present('a'), 'c'), false, 'opaque: no order');
  assert.equal(isObserved(holding('a'), 'ns/a', present('a'), 'c'), true, 'opaque: equality');
  assert.equal(isObserved(holding(undefined), 'ns/a', { type: 'absent', uid: 'u1' }, 'x'), true);
  assert.equal(isObserved(holding('5'), 'ns/a', { type: 'absent', uid: 'u1' }, '5'), false, 'still held');
  assert.equal(isObserved(holding('5', 'u2'), 'ns/a', { type: 'absent', uid: 'u1' }, '5'), true, 'another incarnation');
  assert.equal(isObserved(holding('5'), 'ns/a', { type: 'absent', uid: 'u1', resourceVersion: '7' }, '7'), true);
  assert.equal(isObserved(holding(undefined), 'ns/a', { type: 'absent', notBefore: '7' }, '6'), false);
  assert.equal(isObserved(holding(undefined), 'ns/a', { type: 'absent', notBefore: '7' }, '7'), true);
  assert.equal(compareResourceVersions('10', '9'), 1, 'numbers, not strings');
  assert.equal(compareResourceVersions('18446744073709551615', '18446744073709551614'), 1, 'beyond 2^53');
  assert.equal(compareResourceVersions('09', '10'), undefined, 'a leading zero is not etcd form');
  assert.equal(compareResourceVersions('', '1'), undefined);
  assert.equal(DEFAULT_OWN_WRITES_WAIT_MS, 5_000);
});

test('many writes then one list: the list waits for all, then answers them all', async () => {
  const s = setup();
  await s.within(s.names());
  s.gate.hold();
  for (let i = 0; i < 50; i++) await s.client.create(cm(`n${String(i).padStart(2, '0')}`));
  const listed = s.names();
  assert.equal(await s.within(listed, 100), 'pending');
  s.gate.release();
  const all = await s.within(listed);
  assert.equal(all === 'pending' ? -1 : all.length, 51);
  await flushMicrotasks();
  await s.stop();
});
