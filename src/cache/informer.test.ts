import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock } from '../core/fake-clock.js';
import { AbortedError } from '../core/errors.js';
import { keyOf, type KubeObject } from '../core/object-key.js';
import { SharedInformer, type SharedInformerOptions } from './informer.js';
import type { EventHandler } from './handler-dispatcher.js';
import { isTombstone, deletedObject, type Tombstone } from './tombstone.js';
import { FakeListerWatcher, apiError, gone } from './testing/fake-lister-watcher.js';
import { CacheSyncTimeoutError } from './errors.js';
import { seededRandom } from '../core/seeded-random.js';

interface Cm extends KubeObject {
  data?: { v?: string; node?: string };
}

const cm = (name: string, v = '1', extra: { ns?: string; node?: string; uid?: string } = {}): Cm => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: extra.ns ?? 'ns', uid: extra.uid ?? `uid-${name}` },
  data: { v, node: extra.node },
});

function recorder() {
  const log: string[] = [];
  const tombstones: Tombstone<Cm>[] = [];
  const handler: EventHandler<Cm> = {
    add: (o) => void log.push(`add:${o.metadata?.name}:${o.data?.v}`),
    update: (old, o) => void log.push(`update:${o.metadata?.name}:${old.data?.v}->${o.data?.v}`),
    delete: (o) => {
      if (isTombstone(o)) tombstones.push(o);
      log.push(`delete:${deletedObject(o).metadata?.name}${isTombstone(o) ? ':tombstone' : ''}`);
    },
  };
  return { log, tombstones, handler };
}

function setup(initial: Cm[] = [], options: SharedInformerOptions<Cm> = {}) {
  const clock = new FakeClock(0);
  const lw = new FakeListerWatcher<Cm>(initial);
  const informer = new SharedInformer<Cm>(lw, { clock, random: () => 0, backoff: { jitter: 0 }, ...options });
  const ac = new AbortController();
  let done: Promise<void> | undefined;
  const start = (): void => {
    done = informer.start(ac.signal);
  };
  const settle = async (ms = 0) => {
    await clock.advance(ms);
    await informer.whenHandlersIdle();
    await clock.advance(0);
  };
  const stop = async () => {
    ac.abort();
    await done;
  };
  return { clock, lw, informer, ac, start, settle, stop };
}

test('handlers get the initial list as adds, then watch changes in order', async () => {
  const s = setup([cm('a'), cm('b')]);
  const r = recorder();
  s.informer.addEventHandler(r.handler);
  s.start();
  await s.settle();
  s.lw.update(cm('a', '2'));
  s.lw.delete('ns/b');
  s.lw.create(cm('c'));
  await s.settle();
  assert.deepEqual(r.log, ['add:a:1', 'add:b:1', 'update:a:1->2', 'delete:b', 'add:c:1']);
  await s.stop();
});

test('the informer relists after 410 and emits the deletes it missed, as tombstones, and updates for changed objects', async () => {
  const s = setup([cm('keep'), cm('change'), cm('gone')], { pageSize: 1 });
  const r = recorder();
  s.informer.addEventHandler(r.handler);
  s.start();
  await s.settle();
  s.lw.silenceWatches(); // we miss everything from here
  s.lw.update(cm('change', '2'));
  s.lw.delete('ns/gone');
  s.lw.create(cm('new'));
  s.lw.compact();
  s.lw.breakWatches(gone());
  await s.settle();
  assert.deepEqual(r.log.slice(3).sort(), ['add:new:1', 'delete:gone:tombstone', 'update:change:1->2']);
  assert.equal(r.tombstones[0]?.key, 'ns/gone');
  assert.equal(r.tombstones[0]?.lastKnown.data?.v, '1', 'the tombstone carries the last state we knew');
  assert.deepEqual(s.informer.reader.keys().sort(), s.lw.current().map(keyOf).sort());
  await s.stop();
});

test('a slow handler does not hold up the watch, the store or other handlers, and its backlog is one entry per key', async () => {
  const s = setup([cm('a')]);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slow: string[] = [];
  const slowReg = s.informer.addEventHandler({
    add: async (o) => {
      slow.push(`add:${o.data?.v}`);
      await gate;
    },
    update: (old, o) => void slow.push(`update:${old.data?.v}->${o.data?.v}`),
  });
  const fast = recorder();
  s.informer.addEventHandler(fast.handler);
  s.start();
  await s.clock.advance(0);
  for (let i = 2; i <= 1000; i++) s.lw.update(cm('a', String(i)));
  await s.clock.advance(0);
  assert.equal(s.informer.reader.get('ns/a')?.data?.v, '1000', 'the store is current');
  assert.equal(fast.log.length, 1000, 'the other handler got every change');
  assert.equal(slowReg.pendingKeys, 1, 'a thousand changes to one key are one pending entry');
  release();
  await s.settle();
  assert.deepEqual(slow, ['add:1', 'update:1->1000'], 'the slow handler gets old = what it last saw, new = latest');
  await s.stop();
});

