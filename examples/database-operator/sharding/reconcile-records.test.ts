import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findOverlaps, firstPickUp, lastReconcilerByKey, reconcileIntervals, startsByReplica, type ReconcileRecord } from './reconcile-records.js';

const rec = (t: number, replica: string, phase: ReconcileRecord['phase'], key: string): ReconcileRecord => ({ t, replica, phase, key });

test('reconciles of one key by two replicas that intersect in time are an overlap; back-to-back ones are not', () => {
  const records = [
    rec(0, 'a', 'start', 'ns/x'),
    rec(10, 'a', 'end', 'ns/x'),
    rec(10, 'b', 'start', 'ns/x'), // starts exactly when a ended: sequential
    rec(20, 'b', 'end', 'ns/x'),
    rec(15, 'a', 'start', 'ns/y'),
    rec(18, 'b', 'start', 'ns/y'), // a still runs ns/y
    rec(25, 'a', 'end', 'ns/y'),
    rec(30, 'b', 'end', 'ns/y'),
  ].sort((p, q) => p.t - q.t);
  const overlaps = findOverlaps(reconcileIntervals(records));
  assert.equal(overlaps.length, 1);
  assert.equal(overlaps[0]!.key, 'ns/y');
  assert.deepEqual([overlaps[0]!.first.replica, overlaps[0]!.second.replica], ['a', 'b']);
});

test('a reconcile left open by a killed replica ends at the kill, not at the end of the log', () => {
  const records = [rec(0, 'a', 'start', 'k'), rec(50, 'b', 'start', 'k'), rec(60, 'b', 'end', 'k'), rec(100, 'c', 'start', 'other')];
  assert.equal(findOverlaps(reconcileIntervals(records, { killedAt: new Map([['a', [40]]]) })).length, 0, 'killed at 40, before b began');
  assert.equal(findOverlaps(reconcileIntervals(records, { killedAt: new Map([['a', [55]]]) })).length, 1, 'killed at 55, while b ran');
  assert.equal(findOverlaps(reconcileIntervals(records)).length, 1, 'never killed: still running when b began');
});

test('every running interval is compared, not only the latest one', () => {
  const records = [rec(0, 'a', 'start', 'k'), rec(1, 'b', 'start', 'k'), rec(2, 'b', 'end', 'k'), rec(3, 'c', 'start', 'k'), rec(4, 'c', 'end', 'k'), rec(9, 'a', 'end', 'k')];
  assert.equal(findOverlaps(reconcileIntervals(records)).length, 2, 'a overlaps both b and c');
});

test('pick-up after a kill: the first start of each key by another replica, none when nobody took it', () => {
  const records = [rec(0, 'a', 'start', 'k1'), rec(1, 'a', 'end', 'k1'), rec(5, 'a', 'start', 'k2'), rec(20, 'b', 'start', 'k1'), rec(25, 'c', 'start', 'k1')];
  const picked = firstPickUp(records, ['k1', 'k2'], 10, 'a');
  assert.equal(picked.get('k1')?.replica, 'b');
  assert.equal(picked.get('k1')?.t, 20);
  assert.equal(picked.get('k2'), undefined);
  assert.deepEqual([...lastReconcilerByKey(records, 10)], [['k1', 'a'], ['k2', 'a']]);
  assert.deepEqual([...startsByReplica(records)], [['a', 2], ['b', 1], ['c', 1]]);
});

test('a replica restarted under the same name after a kill: the dead process\'s open start is not paired with the new process\'s end', () => {
  const records = [
    rec(0, 'a', 'start', 'k'), // a is killed at 10 with this reconcile open
    rec(20, 'b', 'start', 'k'),
    rec(30, 'b', 'end', 'k'),
    rec(40, 'a', 'start', 'k'), // the restarted a
    rec(50, 'a', 'end', 'k'),
  ];
  const intervals = reconcileIntervals(records, { killedAt: new Map([['a', [10]]]) });
  assert.deepEqual(intervals.map((i) => [i.replica, i.start, i.end, i.open]), [['a', 0, 10, true], ['b', 20, 30, false], ['a', 40, 50, false]]);
  assert.equal(findOverlaps(intervals).length, 0);
  assert.equal(findOverlaps(reconcileIntervals(records)).length, 2, 'without the kill time the dead start pairs with the new end and spans b');
});
