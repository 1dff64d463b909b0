import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep } from '../core/abort.js';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { Workqueue, DEFAULT_DRAIN_TIMEOUT_MS } from './workqueue.js';
import type { ShutdownResult } from './workqueue.js';

test('shutdown tells waiting workers to stop and turns adds into no-ops', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  const waiting = [q.get(), q.get()];
  assert.deepEqual(await q.shutdown(), { drained: true });
  assert.deepEqual(await Promise.all(waiting), [{ shutdown: true }, { shutdown: true }]);
  q.add('a');
  q.addAfter('b', 10);
  q.addRateLimited('c');
  assert.equal(q.length, 0);
  assert.equal(q.waitingCount, 0);
  assert.equal(q.numRequeues('c'), 0, 'a refused rate-limited add does not count a retry');
  assert.deepEqual(await q.get(), { shutdown: true });
  assert.equal(q.isShuttingDown, true);
});

test('shutdown drops queued and delayed keys and cancels the delay timer', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.add('a');
  q.addAfter('b', 100);
  assert.equal(clock.pendingTimers, 1);
  await q.shutdown();
  assert.equal(q.length, 0);
  assert.equal(q.waitingCount, 0);
  assert.equal(clock.pendingTimers, 0);
  assert.deepEqual(await q.get(), { shutdown: true });
});

test('shutdown drains in-flight work: it resolves once every worker is done', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  const processed: string[] = [];
  const worker = async (): Promise<void> => {
    for (;;) {
      const next = await q.get();
      if (next.shutdown) return;
      await sleep(clock, next.key === 'slow' ? 5_000 : 100);
      processed.push(next.key);
      q.done(next.key);
    }
  };
  const workers = [worker(), worker()];
  q.add('slow');
  q.add('fast');
  await flushMicrotasks();
  assert.equal(q.processingCount, 2);
  q.add('fast'); // in flight and dirty: not run again after shutdown

  let result: ShutdownResult | undefined;
  const shutdown = q.shutdown({ drainTimeoutMs: 10_000 }).then((r) => (result = r));
  await clock.advance(4_999);
  assert.equal(result, undefined, 'still waiting for the slow key');
  await clock.advance(1);
  await shutdown;
  assert.deepEqual(result, { drained: true });
  assert.deepEqual(processed.sort(), ['fast', 'slow']);
  await Promise.all(workers);
  assert.equal(clock.pendingTimers, 0, 'the drain timeout was cancelled');
});

test('shutdown gives up after drainTimeoutMs when a worker hangs, naming the key', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.add('stuck');
  q.add('ok');
  const stuck = await q.get();
  const ok = await q.get();
  assert.ok(!stuck.shutdown && !ok.shutdown);
  let result: ShutdownResult | undefined;
  const shutdown = q.shutdown({ drainTimeoutMs: 1_000 }).then((r) => (result = r));
  q.done(ok.key);
  await clock.advance(999);
  assert.equal(result, undefined);
  await clock.advance(1);
  await shutdown;
  assert.deepEqual(result, { drained: false, inFlight: ['stuck'] });
});

test('the default drain timeout is 30 s', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.add('stuck');
  await q.get();
  let result: ShutdownResult | undefined;
  const shutdown = q.shutdown().then((r) => (result = r));
  assert.equal(DEFAULT_DRAIN_TIMEOUT_MS, 30_000);
  await clock.advance(29_999);
  assert.equal(result, undefined);
  await clock.advance(1);
  assert.equal((await shutdown).drained, false);
});

test('shutdown with drainTimeoutMs 0 returns at once; a later call can wait for the drain', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.add('a');
  await q.get();
  assert.deepEqual(await q.shutdown({ drainTimeoutMs: 0 }), { drained: false, inFlight: ['a'] });
  const again = q.shutdown({ drainTimeoutMs: Infinity });
  assert.equal(clock.pendingTimers, 0, 'an infinite wait arms no timer');
  q.done('a');
  assert.deepEqual(await again, { drained: true });
});

test('aborting the shutdown signal stops waiting for the drain', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.add('a');
  await q.get();
  const ac = new AbortController();
  const shutdown = q.shutdown({ signal: ac.signal });
  ac.abort();
  assert.deepEqual(await shutdown, { drained: false, inFlight: ['a'] });
  assert.equal(clock.pendingTimers, 0);
  const pre = new AbortController();
  pre.abort();
  assert.deepEqual(await q.shutdown({ signal: pre.signal }), { drained: false, inFlight: ['a'] });
});

test('a negative drain timeout is refused, naming the option', () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  assert.throws(
    () => q.shutdown({ drainTimeoutMs: -1 }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'drainTimeoutMs',
  );
});