test('a key deleted and re-created while its handler was busy arrives as delete(old) then add(new)', async () => {
  const s = setup([cm('a', '1', { uid: 'u1' }), cm('block')]);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const log: string[] = [];
  s.informer.addEventHandler({
    add: async (o) => {
      log.push(`add:${o.metadata?.name}:${o.metadata?.uid}`);
      if (o.metadata?.name === 'block') await gate;
    },
    update: (_old, o) => void log.push(`update:${o.metadata?.name}`),
    delete: (o) => void log.push(`delete:${deletedObject(o).metadata?.name}:${deletedObject(o).metadata?.uid}`),
  });
  s.start();
  await s.clock.advance(0);
  s.lw.update(cm('a', '2', { uid: 'u1' }));
  s.lw.delete('ns/a');
  s.lw.create(cm('a', '1', { uid: 'u2' }));
  s.lw.create(cm('brief'));
  s.lw.delete('ns/brief');
  await s.clock.advance(0);
  release();
  await s.settle();
  assert.deepEqual(log, [
    'add:a:u1',
    'add:block:uid-block',
    'delete:a:u1',
    'add:a:u2',
    'add:brief:uid-brief',
    'delete:brief:uid-brief',
  ]);
  await s.stop();
});

test('a handler that throws or rejects is skipped and still receives later changes', async () => {
  const s = setup([cm('a')]);
  const seen: string[] = [];
  s.informer.addEventHandler({
    add: () => {
      throw new Error('boom');
    },
    update: async (_o, n) => {
      seen.push(n.data!.v!);
      if (n.data?.v === '2') throw new Error('async boom');
    },
  });
  s.start();
  await s.settle();
  s.lw.update(cm('a', '2'));
  await s.settle();
  s.lw.update(cm('a', '3'));
  await s.settle();
  assert.deepEqual(seen, ['2', '3']);
  await s.stop();
});

test('a handler added after sync is first given every cached object, and reports synced once it has them', async () => {
  const s = setup([cm('a'), cm('b')]);
  s.start();
  await s.settle();
  const r = recorder();
  const reg = s.informer.addEventHandler(r.handler);
  assert.equal(reg.hasSynced(), false);
  await s.settle();
  assert.equal(reg.hasSynced(), true);
  assert.deepEqual(r.log, ['add:a:1', 'add:b:1']);
  await s.stop();
});

test('resync is off by default; when set, every cached object is re-delivered as update(obj, obj) each period', async () => {
  const s = setup([cm('a'), cm('b')]);
  const plain = recorder();
  const resyncing = recorder();
  s.informer.addEventHandler(plain.handler);
  s.informer.addEventHandler(resyncing.handler, { resyncPeriodMs: 60_000 });
  s.start();
  await s.settle();
  await s.settle(60_000);
  assert.deepEqual(resyncing.log.slice(2), ['update:a:1->1', 'update:b:1->1']);
  await s.settle(60_000);
  assert.equal(resyncing.log.length, 6);
  assert.equal(plain.log.length, 2);
  await s.stop();
  assert.equal(s.clock.pendingTimers, 0, 'resync timers are cancelled on stop');
});

test('waitForSync resolves after the first list, and rejects on abort or timeout', async () => {
  const s = setup([cm('a')]);
  s.lw.failNext('list', apiError(500), 3);
  const ac = new AbortController();
  const aborted = s.informer.waitForSync(ac.signal);
  const timedOut = assert.rejects(s.informer.waitForSync(new AbortController().signal, 1_000), CacheSyncTimeoutError);
  const ok = s.informer.waitForSync(new AbortController().signal);
  s.start();
  ac.abort();
  await assert.rejects(aborted, AbortedError);
  assert.equal(s.informer.hasSynced(), false);
  await s.clock.advance(1_000);
  await timedOut;
  await s.clock.advance(800 + 1600 + 3200);
  await ok;
  assert.equal(s.informer.hasSynced(), true);
  await s.informer.waitForSync(AbortSignal.abort(), 0); // already synced wins over an aborted signal
  await s.stop();
});

test('user indexes stay consistent with the store through watch events and a relist', async () => {
  const s = setup([cm('a', '1', { node: 'n1' }), cm('b', '1', { node: 'n1' })], {
    indexers: { node: (o: Cm) => (o.data?.node ? [o.data.node] : []) },
  });
  s.start();
  await s.settle();
  assert.deepEqual(s.informer.reader.indexKeys('node', 'n1').sort(), ['ns/a', 'ns/b']);
  s.lw.update(cm('a', '2', { node: 'n2' }));
  await s.settle();
  s.lw.silenceWatches();
  s.lw.delete('ns/b');
  s.lw.create(cm('c', '1', { node: 'n2' }));
  s.lw.compact();
  s.lw.breakWatches(gone());
  await s.settle();
  assert.deepEqual(s.informer.reader.indexValues('node'), ['n2']);
  assert.deepEqual(s.informer.reader.indexKeys('node', 'n2').sort(), ['ns/a', 'ns/c']);
  await s.stop();
});

