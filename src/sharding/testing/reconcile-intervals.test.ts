import { test } from 'node:test';
import assert from 'node:assert/strict';
import { overlappingIntervals, type ReconcileInterval } from './reconcile-intervals.js';

const at = (key: string, replica: string, startMs: number, endMs: number): ReconcileInterval => ({
  key,
  replica,
  startMs,
  endMs,
});

test('overlapping reconciles of one key are found, touching or separate ones and other keys are not', () => {
  assert.deepEqual(
    overlappingIntervals([at('a', 'r1', 0, 10), at('a', 'r2', 10, 20), at('b', 'r1', 5, 15), at('a', 'r1', 30, 40)]),
    [],
  );
  assert.equal(overlappingIntervals([at('a', 'r1', 0, 10), at('a', 'r2', 9, 20)]).length, 1);
  // A long reconcile still running overlaps a later one even past a short one in between.
  assert.equal(
    overlappingIntervals([at('a', 'r1', 0, Infinity), at('a', 'r2', 5, 6), at('a', 'r3', 50, 60)]).length,
    2,
  );
});
