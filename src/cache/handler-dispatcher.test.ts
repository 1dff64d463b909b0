import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flushMicrotasks } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { HandlerDispatcher, type EventHandler } from './handler-dispatcher.js';
import { tombstone, isTombstone } from './tombstone.js';

const o = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });

function recording(gate?: Promise<void>) {
  const log: string[] = [];
  const handler: EventHandler<KubeObject> = {
    add: async (x) => {
      log.push(`add:${x.metadata?.name}@${x.metadata?.resourceVersion}`);
      if (gate) await gate;
    },
    update: (a, b) =>
      void log.push(`update:${b.metadata?.name}@${a.metadata?.resourceVersion}->${b.metadata?.resourceVersion}`),
    delete: (x) => void log.push(`delete:${isTombstone(x) ? `${x.key}:tombstone` : x.metadata?.name}`),
  };
  return { log, handler };
}

test('keys are served in the order they first became dirty, and a re-dirtied key keeps its place', async () => {
  const r = recording();
  const d = new HandlerDispatcher(r.handler);
  d.enqueue({ type: 'add', key: 'ns/a', object: o('a', '1') });
  d.enqueue({ type: 'add', key: 'ns/b', object: o('b', '1') });
  d.enqueue({ type: 'update', key: 'ns/a', old: o('a', '1'), object: o('a', '2') });
  await d.whenIdle();
  assert.deepEqual(r.log, ['add:a@2', 'add:b@1']);
});

test('handlers never run inside the enqueue that caused them', async () => {
  const r = recording();
  const d = new HandlerDispatcher(r.handler);
  d.enqueue({ type: 'add', key: 'ns/a', object: o('a', '1') });
  assert.deepEqual(r.log, []);
  await flushMicrotasks();
  assert.deepEqual(r.log, ['add:a@1']);
});

test('a synchronous handler gets the whole backlog in one turn; a returned promise is still awaited before the next call', async () => {
  const log: string[] = [];
  const sync = new HandlerDispatcher<KubeObject>({ add: (x) => void log.push(`sync:${x.metadata?.name}`) });
  for (const name of ['a', 'b', 'c']) sync.enqueue({ type: 'add', key: `ns/${name}`, object: o(name, '1') });
  await Promise.resolve(); // the one microtask that starts the drain
  assert.deepEqual(log, ['sync:a', 'sync:b', 'sync:c']);

  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const async = new HandlerDispatcher<KubeObject>({
    add: async (x) => {
      log.push(`async:${x.metadata?.name}`);
      if (x.metadata?.name === 'a') await gate;
    },
  });
  for (const name of ['a', 'b']) async.enqueue({ type: 'add', key: `ns/${name}`, object: o(name, '1') });
  await flushMicrotasks();
  assert.deepEqual(log.slice(3), ['async:a'], 'b waits for a');
  release();
  await async.whenIdle();
  assert.deepEqual(log.slice(3), ['async:a', 'async:b']);
});

test('a resync of a key that is already pending is not delivered twice', async () => {
  const r = recording();
  const d = new HandlerDispatcher(r.handler);
  d.enqueue({ type: 'update', key: 'ns/a', old: o('a', '1'), object: o('a', '2') });
  d.enqueue({ type: 'resync', key: 'ns/a', object: o('a', '2') });
  d.enqueue({ type: 'resync', key: 'ns/b', object: o('b', '5') });
  await d.whenIdle();
  assert.deepEqual(r.log, ['update:a@1->2', 'update:b@5->5']);
});

test('an object the handler never saw that vanished in a relist is announced as add then a tombstone delete', async () => {
  const r = recording();
  const d = new HandlerDispatcher(r.handler);
  d.enqueue({ type: 'add', key: 'ns/a', object: o('a', '1') });
  d.enqueue({ type: 'delete', key: 'ns/a', old: o('a', '1'), deleted: tombstone('ns/a', o('a', '1')) });
  await d.whenIdle();
  assert.deepEqual(r.log, ['add:a@1', 'delete:ns/a:tombstone']);
});

test('stop drops the backlog; the call in flight finishes and nothing follows it', async () => {
  let release!: () => void;
  const r = recording(new Promise<void>((res) => (release = res)));
  const d = new HandlerDispatcher(r.handler);
  d.enqueue({ type: 'add', key: 'ns/a', object: o('a', '1') });
  await flushMicrotasks();
  d.enqueue({ type: 'add', key: 'ns/b', object: o('b', '1') });
  assert.equal(d.pendingKeys, 1);
  d.stop();
  assert.equal(d.pendingKeys, 0);
  release();
  await d.whenIdle();
  d.enqueue({ type: 'add', key: 'ns/c', object: o('c', '1') });
  await flushMicrotasks();
  assert.deepEqual(r.log, ['add:a@1']);
});

test('hasSynced turns true only once the initial snapshot has been delivered', async () => {
  const r = recording();
  const d = new HandlerDispatcher(r.handler);
  d.enqueue({ type: 'add', key: 'ns/a', object: o('a', '1') });
  d.markInitialEnqueued();
  assert.equal(d.hasSynced(), false);
  await d.whenIdle();
  assert.equal(d.hasSynced(), true);
  const empty = new HandlerDispatcher(r.handler);
  empty.markInitialEnqueued();
  assert.equal(empty.hasSynced(), true, 'an empty snapshot is delivered at once');
});

test('the pending-keys callback follows the backlog so it can be exported as a metric', async () => {
  const seen: number[] = [];
  const d = new HandlerDispatcher(recording().handler, { onPending: (n) => seen.push(n) });
  d.enqueue({ type: 'add', key: 'ns/a', object: o('a', '1') });
  d.enqueue({ type: 'add', key: 'ns/b', object: o('b', '1') });
  await d.whenIdle();
  assert.deepEqual(seen, [1, 2, 1, 0]);
});
