import assert from 'node:assert/strict';
import { test } from 'node:test';
import { overlappingPairs } from './overlaps.js';

const at = (who: string, start: number, end: number) => ({ who, start, end });

test('intervals that intersect overlap; back-to-back and separate ones do not', () => {
  assert.deepEqual(overlappingPairs([at('a', 0, 10), at('b', 10, 20), at('c', 30, 40)]), []);
  assert.deepEqual(
    overlappingPairs([at('b', 9, 20), at('a', 0, 10)]).map(([x, y]) => [x.who, y.who]),
    [['a', 'b']],
  );
});

test('every pair is reported: a long interval overlaps each later one it spans, past short ones in between', () => {
  const pairs = overlappingPairs([at('a', 0, Infinity), at('b', 5, 6), at('c', 50, 60)]);
  assert.deepEqual(
    pairs.map(([x, y]) => [x.who, y.who]),
    [
      ['a', 'b'],
      ['a', 'c'],
    ],
  );
  // Compared with every interval still running, not only the widest one: c overlaps a and b.
  assert.equal(overlappingPairs([at('a', 0, 100), at('b', 10, 50), at('c', 20, 30)]).length, 3);
});

test('groups are checked apart: intervals of different groups never overlap each other', () => {
  const intervals = [
    { key: 'x', start: 0, end: 10 },
    { key: 'y', start: 5, end: 15 },
    { key: 'x', start: 8, end: 9 },
  ];
  assert.equal(overlappingPairs(intervals).length, 3);
  assert.deepEqual(
    overlappingPairs(intervals, (i) => i.key).map(([p, q]) => [p.key, p.start, q.start]),
    [['x', 0, 8]],
  );
});
