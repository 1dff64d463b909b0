import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { defaultControllerRateLimiter } from './default-controller-rate-limiter.js';
import { ItemExponentialRateLimiter } from './item-exponential-rate-limiter.js';
import { MaxOfRateLimiter } from './max-of-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { TokenBucketRateLimiter } from './token-bucket-rate-limiter.js';

test('max-of waits the longest of its limiters and every limiter records every retry', () => {
  const clock = new FakeClock(0);
  const bucket = new TokenBucketRateLimiter({ qps: 1, burst: 2, clock });
  const item = new ItemExponentialRateLimiter({ backoff: { initialMs: 1, maxMs: 10_000 } });
  const limiter = new MaxOfRateLimiter(item, bucket);
  assert.equal(limiter.when('a'), 1); // item 1 ms, bucket 0
  assert.equal(limiter.when('a'), 2); // item 2 ms, bucket 0 (last burst token)
  assert.equal(limiter.when('b'), 1000); // item 1 ms, bucket in debt: 1 s
  assert.equal(limiter.numRequeues('a'), 2);
  limiter.forget('a');
  assert.equal(item.numRequeues('a'), 0, 'forget reaches every limiter');
});

test('max-of needs at least one limiter', () => {
  assert.throws(() => new MaxOfRateLimiter(), InvalidOptionError);
});

test('the default controller limiter is per-key backoff under a 10/s burst-100 bucket', () => {
  const clock = new FakeClock(0);
  const limiter: RateLimiter = defaultControllerRateLimiter({ clock });
  assert.deepEqual([limiter.when('a'), limiter.when('a'), limiter.when('a')], [5, 10, 20]);
  for (let i = 0; i < 97; i++) assert.equal(limiter.when(`k${i}`), 5, 'burst: per-key backoff only');
  assert.equal(limiter.when('fresh'), 100, 'bucket exhausted: 100 ms per retry at 10/s');
  limiter.forget('a');
  assert.equal(limiter.numRequeues('a'), 0);
});

test('each default controller limiter is a fresh value, so queues never share backoff', () => {
  const clock = new FakeClock(0);
  const a = defaultControllerRateLimiter({ clock });
  const b = defaultControllerRateLimiter({ clock });
  a.when('k');
  a.when('k');
  assert.equal(b.when('k'), 5);
});
