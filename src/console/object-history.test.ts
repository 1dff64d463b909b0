import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectHistory, type HistoryReconcile } from './object-history.js';

const reconcile = (i: number, writes: HistoryReconcile['writes'] = []): HistoryReconcile => ({
  reconcileID: `r${i}`,
  trigger: { type: 'unknown' },
  startedAtMs: i,
  durationMs: 1,
  result: 'success',
  writes,
  omittedWrites: 0,
});

describe('ObjectHistory', () => {
  test('keeps the last N reconciles of an object, newest first', () => {
    const h = new ObjectHistory({ reconcilesPerObject: 3 });
    for (let i = 1; i <= 5; i++) h.record('db', 'ns/a', reconcile(i));
    assert.deepEqual(
      h.timeline('db', 'ns/a')!.reconciles.map((r) => r.reconcileID),
      ['r5', 'r4', 'r3'],
    );
    assert.equal(h.timeline('db', 'ns/b'), undefined);
    assert.equal(h.timeline('other', 'ns/a'), undefined, 'keys are per controller');
    assert.equal(h.stats().reconciles, 3);
  });

  test('past maxObjects, the object reconciled least recently is forgotten whole', () => {
    const h = new ObjectHistory({ maxObjects: 2 });
    h.record('db', 'a', reconcile(1));
    h.record('db', 'b', reconcile(2));
    h.record('db', 'a', reconcile(3)); // a is now the most recent
    h.record('db', 'c', reconcile(4));
    assert.equal(h.timeline('db', 'b'), undefined);
    assert.equal(h.timeline('db', 'a')!.reconciles.length, 2);
    assert.deepEqual(h.stats(), { ...h.stats(), objects: 2, reconciles: 3 });
  });

  test('past maxBytes, the oldest objects go until the estimate fits; the bytes add up again after', () => {
    const big = [
      { verb: 'create', apiVersion: 'v1', kind: 'ConfigMap', name: 'x', dryRun: false, diff: 'y'.repeat(10_000) },
    ] as const;
    const h = new ObjectHistory({ maxBytes: 50_000 });
    for (let i = 0; i < 10; i++) h.record('db', `k${i}`, reconcile(i, big));
    const { objects, estimatedBytes } = h.stats();
    assert.ok(estimatedBytes <= 50_000, `${estimatedBytes}`);
    assert.equal(objects, 2, 'two objects of ~20 KB each fit in 50 KB');
    assert.ok(h.timeline('db', 'k9') && h.timeline('db', 'k8') && !h.timeline('db', 'k7'));
  });

  test('rejects bounds that are not positive integers', () => {
    for (const bad of [{ reconcilesPerObject: 0 }, { maxObjects: 1.5 }, { maxBytes: -1 }])
      assert.throws(() => new ObjectHistory(bad), { code: 'ERR_INVALID_OPTION' });
  });
});
