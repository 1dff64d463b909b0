/**
 * The crash-point sweep (crash-sweep.ts): one run per write of the fault-free run, crashing right
 * after it (and restarting against the cache as it was before it). The correct widget operator is
 * clean at every point; planted bugs of the intermediate- and stale-state classes are found at a
 * named point, with no seed to be lucky with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { enumerateCrashPoints, sweepCrashPoints } from './crash-sweep.js';
import { runSimulation } from './simulate.js';
import { widgetSimulation } from './test-support/widget-operator.js';

const FILE = 'src/testing/simulation/crash-sweep.test.ts';

test('crash points follow the writes: the first call made after each write completed, a stale restart listing from before it', async () => {
  const faultFree = await runSimulation(widgetSimulation(), { seed: 0, faults: [] });
  const points = enumerateCrashPoints(faultFree.record);
  const writes = faultFree.record.writes.filter((w) => w.kind !== 'Lease' && w.kind !== 'Event');
  assert.equal(points.length, 2 * writes.length, 'a crash and a stale restart after each write');
  for (const p of points) {
    assert.equal(p.fault.at, p.write.nextCallAt);
    assert.ok(faultFree.record.calls[p.fault.at]!.atMs >= p.write.atMs);
    if (p.fault.kind === 'stale-restart') {
      const before = Number(faultFree.record.calls[p.write.at]!.storeRevision);
      assert.equal(Number(faultFree.record.calls[p.fault.at]!.storeRevision) - p.fault.lagRevisions, before);
    }
  }
  assert.deepEqual(
    points.map((p) => p.index),
    points.map((_, i) => i + 1),
  );
});

test('the correct widget operator is clean at every crash point; the report gives the size and the coverage', async () => {
  const report = await sweepCrashPoints({ ...widgetSimulation(), replayFile: FILE }, { kinds: ['crash'] });
  assert.equal(report.failures.length, 0, report.format());
  assert.equal(report.explored, report.crashPoints);
  assert.equal(report.crashPoints, report.writes, 'one crash after each write');
  assert.equal(report.clean, report.explored);
  assert.deepEqual(report.coverage.unhit, []);
  assert.ok(report.coverage.sites.get('create Record')?.get('crash'));
  assert.match(
    report.format(),
    /^crash-point sweep: (\d+) of \1 crash points explored after \1 writes \(6 write sites\); \1 clean, 0 failing/,
  );
});

for (const { bug, oracle, site } of [
  { bug: 'unchecked-create', oracle: 'convergence', site: 'patch Widget' },
  { bug: 'status-without-version', oracle: 'lost-update', site: 'patch Widget/status' },
] as const) {
  test(`the sweep finds the ${bug} bug at a crash point, with the write it followed and a replay command`, async () => {
    const report = await sweepCrashPoints({ ...widgetSimulation(bug), replayFile: FILE }, { maxFailures: 1 });
    const [failure] = report.failures;
    assert.ok(failure?.point, report.format());
    assert.equal(failure.point.site, site);
    assert.ok(
      failure.findings.some((f) => f.oracle === oracle),
      report.format(),
    );
    assert.match(failure.replay, new RegExp(`^SIM_CRASH_POINTS=${failure.point.index} `));
    assert.match(report.format(), new RegExp(`crash point ${failure.point.index} failed — stale-restart@`));
  });
}

test('SIM_CRASH_POINTS runs only the points it names', async () => {
  const saved = process.env.SIM_CRASH_POINTS;
  process.env.SIM_CRASH_POINTS = '2-3';
  try {
    const report = await sweepCrashPoints(widgetSimulation());
    assert.equal(report.explored, 2);
    assert.ok(report.crashPoints > 2);
  } finally {
    if (saved === undefined) delete process.env.SIM_CRASH_POINTS;
    else process.env.SIM_CRASH_POINTS = saved;
  }
});
