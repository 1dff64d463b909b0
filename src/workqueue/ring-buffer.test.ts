import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RingBuffer } from './ring-buffer.js';

test('the ring buffer stays FIFO across wrap-around and growth', () => {
  const rb = new RingBuffer<number>(4);
  const out: number[] = [];
  let next = 0;
  // Interleave pushes and shifts so the head wraps before the buffer has to grow.
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < (round % 7) + 1; i++) rb.push(next++);
    for (let i = 0; i < (round % 5) + 1; i++) {
      const v = rb.shift();
      if (v !== undefined) out.push(v);
    }
  }
  for (let v = rb.shift(); v !== undefined; v = rb.shift()) out.push(v);
  assert.deepEqual(
    out,
    Array.from({ length: next }, (_, i) => i),
  );
  assert.equal(rb.length, 0);
  assert.equal(rb.shift(), undefined);
});

test('retain keeps the accepted items in order and clear empties the buffer', () => {
  const rb = new RingBuffer<number>(2);
  for (let i = 0; i < 10; i++) rb.push(i);
  rb.shift();
  rb.retain((v) => v % 2 === 0);
  assert.deepEqual([...rb], [2, 4, 6, 8]);
  rb.clear();
  assert.equal(rb.length, 0);
  assert.deepEqual([...rb], []);
});
