import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as settle } from 'node:timers/promises';
import { InvalidOptionError } from '../core/errors.js';
import { FakeClock } from '../core/fake-clock.js';
import { LOW_PRIORITY, Workqueue, type GetResult, type WorkqueueOptions } from './workqueue.js';

/** A fleet controller's grouping: `cluster/namespace/name` → `cluster`. */
const byCluster = (key: string): string => key.slice(0, key.indexOf('/'));

function cappedQueue(cap: number, options: WorkqueueOptions = {}): Workqueue {
  return new Workqueue({ clock: new FakeClock(0), fairnessKey: byCluster, maxInFlightPerGroup: cap, ...options });
}

function keyOf(result: GetResult): string {
  assert.equal(result.shutdown, false);
  return result.shutdown ? '' : result.key;
}

/** Whether `promise` has settled by now (after pending callbacks ran). */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await settle();
  return settled;
}

test('a member whose reconciles hang holds at most its cap of the workers: the other member keeps getting keys (regression: one stalled member stalled all)', async () => {
  const q = cappedQueue(2);
  for (let i = 0; i < 20; i++) q.add(`stuck/ns/obj-${i}`);
  for (let i = 0; i < 20; i++) q.add(`ok/ns/obj-${i}`);
  const handedOut: string[] = [];
  const stop = new AbortController();
  // Four workers: a key of `stuck` never finishes (a write held open forever), `ok` ones at once.
  const workers = Array.from({ length: 4 }, async () => {
    for (;;) {
      let next: GetResult;
      try {
        next = await q.get(stop.signal);
      } catch {
        return;
      }
      if (next.shutdown) return;
      handedOut.push(next.key);
      if (next.key.startsWith('stuck/')) continue; // this worker is now held: it never calls done
      q.done(next.key);
    }
  });
  for (let i = 0; i < 10; i++) await settle();
  const ok = handedOut.filter((k) => k.startsWith('ok/'));
  const stuck = handedOut.filter((k) => k.startsWith('stuck/'));
  assert.equal(ok.length, 20, 'every key of the healthy member was handed out');
  assert.equal(stuck.length, 2, 'the stalled member holds its cap, no more');
  assert.equal(q.processingCount, 2);
  assert.equal(q.lengthOfGroup('stuck'), 18, 'its other keys wait, queued');
  stop.abort();
  await Promise.all(workers);
});

test('a group at its cap is passed over until one of its keys is done, then goes first again', async () => {
  const q = cappedQueue(1);
  q.add('a/ns/1');
  q.add('a/ns/2');
  q.add('b/ns/1');
  assert.equal(keyOf(await q.get()), 'a/ns/1');
  assert.equal(keyOf(await q.get()), 'b/ns/1');
  const waiting = q.get();
  assert.equal(await isSettled(waiting), false, 'a is at its cap and b has nothing queued: the worker waits');
  q.done('a/ns/1');
  assert.equal(keyOf(await waiting), 'a/ns/2', 'the waiting worker takes the key the cap held back');
});

test('a capped group with higher-priority keys does not hold back another group with lower-priority ones, and keeps its priority', async () => {
  const q = cappedQueue(1);
  q.add('a/ns/1');
  assert.equal(keyOf(await q.get()), 'a/ns/1');
  q.add('a/ns/2', { priority: 10 });
  q.add('b/ns/1', { priority: LOW_PRIORITY });
  q.add('b/ns/2', { priority: LOW_PRIORITY });
  assert.equal(keyOf(await q.get()), 'b/ns/1', 'a is at its cap: b goes although it is lower');
  q.done('a/ns/1');
  q.done('b/ns/1');
  assert.equal(keyOf(await q.get()), 'a/ns/2', 'a is free again: its priority 10 goes before b');
  assert.equal(q.priorityOf('a/ns/2'), 10);
  assert.equal(keyOf(await q.get()), 'b/ns/2');
});

test('a key re-added while in flight with its group at the cap runs again after done, behind its group’s earlier keys, never twice at once', async () => {
  const q = cappedQueue(1);
  q.add('a/ns/1');
  assert.equal(keyOf(await q.get()), 'a/ns/1');
  q.add('a/ns/2');
  q.add('a/ns/1'); // dirty while in flight
  const first = q.get();
  const second = q.get();
  assert.equal(await isSettled(first), false);
  q.done('a/ns/1');
  assert.equal(keyOf(await first), 'a/ns/2', 'the key queued earlier goes first');
  assert.equal(await isSettled(second), false, 'a/ns/1 waits for the cap, it is not handed out twice');
  assert.equal(q.length, 1);
  q.done('a/ns/2');
  assert.equal(keyOf(await second), 'a/ns/1');
  q.done('a/ns/1');
  assert.equal(q.length, 0);
  assert.equal(q.processingCount, 0);
});

test('a waiter aborted while the cap held keys back consumes nothing; shutdown releases the others', async () => {
  const q = cappedQueue(1);
  q.add('a/ns/1');
  q.add('a/ns/2');
  assert.equal(keyOf(await q.get()), 'a/ns/1');
  const abort = new AbortController();
  const aborted = q.get(abort.signal);
  const live = q.get();
  abort.abort();
  await assert.rejects(aborted, { code: 'ERR_ABORTED' });
  q.done('a/ns/1');
  assert.equal(keyOf(await live), 'a/ns/2');
  q.add('a/ns/3');
  const last = q.get();
  const result = q.shutdown({ drainTimeoutMs: 0 });
  assert.deepEqual(await last, { shutdown: true });
  assert.deepEqual(await result, { drained: false, inFlight: ['a/ns/2'] });
});

test('the cap is counted per group: different groups each get up to their cap', async () => {
  const q = cappedQueue(2);
  for (const g of ['a', 'b', 'c']) for (let i = 0; i < 3; i++) q.add(`${g}/ns/${i}`);
  const out: string[] = [];
  for (let i = 0; i < 6; i++) out.push(keyOf(await q.get()));
  assert.deepEqual(out.map(byCluster).sort(), ['a', 'a', 'b', 'b', 'c', 'c']);
  assert.equal(await isSettled(q.get()), false);
});

test('maxInFlightPerGroup is validated and needs a fairness key', () => {
  for (const bad of [0, -1, 1.5, Number.NaN])
    assert.throws(
      () => cappedQueue(bad),
      (e: unknown) => e instanceof InvalidOptionError && /maxInFlightPerGroup/.test(e.message),
    );
  assert.throws(
    () => new Workqueue({ maxInFlightPerGroup: 2 }),
    (e: unknown) => e instanceof InvalidOptionError && /maxInFlightPerGroup.*fairnessKey/.test(e.message),
  );
  assert.doesNotThrow(() => cappedQueue(Infinity));
});
