import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReconcileWindow } from './reconcile-window.js';

const T0 = Date.UTC(2026, 0, 1);

describe('ReconcileWindow', () => {
  test('percentiles read high by at most one 19 % bucket', () => {
    const w = new ReconcileWindow(T0);
    // 1..100 ms, one each: p50 = 50 ms, p99 = 99 ms.
    for (let ms = 1; ms <= 100; ms++) w.record(T0 + 1_000, ms, false);
    const s = w.summary(T0 + 2_000);
    assert.equal(s.count, 100);
    assert.ok(s.p50Ms! >= 50 && s.p50Ms! <= 50 * 1.19, `p50 ${s.p50Ms}`);
    assert.ok(s.p99Ms! >= 99 && s.p99Ms! <= 99 * 1.19, `p99 ${s.p99Ms}`);
  });

  test('the rate divides by the time covered, not the full span, for a young window', () => {
    const w = new ReconcileWindow(T0);
    for (let i = 0; i < 50; i++) w.record(T0 + 100 * i, 1, i % 5 === 0);
    const s = w.summary(T0 + 5_000);
    assert.equal(s.count, 50);
    assert.equal(s.errors, 10);
    assert.equal(s.ratePerSec, 10);
  });

  test('old slots leave the summary and the series as time moves on; memory does not grow', () => {
    const w = new ReconcileWindow(T0, { bucketMs: 1_000, windowMs: 10_000, summaryMs: 5_000 });
    w.record(T0 + 500, 5, true);
    assert.equal(w.summary(T0 + 900).count, 1);
    assert.equal(w.summary(T0 + 6_000).count, 0, 'out of the 5 s summary');
    assert.equal(
      w.series(T0 + 6_000).reduce((n, p) => n + p.count, 0),
      1,
      'still in the 10 s series',
    );
    assert.equal(
      w.series(T0 + 11_000).reduce((n, p) => n + p.count, 0),
      0,
      'out of the series',
    );
    // A slot reused ten seconds later starts from zero.
    w.record(T0 + 10_500, 7, false);
    const s = w.summary(T0 + 10_900);
    assert.deepEqual([s.count, s.errors], [1, 0]);
    assert.equal(w.series(T0 + 10_900).length, 10);
  });

  test('series points are slot starts, oldest first, with per-slot percentiles', () => {
    const w = new ReconcileWindow(T0, { bucketMs: 1_000, windowMs: 3_000, summaryMs: 1_000 });
    w.record(T0 + 2_100, 40, false);
    const series = w.series(T0 + 2_500);
    assert.deepEqual(
      series.map((p) => p.atMs - T0),
      [0, 1_000, 2_000],
    );
    assert.deepEqual(
      series.map((p) => p.count),
      [0, 0, 1],
    );
    assert.equal(series[0]!.p99Ms, undefined);
    assert.ok(series[2]!.p99Ms! >= 40 && series[2]!.p99Ms! < 48);
  });
});
