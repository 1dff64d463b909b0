import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { TokenBucketRateLimiter, DEFAULT_BUCKET_BURST, DEFAULT_BUCKET_QPS } from './token-bucket-rate-limiter.js';

test('the token bucket allows its burst at once, then spaces retries at its rate', () => {
  const clock = new FakeClock(0);
  const limiter = new TokenBucketRateLimiter({ clock });
  assert.equal(DEFAULT_BUCKET_QPS, 10);
  assert.equal(DEFAULT_BUCKET_BURST, 100);
  const burst = Array.from({ length: 100 }, (_, i) => limiter.when(`k${i}`));
  assert.ok(
    burst.every((d) => d === 0),
    'the first 100 go at once',
  );
  // Each further reservation waits one more token (100 ms at 10/s): the bucket goes into debt.
  assert.deepEqual(
    Array.from({ length: 4 }, (_, i) => limiter.when(`x${i}`)),
    [100, 200, 300, 400],
  );
});

test('the token bucket refills with time, never above its burst', () => {
  const clock = new FakeClock(0);
  const limiter = new TokenBucketRateLimiter({ qps: 2, burst: 3, clock });
  assert.deepEqual([limiter.when('a'), limiter.when('a'), limiter.when('a'), limiter.when('a')], [0, 0, 0, 500]);
  clock.step(500); // pays the debt: the bucket is at 0 tokens
  assert.equal(limiter.when('a'), 500);
  clock.step(60_000); // a long quiet spell refills only up to the burst
  assert.deepEqual([limiter.when('a'), limiter.when('a'), limiter.when('a'), limiter.when('a')], [0, 0, 0, 500]);
});

test('the token bucket is per queue, not per key: forget and numRequeues do not apply', () => {
  const limiter = new TokenBucketRateLimiter({ qps: 1, burst: 1, clock: new FakeClock(0) });
  limiter.when('a');
  limiter.forget('a');
  assert.equal(limiter.numRequeues('a'), 0);
  assert.equal(limiter.when('b'), 1000, 'forgetting a key does not return its token');
});

test('a token bucket with no rate or no burst is refused', () => {
  assert.throws(
    () => new TokenBucketRateLimiter({ qps: 0 }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'qps',
  );
  assert.throws(
    () => new TokenBucketRateLimiter({ burst: 0 }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'burst',
  );
});
