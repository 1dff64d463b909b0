/**
 * The simulation against two controllers writing the same object (test-support/site-operator.ts: each
 * owns one condition of a Site's status), with generated scenarios only. The second writer's
 * planted bugs are caught within a stated number of seeds (as of this writing: replaces-conditions
 * at seed #1 after one leader change, unversioned-conditions at seed #1 with no fault); the correct
 * controllers are clean over their seeds here and over 1,000 in the benchmark.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OracleName } from './simulation-records.js';
import { simulate, simulationSeeds } from './simulate.js';
import { siteSimulation, type SiteBug } from './test-support/site-operator.js';

const FILE = 'src/testing/simulation/site-operator-evaluation.test.ts';
const CLEAN_SEEDS = 10;

const BUGS: readonly { bug: SiteBug; what: string; within: number; oracles: readonly OracleName[] }[] = [
  {
    bug: 'replaces-conditions',
    what: "writes its own condition as the whole list, dropping the other controller's",
    within: 5,
    oracles: ['convergence', 'invariant'],
  },
  {
    bug: 'unversioned-conditions',
    what: 'writes the list from its cached read without a resourceVersion, over a newer condition',
    within: 5,
    oracles: ['lost-update', 'convergence'],
  },
];

for (const { bug, what, within, oracles } of BUGS) {
  test(`${bug}: ${what} — caught within ${within} seeds of generated scenarios`, async (t) => {
    const report = await simulate({
      ...siteSimulation(bug),
      seeds: simulationSeeds(within),
      replayFile: FILE,
      replayTestName: bug,
    });
    const failure = report.failures[0];
    assert.ok(failure, `${bug} was not caught in ${report.seedsRun.length} seeds`);
    t.diagnostic(`${bug}: caught at seed=${failure.seed}`);
    for (const line of report.format().split('\n').slice(0, 8)) t.diagnostic(line);
    assert.ok(
      failure.findings.some((f) => oracles.includes(f.oracle)),
      `expected a ${oracles.join(' or ')} finding\n${report.format()}`,
    );
  });
}

test(`the correct Site controllers pass ${CLEAN_SEEDS} seeds of generated scenarios with no finding`, async (t) => {
  const report = await simulate({
    ...siteSimulation(),
    seeds: simulationSeeds(CLEAN_SEEDS),
    replayFile: FILE,
    replayTestName: 'the correct Site controllers',
  });
  t.diagnostic(`${report.clean}/${report.seedsRun.length} seeds clean`);
  assert.deepEqual(report.failures, [], report.format());
});
