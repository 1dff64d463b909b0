import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FixedRing } from './fixed-ring.js';

describe('FixedRing', () => {
  test('keeps the last `capacity` items, newest first, overwriting the oldest', () => {
    const ring = new FixedRing<number>(3);
    assert.deepEqual(ring.newestFirst(), []);
    ring.push(1);
    ring.push(2);
    assert.deepEqual(ring.newestFirst(), [2, 1]);
    for (let i = 3; i <= 10; i++) ring.push(i);
    assert.equal(ring.length, 3);
    assert.deepEqual(ring.newestFirst(), [10, 9, 8]);
  });

  test('newest() and replaceNewest() see the last push, across the wrap', () => {
    const ring = new FixedRing<number>(2);
    assert.equal(ring.newest(), undefined);
    ring.replaceNewest(9);
    assert.equal(ring.length, 0);
    for (const n of [1, 2, 3]) ring.push(n);
    assert.equal(ring.newest(), 3);
    ring.replaceNewest(30);
    assert.deepEqual(ring.newestFirst(), [30, 2]);
  });

  test('rejects a capacity below 1', () => {
    assert.throws(() => new FixedRing(0), { code: 'ERR_INVALID_OPTION' });
  });
});