test('a removed handler gets nothing more, and one added after stop gets nothing at all', async () => {
  const s = setup([cm('a')]);
  const removed = recorder();
  const reg = s.informer.addEventHandler(removed.handler);
  s.start();
  await s.settle();
  reg.remove();
  s.lw.update(cm('a', '2'));
  await s.settle();
  assert.deepEqual(removed.log, ['add:a:1']);
  await s.stop();
  const late = recorder();
  s.informer.addEventHandler(late.handler);
  await s.clock.advance(0);
  assert.deepEqual(late.log, []);
});

test('the informer exports its object count and each handler backlog on the registry passed in', async () => {
  const registry = new Registry();
  const s = setup([cm('a'), cm('b')], { name: 'cms', registry });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  s.informer.addEventHandler({ add: () => gate }, { name: 'slow' });
  s.start();
  await s.clock.advance(0);
  const text = await registry.metrics();
  assert.match(text, /cache_objects\{informer="cms"\} 2/);
  assert.match(text, /cache_handler_pending_keys\{informer="cms",handler="slow"\} 1/);
  release();
  await s.settle();
  assert.match(await registry.metrics(), /cache_handler_pending_keys\{informer="cms",handler="slow"\} 0/);
  await s.stop();
});

test('health reports state, sync, object count and each handler backlog', async () => {
  const s = setup([cm('a')], { name: 'configmaps' });
  s.informer.addEventHandler({}, { name: 'h' });
  assert.equal(s.informer.health().state, 'idle');
  s.start();
  await s.settle();
  const h = s.informer.health();
  assert.equal(h.name, 'configmaps');
  assert.equal(h.state, 'watching');
  assert.equal(h.synced, true);
  assert.equal(h.objects, 1);
  assert.deepEqual(h.handlers, [{ name: 'h', pendingKeys: 0, synced: true }]);
  await s.stop();
  assert.equal(s.informer.health().state, 'stopped');
});

test('under random writes and random watch breakage, the store and every handler converge on the server, and no delete is lost', async () => {
  for (const [seed, relistMode] of [
    [1, 'atomic'],
    [2, 'atomic'],
    [3, 'atomic'],
    [4, 'incremental'],
    [5, 'incremental'],
    [6, 'incremental'],
  ] as const) {
    const rnd = seededRandom(seed);
    const s = setup([], { pageSize: 3, relistMode });
    // A handler-side mirror built only from add/update/delete must end equal to the server.
    const mirror = new Map<string, string | undefined>();
    let uidCounter = 0;
    const violations: string[] = [];
    s.informer.addEventHandler({
      add: async (o) => {
        if (mirror.has(keyOf(o))) violations.push(`add of present ${keyOf(o)}`);
        mirror.set(keyOf(o), o.metadata?.resourceVersion);
        if (rnd() < 0.2) await s.clock.advance(0); // sometimes slow
      },
      update: (old, o) => {
        if (mirror.get(keyOf(o)) !== old.metadata?.resourceVersion) violations.push(`stale old for ${keyOf(o)}`);
        mirror.set(keyOf(o), o.metadata?.resourceVersion);
      },
      delete: (o) => {
        const k = isTombstone(o) ? o.key : keyOf(o);
        if (!mirror.has(k)) violations.push(`delete of absent ${k}`);
        mirror.delete(k);
      },
    });
    s.start();
    await s.settle();
    for (let step = 0; step < 300; step++) {
      const names = s.lw.current().map((o) => o.metadata!.name!);
      const x = rnd();
      if (x < 0.35 || names.length === 0) s.lw.create(cm(`o${step}`, '1', { uid: `u${++uidCounter}` }));
      else if (x < 0.6) s.lw.update(cm(names[Math.floor(rnd() * names.length)]!, String(step)));
      else if (x < 0.8) s.lw.delete(`ns/${names[Math.floor(rnd() * names.length)]}`);
      else if (x < 0.84) s.lw.breakWatches(apiError(500, 'reset'));
      else if (x < 0.88) s.lw.closeWatches();
      else if (x < 0.91) {
        s.lw.compact();
        s.lw.breakWatches(gone());
      } else if (x < 0.93) s.lw.silenceWatches();
      else if (x < 0.95) s.lw.failNext(rnd() < 0.5 ? 'list' : 'watch', apiError(503));
      await s.clock.advance(Math.floor(rnd() * 2000));
    }
    // Quiesce: let backoffs run out and any silenced watch hit its stall deadline.
    await s.settle(700_000);
    await s.settle(60_000);
    const server = new Map(s.lw.current().map((o) => [keyOf(o), o.metadata?.resourceVersion]));
    const cached = new Map(s.informer.reader.list().map((o) => [keyOf(o), o.metadata?.resourceVersion]));
    assert.deepEqual(cached, server, `seed ${seed}: store equals the server`);
    assert.deepEqual(
      new Map([...mirror].sort()),
      new Map([...server].sort()),
      `seed ${seed}: handler mirror equals the server`,
    );
    assert.deepEqual(violations, [], `seed ${seed}: handler saw a valid history`);
    await s.stop();
  }
});
