import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../core/errors.js';
import { ItemExponentialRateLimiter, DEFAULT_ITEM_BACKOFF } from './item-exponential-rate-limiter.js';

test('per-item backoff doubles from 5 ms, caps at 1000 s and starts over after forget', () => {
  const limiter = new ItemExponentialRateLimiter();
  assert.equal(DEFAULT_ITEM_BACKOFF.initialMs, 5);
  assert.equal(DEFAULT_ITEM_BACKOFF.maxMs, 1_000_000);
  assert.deepEqual(
    Array.from({ length: 5 }, () => limiter.when('a')),
    [5, 10, 20, 40, 80],
  );
  assert.equal(limiter.numRequeues('a'), 5);
  for (let i = 0; i < 30; i++) limiter.when('a');
  assert.equal(limiter.when('a'), 1_000_000, 'capped');
  limiter.forget('a');
  assert.equal(limiter.numRequeues('a'), 0);
  assert.equal(limiter.when('a'), 5);
});

test('one failing key backing off does not slow another key', () => {
  const limiter = new ItemExponentialRateLimiter({ backoff: { initialMs: 1, maxMs: 100 } });
  for (let i = 0; i < 10; i++) limiter.when('hot');
  assert.equal(limiter.when('hot'), 100);
  assert.equal(limiter.when('cold'), 1);
  assert.equal(limiter.numRequeues('cold'), 1);
});

test('a max delay below the initial delay is refused, naming the option', () => {
  assert.throws(
    () => new ItemExponentialRateLimiter({ backoff: { initialMs: 10, maxMs: 5 } }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'backoff.maxMs',
  );
});

test('backoff fields the limiter cannot honour (jitter, a last attempt) are refused rather than ignored', () => {
  assert.throws(
    () => new ItemExponentialRateLimiter({ backoff: { jitter: 0.1 } }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'backoff.jitter',
  );
  assert.throws(
    () => new ItemExponentialRateLimiter({ backoff: { maxAttempts: 3 } }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'backoff.maxAttempts',
  );
});

test('factor sets the growth per failure', () => {
  const limiter = new ItemExponentialRateLimiter({ backoff: { initialMs: 10, maxMs: 1_000, factor: 3 } });
  assert.deepEqual(
    Array.from({ length: 4 }, () => limiter.when('k')),
    [10, 30, 90, 270],
  );
});
