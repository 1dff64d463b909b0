import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '../../core/seeded-random.js';
import type { Fault } from './fault.js';
import { drawFaults, shrinkFaults } from './fault-schedule.js';

test('a seed names one schedule: distinct calls in range, ordered, the same every time', () => {
  for (let seed = 1; seed <= 50; seed++) {
    const a = drawFaults(seededRandom(seed), 100, { faultsPerRun: 5 });
    assert.deepEqual(drawFaults(seededRandom(seed), 100, { faultsPerRun: 5 }), a);
    assert.equal(a.length, 5);
    assert.equal(new Set(a.map((f) => f.at)).size, 5, 'distinct calls');
    assert.ok(
      a.every((f, i) => f.at >= 0 && f.at < 100 && (i === 0 || a[i - 1]!.at < f.at)),
      'in range, ordered',
    );
  }
  assert.notDeepEqual(drawFaults(seededRandom(1), 100), drawFaults(seededRandom(2), 100));
});

test('weights: a kind weighted 0 never fires; faults land near the given writes most of the time', () => {
  const onlyCrashes = Array.from({ length: 30 }, (_, s) =>
    drawFaults(seededRandom(s), 200, {
      weights: {
        crash: 1,
        'stale-restart': 0,
        error: 0,
        timeout: 0,
        'stale-cache': 0,
        coalesce: 0,
        'drop-events': 0,
        'watch-expiry': 0,
        'leader-change': 0,
      },
    }),
  ).flat();
  assert.ok(onlyCrashes.length > 0 && onlyCrashes.every((f) => f.kind === 'crash'));
  const writes = [{ at: 40, nextAt: 45 }];
  const placed = Array.from({ length: 200 }, (_, s) =>
    drawFaults(seededRandom(s), 1_000, { faultsPerRun: 1 }, writes),
  ).flat();
  const atWrite = placed.filter((f) =>
    f.kind === 'crash' || f.kind === 'stale-restart' || f.kind === 'leader-change' ? f.at === 45 : f.at === 40,
  );
  // WRITE_BIAS is 0.75; uniform placement would hit these calls 0.1% of the time.
  assert.ok(atWrite.length > 120 && atWrite.length < 180, `${atWrite.length}/200 at the write`);
});

test('shrinking keeps exactly the faults the failure needs, whatever their order', async () => {
  const faults: Fault[] = [
    { kind: 'error', at: 1, status: 500 },
    { kind: 'crash', at: 5, restartAfterMs: 10 },
    { kind: 'watch-expiry', at: 9 },
    { kind: 'timeout', at: 12, committed: true },
    { kind: 'coalesce', at: 20, forMs: 100 },
  ];
  // The "run" fails when the crash and the timeout are both there.
  const needs = (fs: readonly Fault[]): Promise<boolean> =>
    Promise.resolve(fs.some((f) => f.kind === 'crash') && fs.some((f) => f.kind === 'timeout'));
  const { faults: shrunk, runs } = await shrinkFaults(faults, needs);
  assert.deepEqual(
    shrunk.map((f) => f.kind),
    ['crash', 'timeout'],
  );
  assert.ok(runs <= 4 * faults.length + 4);
  const never = await shrinkFaults(faults, () => Promise.resolve(false));
  assert.equal(never.faults.length, faults.length, 'nothing removable: the schedule stays');
});
