import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  crossReplicaOverlaps,
  findOverlaps,
  firstPickUp,
  lastReconcilerByKey,
  readRecords,
  reconcileIntervals,
  startsByReplica,
  type ReplicaReconcile,
  type ReplicaRecord,
} from './replica-records.js';

/** A reconcile of `key` by `replica` from `start` to `end`, as recorded-main.ts writes it. */
const rec = (start: number, end: number, replica: string, key: string): ReplicaReconcile => ({
  type: 'reconcile',
  replica,
  key,
  reconcileID: `${replica}-${start}`,
  startedAtMs: start,
  durationMs: end - start,
  outcome: 'success',
});

test('reconciles of one key by two replicas that intersect in time are an overlap; back-to-back ones are not', () => {
  const records = [
    rec(0, 10, 'a', 'ns/x'),
    rec(10, 20, 'b', 'ns/x'), // starts exactly when a ended: sequential
    rec(15, 25, 'a', 'ns/y'),
    rec(18, 30, 'b', 'ns/y'), // a still runs ns/y
  ];
  const overlaps = findOverlaps(reconcileIntervals(records));
  assert.equal(overlaps.length, 1);
  assert.equal(overlaps[0]!.key, 'ns/y');
  assert.deepEqual([overlaps[0]!.first.replica, overlaps[0]!.second.replica], ['a', 'b']);
  assert.equal(
    crossReplicaOverlaps(reconcileIntervals(records)).length,
    2,
    'across keys, a on ns/y also ran while b ran ns/x',
  );
});

test('the next reconcile of a key starting in the millisecond the last one ended is no overlap', () => {
  // Started at 100.0 ms of wall clock (recorded as 100), ran 5.1 ms, ended at 105.1; the next began at 105.2 (recorded as 105).
  assert.deepEqual(
    findOverlaps(reconcileIntervals([{ ...rec(100, 0, 'a', 'k'), durationMs: 5.1 }, rec(105, 106, 'a', 'k')])),
    [],
  );
  const later = [{ ...rec(100, 0, 'a', 'k'), durationMs: 6.6 }, rec(105, 106, 'b', 'k')];
  assert.equal(findOverlaps(reconcileIntervals(later)).length, 1, 'still running a whole ms into the next: an overlap');
});

test('every running interval is compared, not only the latest one', () => {
  const records = [rec(0, 9, 'a', 'k'), rec(1, 2, 'b', 'k'), rec(3, 4, 'c', 'k')];
  assert.equal(findOverlaps(reconcileIntervals(records)).length, 2, 'a overlaps both b and c');
});

test('pick-up after a kill: the first start of each key by another replica, none when nobody took it', () => {
  const records = [rec(0, 1, 'a', 'k1'), rec(5, 6, 'a', 'k2'), rec(20, 21, 'b', 'k1'), rec(25, 26, 'c', 'k1')];
  const picked = firstPickUp(records, ['k1', 'k2'], 10, 'a');
  assert.equal(picked.get('k1')?.replica, 'b');
  assert.equal(picked.get('k1')?.startedAtMs, 20);
  assert.equal(picked.get('k2'), undefined);
  assert.deepEqual(
    [...lastReconcilerByKey(records, 10)],
    [
      ['k1', 'a'],
      ['k2', 'a'],
    ],
  );
  assert.deepEqual(
    [...startsByReplica(records)],
    [
      ['a', 2],
      ['b', 1],
      ['c', 1],
    ],
  );
});

test('the records of every replica file are merged in time order; a line torn by kill -9 and a missing file are skipped', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'replica-records-'));
  try {
    const line = (r: ReplicaRecord): string => `${JSON.stringify(r)}\n`;
    await writeFile(
      join(dir, 'a.jsonl'),
      `${line(rec(30, 40, 'a', 'k'))}${line(rec(0, 5, 'a', 'k'))}{"type":"reconcile","repl`,
    );
    await writeFile(
      join(dir, 'b.jsonl'),
      line({ type: 'status-write', t: 10, replica: 'b', key: 'k', read: '1', written: '2' }),
    );
    const records = await readRecords([join(dir, 'a.jsonl'), join(dir, 'b.jsonl'), join(dir, 'never-started.jsonl')]);
    assert.deepEqual(
      records.map((r) => `${r.replica}:${r.type}`),
      ['a:reconcile', 'b:status-write', 'a:reconcile'],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
