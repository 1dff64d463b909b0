import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExponentialBackoff, delayFor } from './backoff.js';
import { InvalidOptionError } from './errors.js';

test('backoff doubles from initial to the cap and starts over after reset', () => {
  const b = new ExponentialBackoff({ initialMs: 800, maxMs: 30_000 });
  const delays = Array.from({ length: 8 }, () => b.next());
  assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  b.reset();
  assert.equal(b.next(), 800);
});

test('jitter keeps every delay within ±jitter of the base and under the cap', () => {
  let r = 0;
  const randoms = [0, 0.999999, 0.5];
  const b = new ExponentialBackoff({ initialMs: 1000, maxMs: 1500, jitter: 0.2, random: () => randoms[r++ % 3]! });
  assert.equal(b.next(), 800);
  assert.equal(b.next(), 1500); // 2000 * 1.2 capped
  assert.equal(b.next(), 1500);
});

test('delayFor does not overflow for huge failure counts', () => {
  assert.equal(delayFor(10_000, 5, 1_000_000), 1_000_000);
  assert.equal(delayFor(3, 5, 1_000_000), 40);
});

test('backoff rejects a max below the initial delay, naming the option', () => {
  assert.throws(
    () => new ExponentialBackoff({ initialMs: 10, maxMs: 5 }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'maxMs',
  );
});
