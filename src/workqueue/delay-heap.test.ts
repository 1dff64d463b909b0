import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DelayHeap } from './delay-heap.js';

test('the delay heap releases keys in ready-time order, ties in insertion order', () => {
  const heap = new DelayHeap();
  const times = [50, 10, 30, 10, 70, 20, 60, 40];
  times.forEach((t, i) => heap.schedule(`k${i}`, t));
  const out: string[] = [];
  for (let e = heap.popDue(Infinity); e; e = heap.popDue(Infinity)) out.push(e.key);
  assert.deepEqual(out, ['k1', 'k3', 'k5', 'k2', 'k7', 'k0', 'k6', 'k4']);
});

test('a second request for a waiting key only ever moves it earlier', () => {
  const heap = new DelayHeap();
  heap.schedule('a', 100);
  heap.schedule('b', 50);
  heap.schedule('a', 200); // later: ignored
  assert.equal(heap.readyAt('a'), 100);
  heap.schedule('a', 10); // earlier: wins, and a moves to the front
  assert.equal(heap.size, 2);
  assert.equal(heap.peek()?.key, 'a');
  assert.equal(heap.popDue(9), undefined, 'nothing is due before its time');
  assert.equal(heap.popDue(10)?.key, 'a');
  assert.equal(heap.readyAt('a'), undefined);
});

test('the heap keeps its order under many random schedules and reschedules', () => {
  let seed = 42;
  const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const heap = new DelayHeap();
  const expected = new Map<string, number>();
  for (let i = 0; i < 2000; i++) {
    const key = `k${Math.floor(random() * 300)}`;
    const at = Math.floor(random() * 10_000);
    heap.schedule(key, at);
    expected.set(key, Math.min(expected.get(key) ?? Infinity, at));
  }
  let last = -Infinity;
  let count = 0;
  for (let e = heap.popDue(Infinity); e; e = heap.popDue(Infinity)) {
    assert.ok(e.readyAtMs >= last);
    assert.equal(e.readyAtMs, expected.get(e.key));
    last = e.readyAtMs;
    count++;
  }
  assert.equal(count, expected.size);
});
