/**
 * The reference operator under simulate() (issue 28): the operator unchanged (built by the rig), against
 * the fake client on the fake clock, under seeded fault schedules, through the 20-step scenario of
 * testing/database-simulation.ts, with the simulated backup service (testing/simulated-backup-service.ts).
 * `SIM_SEED=<n>` replays one seed; `SIM_SEEDS=1-1000` runs more (bench/simulation.bench.ts: 1,000
 * clean when written). The crash-point sweep crashes it after every write of the scenario (and
 * restarts it against a cache from before that write): 122 crash points (136 before the Secret,
 * ConfigMap and Service were written in parallel), 0 findings when written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replaySeed, simulate, simulationSeeds, sweepCrashPoints } from 'operator-runtime/testing/simulation';
import { databaseSimulation } from '../testing/database-simulation.js';
import { BACKUP_RECORD, type BackupRecord } from '../testing/simulated-backup-service.js';
import type { BackupService } from './backup-client.js';

const FILE = 'examples/database-operator/src/database-simulation.test.ts';
const CLEAN_SEEDS = 30;

test(`the reference Database operator passes ${CLEAN_SEEDS} seeds with no finding`, async (t) => {
  const report = await simulate({ ...databaseSimulation(), seeds: simulationSeeds(CLEAN_SEEDS), replayFile: FILE });
  t.diagnostic(
    `${report.clean}/${report.seedsRun.length} seeds clean; ${report.faultFreeCalls} calls in the fault-free run`,
  );
  for (const line of report.format().split('\n')) t.diagnostic(line);
  assert.deepEqual(report.failures, [], report.format());
});

test('the crash-point sweep: the reference operator crashed after every write it makes, and restarted stale, ends clean', async (t) => {
  const report = await sweepCrashPoints({
    ...databaseSimulation(),
    replayFile: FILE,
    replayTestName: 'crash-point sweep',
  });
  for (const line of report.format().split('\n')) t.diagnostic(line);
  assert.deepEqual(report.failures, [], report.format());
  assert.equal(report.explored, report.crashPoints);
  // Two per write, but writes in flight together (a Database's Secret, ConfigMap and Service, sent in
  // parallel) share the call after them, so their crash points are one.
  assert.ok(report.crashPoints >= 1.5 * report.writes && report.writes > 50, `${report.crashPoints} crash points`);
  assert.deepEqual(report.coverage.unhit, [], 'every write site was crashed after');
});

test('a replayed seed of the reference operator gives the identical trace', async () => {
  const options = databaseSimulation();
  const first = await replaySeed(options, 880);
  const again = await replaySeed(options, 880);
  assert.ok(first.record.trace.some((l) => l.includes(' fault ')));
  assert.deepEqual(again.record.trace, first.record.trace);
  assert.deepEqual(again.findings, first.findings);
});

test('Databases deleted with backup on are gone only after their backup completed, and the invariant says so when not', async () => {
  const options = databaseSimulation();
  const clean = await replaySeed(options, 1);
  const records = clean.record.finalObjects
    .filter((o): o is BackupRecord => o.kind === BACKUP_RECORD.kind)
    .map((o) => [o.metadata?.name, o.data?.state]);
  assert.deepEqual(records.sort(), [
    ['analytics', 'completed'],
    ['search', 'completed'],
  ]);
  assert.deepEqual(clean.findings, []);

  // A backup service that says "completed" without keeping anything: the finalizer goes, no record stays.
  const claimsOnly: BackupService = { backup: async () => ({ id: 'b', state: 'completed' }), close: async () => {} };
  const lying = await replaySeed(
    { ...options, setup: (setup) => databaseSimulation({ backups: () => claimsOnly }).setup(setup) },
    1,
  );
  assert.deepEqual(
    lying.findings.filter((f) => f.oracle === 'invariant').map((f) => f.message),
    [
      'Database default/analytics held data and is gone without a completed backup (record: none)',
      'Database default/search held data and is gone without a completed backup (record: none)',
    ],
  );
});
