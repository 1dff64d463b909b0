import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './fake-clock.js';
import { sleep } from './abort.js';
import { AbortedError } from './errors.js';

test('FakeClock fires due timers in due-time order and leaves later ones pending', () => {
  const clock = new FakeClock(0);
  const fired: string[] = [];
  clock.setTimer(30, () => fired.push('c'));
  clock.setTimer(10, () => fired.push('a'));
  clock.setTimer(20, () => fired.push('b'));
  clock.setTimer(100, () => fired.push('late'));
  clock.step(30);
  assert.deepEqual(fired, ['a', 'b', 'c']);
  assert.equal(clock.now(), 30);
  assert.equal(clock.pendingTimers, 1);
  assert.equal(clock.nextTimerInMs(), 70);
});

test('FakeClock fires timers scheduled by a firing timer when they fall inside the step', () => {
  const clock = new FakeClock(0);
  const seen: number[] = [];
  clock.setTimer(5, () => {
    seen.push(clock.now());
    clock.setTimer(5, () => seen.push(clock.now()));
  });
  clock.step(10);
  assert.deepEqual(seen, [5, 10]);
});

test('a cancelled FakeClock timer never fires', () => {
  const clock = new FakeClock(0);
  let fired = false;
  const t = clock.setTimer(5, () => (fired = true));
  t.cancel();
  clock.step(10);
  assert.equal(fired, false);
});

test('sleep on the fake clock resolves on advance and rejects with AbortedError on abort', async () => {
  const clock = new FakeClock(0);
  let done = false;
  const p = sleep(clock, 1000).then(() => (done = true));
  await clock.advance(999);
  assert.equal(done, false);
  await clock.advance(1);
  await p;
  assert.equal(done, true);

  const ac = new AbortController();
  const q = sleep(clock, 1000, ac.signal);
  ac.abort();
  await assert.rejects(q, AbortedError);
  assert.equal(clock.pendingTimers, 0, 'abort cancels the timer');
});
