import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { HandlerDispatcher, type AddEventInfo, type EventHandler } from './handler-dispatcher.js';
import { SharedInformer } from './informer.js';
import { FakeListerWatcher, gone } from './testing/fake-lister-watcher.js';

const cm = (name: string, v = '1'): KubeObject & { data: { v: string } } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  data: { v },
});

function setup(initial: KubeObject[], pageSize?: number) {
  const clock = new FakeClock(0);
  const lw = new FakeListerWatcher<KubeObject>(initial);
  const informer = new SharedInformer<KubeObject>(lw, {
    clock,
    random: () => 0,
    backoff: { jitter: 0 },
    ...(pageSize ? { pageSize } : {}),
  });
  const ac = new AbortController();
  const done = informer.start(ac.signal);
  const settle = async (): Promise<void> => {
    await clock.advance(0);
    await informer.whenHandlersIdle();
    await clock.advance(0);
  };
  return { lw, informer, settle, stop: async () => (ac.abort(), await done) };
}

function adds(): { log: string[]; handler: EventHandler<KubeObject> } {
  const log: string[] = [];
  const handler: EventHandler<KubeObject> = {
    add: (o: KubeObject, info?: AddEventInfo) =>
      void log.push(`${o.metadata?.name}:${info?.isInInitialList ? 'list' : 'watch'}`),
  };
  return { log, handler };
}

test("adds say whether a list or a watch event announced them (client-go's isInInitialList)", async () => {
  const s = setup([cm('a'), cm('b')]);
  const early = adds();
  s.informer.addEventHandler(early.handler);
  await s.settle();
  s.lw.create(cm('c'));
  await s.settle();
  const late = adds(); // registered after sync: the cache is replayed to it, as from a list
  s.informer.addEventHandler(late.handler);
  await s.settle();
  assert.deepEqual(early.log, ['a:list', 'b:list', 'c:watch']);
  assert.deepEqual(late.log.sort(), ['a:list', 'b:list', 'c:list']);
  await s.stop();
});

test('a relist announces objects it found as from a list', async () => {
  const s = setup([cm('a')], 1);
  const r = adds();
  s.informer.addEventHandler(r.handler);
  await s.settle();
  s.lw.silenceWatches();
  s.lw.create(cm('missed'));
  s.lw.compact();
  s.lw.breakWatches(gone());
  await s.settle();
  assert.deepEqual(r.log, ['a:list', 'missed:list']);
  await s.stop();
});

test('a listed object changed by a watch event before its handler got it is announced as from the watch', async () => {
  const r = adds();
  const dispatcher = new HandlerDispatcher<KubeObject>(r.handler);
  dispatcher.enqueue({ type: 'add', key: 'ns/a', object: cm('a') }, true);
  dispatcher.enqueue({ type: 'update', key: 'ns/a', old: cm('a'), object: cm('a', '2') }); // before delivery
  dispatcher.enqueue({ type: 'add', key: 'ns/b', object: cm('b') }, true);
  dispatcher.enqueue({ type: 'resync', key: 'ns/b', object: cm('b') }); // a resync changes nothing
  await dispatcher.whenIdle();
  await new Promise((resolve) => setImmediate(resolve));
  await dispatcher.whenIdle();
  assert.deepEqual(r.log, ['a:watch', 'b:list']);
});
