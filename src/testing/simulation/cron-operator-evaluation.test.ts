/**
 * The simulation against a time-driven operator (test-support/cron-operator.ts), written in another style
 * than the widget operator, and two bugs of the kind a CronJob user's copy has: a requeue delay in
 * the wrong unit (a hot loop at steady state: every seed must end with a quiescence finding within
 * the run's budget, never a hang) and a run created from a stale cached list under a generated name
 * (a second run for one slot: found by the crash-point sweep at a named point, and by seeds).
 * The correct operator is clean over its seeds and the sweep (1,000 seeds: bench/simulation.bench.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sweepCrashPoints } from './crash-sweep.js';
import { DEFAULT_HOT_KEY_RECONCILES_PER_SECOND } from './run-budget.js';
import { replaySeed, simulate, simulationSeeds } from './simulate.js';
import { cronSimulation } from './test-support/cron-operator.js';

const FILE = 'src/testing/simulation/cron-operator-evaluation.test.ts';
const HOT_LOOP_SEEDS = [1, 2, 3, 4, 5];
const CLEAN_SEEDS = 20;
/** The duplicate-run bug needs a stale view right after a run's create: seed #15 draws one (when written). */
const DUPLICATE_WITHIN_SEEDS = 60;

test('a requeue delay in seconds passed as milliseconds: every seed ends with a quiescence finding naming the key and its rate, within the budget', async () => {
  const options = cronSimulation('requeue-in-seconds');
  for (const seed of HOT_LOOP_SEEDS) {
    const started = performance.now();
    const run = await replaySeed(options, seed);
    const [finding, ...others] = run.findings;
    assert.equal(finding?.oracle, 'quiescence', `seed ${seed}: ${JSON.stringify(run.findings)}`);
    assert.deepEqual(others, [], 'a run cut short is judged by its budget alone');
    assert.equal(finding.key, 'crontask default/nightly');
    assert.match(
      finding.message,
      new RegExp(
        `reconciled ${DEFAULT_HOT_KEY_RECONCILES_PER_SECOND + 1} times within one second of fake time .* at ${DEFAULT_HOT_KEY_RECONCILES_PER_SECOND + 1} reconciles/s`,
      ),
    );
    assert.ok(run.record.cutShort, 'the run was stopped');
    assert.ok(run.record.trace.some((l) => l.includes('budget exhausted (hot-key)')));
    assert.ok(performance.now() - started < 30_000, 'bounded in real time too');
  }
  const report = await simulate({ ...options, seeds: 3, replayFile: FILE, replayTestName: 'requeue delay' });
  assert.equal(report.failures[0]?.seed, 1, 'the fault-free run fails: reported under the first seed');
  assert.match(report.format(), /the two lines above \d+ more time\(s\)/, 'the trace folds the loop');
});

test(`the correct CronTask operator passes ${CLEAN_SEEDS} seeds and every crash point with no finding`, async (t) => {
  const report = await simulate({
    ...cronSimulation(),
    seeds: simulationSeeds(CLEAN_SEEDS),
    replayFile: FILE,
    replayTestName: 'correct CronTask',
  });
  t.diagnostic(`${report.clean}/${report.seedsRun.length} seeds clean`);
  assert.deepEqual(report.failures, [], report.format());
  const sweep = await sweepCrashPoints({ ...cronSimulation(), replayFile: FILE, replayTestName: 'correct CronTask' });
  t.diagnostic(sweep.format().split('\n')[0]!);
  assert.deepEqual(sweep.failures, [], sweep.format());
});

test(
  'a run created from a stale cached list under a generated name: the sweep finds it at the first stale restart after a create; seeds within ' +
    DUPLICATE_WITHIN_SEEDS,
  async (t) => {
    const options = { ...cronSimulation('duplicate-run'), replayFile: FILE, replayTestName: 'stale cached list' };
    const sweep = await sweepCrashPoints(options, { maxFailures: 1 });
    const [failure] = sweep.failures;
    assert.ok(failure?.point, sweep.format());
    t.diagnostic(sweep.format().split('\n').slice(0, 3).join(' / '));
    assert.equal(failure.point.fault.kind, 'stale-restart');
    assert.equal(failure.point.site, 'create ConfigMap');
    assert.match(failure.findings[0]?.message ?? '', /slot \d+ ran 2 times .*one run per slot/);
    const report = await simulate({ ...options, seeds: simulationSeeds(DUPLICATE_WITHIN_SEEDS) });
    assert.ok(report.failures[0], `not caught in ${DUPLICATE_WITHIN_SEEDS} seeds`);
    t.diagnostic(`caught at seed=${report.failures[0].seed}`);
    assert.ok(report.failures[0].findings.some((f) => f.oracle === 'invariant'));
  },
);
