import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { IdleWatchdog } from './idle-watchdog.js';

test('fires once nothing touched it for the limit, counted from the last touch', () => {
  const clock = new FakeClock(0);
  const fired: number[] = [];
  const watchdog = new IdleWatchdog(clock, 1_000, () => fired.push(clock.monotonicNow()));
  clock.step(600);
  watchdog.touch();
  clock.step(900);
  assert.deepEqual(fired, [], 'touched 900 ms ago: not idle yet');
  watchdog.touch();
  clock.step(999);
  assert.deepEqual(fired, []);
  clock.step(1);
  assert.deepEqual(fired, [2_500], 'exactly the limit after the last touch');
  clock.step(10_000);
  assert.deepEqual(fired, [2_500], 'once');
  assert.equal(clock.pendingTimers, 0);
});

test('fires at the limit when never touched; cancel stops it and leaves no timer', () => {
  const clock = new FakeClock(0);
  let fired = 0;
  new IdleWatchdog(clock, 500, () => fired++);
  clock.step(500);
  assert.equal(fired, 1);

  const cancelled = new IdleWatchdog(clock, 500, () => fired++);
  clock.step(300);
  cancelled.touch();
  clock.step(300);
  cancelled.cancel();
  clock.step(5_000);
  assert.equal(fired, 1);
  assert.equal(clock.pendingTimers, 0);
});
