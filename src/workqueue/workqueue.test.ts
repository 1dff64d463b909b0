import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import { AbortedError, InvalidOptionError } from '../core/errors.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { ItemExponentialRateLimiter } from './item-exponential-rate-limiter.js';
import { Workqueue } from './workqueue.js';
import type { GetResult } from './workqueue.js';

function keyOf(result: GetResult): string {
  assert.equal(result.shutdown, false, 'expected a key, got shutdown');
  return result.key;
}

/** Whether `promise` has settled after pending callbacks ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await flushMicrotasks();
  return settled;
}

test('keys come out in the order they were added, and adding a queued key is a no-op', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  for (const k of ['a', 'b', 'a', 'c', 'b']) q.add(k);
  assert.equal(q.length, 3);
  assert.deepEqual([keyOf(await q.get()), keyOf(await q.get()), keyOf(await q.get())], ['a', 'b', 'c']);
  assert.equal(q.length, 0);
});

test('a key added while in flight is not handed out again until done, then exactly once', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  q.add('a');
  assert.equal(keyOf(await q.get()), 'a');
  q.add('a');
  q.add('a');
  assert.equal(q.length, 0, 'an in-flight key is marked dirty, not queued');
  const second = q.get();
  assert.equal(await isSettled(second), false, 'a second worker does not get the in-flight key');
  q.done('a');
  assert.equal(keyOf(await second), 'a');
  q.done('a');
  assert.equal(q.length, 0, 'the repeated adds collapsed into one more run');
  assert.equal(q.processingCount, 0);
});

test('get waits while the queue is empty and resolves when a key is added', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  const waiting = q.get();
  assert.equal(await isSettled(waiting), false);
  q.add('x');
  assert.equal(keyOf(await waiting), 'x');
  assert.equal(q.processingCount, 1);
});

test('waiting workers are served in arrival order', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  const order: string[] = [];
  const first = q.get().then((r) => order.push(`first:${keyOf(r)}`));
  const second = q.get().then((r) => order.push(`second:${keyOf(r)}`));
  q.add('a');
  q.add('b');
  await Promise.all([first, second]);
  assert.deepEqual(order, ['first:a', 'second:b']);
});

test('a get aborted while waiting rejects with AbortedError and never swallows a later key', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  const ac = new AbortController();
  const aborted = q.get(ac.signal);
  const other = q.get();
  ac.abort(new Error('stop'));
  await assert.rejects(aborted, (e: unknown) => e instanceof AbortedError && e.code === 'ERR_ABORTED');
  q.add('a');
  assert.equal(keyOf(await other), 'a', 'the live waiter gets the key, not the aborted one');
  q.add('b');
  assert.equal(keyOf(await q.get()), 'b');
});

test('an already-aborted signal rejects get at once without consuming a key', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  q.add('a');
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(q.get(ac.signal), AbortedError);
  assert.equal(q.length, 1);
  assert.equal(q.processingCount, 0);
});

test('many aborted gets on a quiet queue do not pile up', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  for (let i = 0; i < 1000; i++) {
    const ac = new AbortController();
    const p = q.get(ac.signal);
    ac.abort();
    await assert.rejects(p, AbortedError);
  }
  const waiters = (q as unknown as { waiters: { length: number } }).waiters;
  assert.ok(waiters.length <= 130, `tombstones are compacted (${waiters.length} left)`);
  const live = q.get();
  q.add('a');
  assert.equal(keyOf(await live), 'a');
});

test('done for a key that is not in flight is ignored', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  q.done('never-got');
  q.add('a');
  q.done('a'); // queued, not in flight
  assert.equal(keyOf(await q.get()), 'a');
});

test('addAfter adds the key once its delay has passed on the injected clock', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.addAfter('a', 100);
  assert.equal(q.length, 0);
  assert.equal(q.waitingCount, 1);
  await clock.advance(99);
  assert.equal(q.length, 0);
  await clock.advance(1);
  assert.equal(q.length, 1);
  assert.equal(q.waitingCount, 0);
  assert.equal(keyOf(await q.get()), 'a');
});

test('addAfter requests for one key coalesce and the earliest time wins', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.addAfter('a', 500);
  q.addAfter('a', 1000); // later: does not postpone
  q.addAfter('a', 200); // earlier: wins
  q.addAfter('a', 300);
  assert.equal(q.waitingCount, 1);
  await clock.advance(199);
  assert.equal(q.length, 0);
  await clock.advance(1);
  assert.equal(q.length, 1);
  await clock.advance(10_000);
  assert.equal(q.length, 1, 'the superseded times do not add it again');
  assert.equal(clock.pendingTimers, 0);
});

test('one timer is armed, for the earliest waiting key, however many keys wait', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  for (let i = 0; i < 50; i++) q.addAfter(`k${i}`, 1000 - i * 10);
  assert.equal(clock.pendingTimers, 1);
  assert.equal(clock.nextTimerInMs(), 510);
  const order: string[] = [];
  const workers = (async () => {
    for (let i = 0; i < 50; i++) {
      const key = keyOf(await q.get());
      order.push(key);
      q.done(key);
    }
  })();
  await clock.advance(1000);
  await workers;
  assert.deepEqual(
    order,
    Array.from({ length: 50 }, (_, i) => `k${49 - i}`),
    'released in ready-time order',
  );
  assert.equal(clock.pendingTimers, 0);
});

test('a delayed key that is already queued when its time comes is not queued twice', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.addAfter('a', 10);
  q.add('a');
  await clock.advance(10);
  assert.equal(q.length, 1);
});

test('addAfter with no delay adds at once', () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  q.addAfter('a', 0);
  q.addAfter('b', -5);
  assert.equal(q.length, 2);
  assert.equal(q.waitingCount, 0);
});

test('addRateLimited backs a failing key off exponentially; forget resets it', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({
    clock,
    rateLimiter: new ItemExponentialRateLimiter({ backoff: { initialMs: 10, maxMs: 1000 } }),
  });
  const seenAt: number[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    q.addRateLimited('a');
    const got = q.get();
    await clock.advance(clock.nextTimerInMs() ?? 0);
    keyOf(await got);
    seenAt.push(clock.monotonicNow());
    q.done('a');
  }
  assert.deepEqual(seenAt, [10, 30, 70, 150], 'waits of 10, 20, 40, 80 ms');
  assert.equal(q.numRequeues('a'), 4);
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
  q.addRateLimited('a');
  assert.equal(clock.nextTimerInMs(), 10);
});

test('by default a queue limits retries with the controller default (5 ms per-key backoff first)', () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.addRateLimited('a');
  assert.equal(clock.nextTimerInMs(), 5);
  assert.equal(q.numRequeues('a'), 1);
});

test('a metrics registry without a queue name is refused, naming the option', () => {
  assert.throws(
    () => new Workqueue({ registry: createMetricsRegistry() }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'name',
  );
});

/** A clock whose timers fire only when the test says so, whatever the time. */
class ManualClock {
  nowMs = 0;
  timers: { ms: number; fn: () => void; cancelled: boolean }[] = [];
  now(): number {
    return this.nowMs;
  }
  monotonicNow(): number {
    return this.nowMs;
  }
  setTimer(ms: number, fn: () => void): { cancel(): void } {
    const t = { ms, fn, cancelled: false };
    this.timers.push(t);
    return { cancel: () => (t.cancelled = true) };
  }
  live(): { ms: number; fn: () => void }[] {
    return this.timers.filter((t) => !t.cancelled);
  }
}

test('a delay timer that fires early re-arms instead of adding the key before its time', () => {
  const clock = new ManualClock();
  const q = new Workqueue({ clock });
  q.addAfter('a', 10);
  const [first] = clock.live();
  assert.equal(first?.ms, 10);
  clock.nowMs = 9.6; // real timers may fire a fraction of a millisecond early
  first!.fn();
  assert.equal(q.length, 0);
  const [second] = clock.live().slice(1);
  assert.equal(second?.ms, 1, 'rounded up, never 0 ms early');
  clock.nowMs = 10;
  second!.fn();
  assert.equal(q.length, 1);
});

test('a delay longer than a Node timer can hold is armed in steps', () => {
  const clock = new ManualClock();
  const q = new Workqueue({ clock });
  const thirtyDaysMs = 30 * 24 * 3600 * 1000;
  q.addAfter('a', thirtyDaysMs);
  assert.equal(clock.live()[0]?.ms, 2_147_483_647, 'Node would turn a longer timeout into 1 ms');
  clock.nowMs = 2_147_483_647;
  clock.live()[0]!.fn();
  assert.equal(q.length, 0);
  assert.equal(clock.live().at(-1)?.ms, thirtyDaysMs - 2_147_483_647);
});
