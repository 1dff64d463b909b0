/**
 * The simulation against an operator whose work is in an external service (test-support/bucket-operator.ts,
 * over the library's simulated service: slow, failing, lying), with generated scenarios only — no
 * hand-written scenario. Each planted bug is caught within a stated number of seeds (as of this
 * writing: tag-lookup at seed #1, swallows-delete-error at seed #4); the correct operator is clean
 * over its seeds here and over 1,000 in the benchmark (`npm run bench:simulation`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate, simulationSeeds } from './simulate.js';
import { bucketSimulation, type BucketBug } from './test-support/bucket-operator.js';

const FILE = 'src/testing/simulation/bucket-operator-evaluation.test.ts';
const CLEAN_SEEDS = 10;

const BUGS: readonly { bug: BucketBug; what: string; within: number; finding: RegExp }[] = [
  {
    bug: 'tag-lookup',
    what: 'finds its bucket by tag and creates one when a lagging replica shows none (no idempotency key)',
    within: 5,
    finding: /got \d+ buckets .*one per Bucket/,
  },
  {
    bug: 'swallows-delete-error',
    what: "ignores the delete's error behind the finalizer (the service failed the call)",
    within: 20,
    finding: /outlived its Bucket .*leaked in the storage service/,
  },
];

for (const { bug, what, within, finding } of BUGS) {
  test(`${bug}: ${what} — caught within ${within} seeds of generated scenarios`, async (t) => {
    const report = await simulate({
      ...bucketSimulation(bug),
      seeds: simulationSeeds(within),
      replayFile: FILE,
      replayTestName: bug,
    });
    const failure = report.failures[0];
    assert.ok(failure, `${bug} was not caught in ${report.seedsRun.length} seeds`);
    t.diagnostic(`${bug}: caught at seed=${failure.seed}`);
    for (const line of report.format().split('\n').slice(0, 8)) t.diagnostic(line);
    assert.ok(
      failure.findings.some((f) => f.oracle === 'invariant' && finding.test(f.message)),
      report.format(),
    );
  });
}

test(`the correct Bucket operator passes ${CLEAN_SEEDS} seeds of generated scenarios with no finding`, async (t) => {
  const report = await simulate({
    ...bucketSimulation(),
    seeds: simulationSeeds(CLEAN_SEEDS),
    replayFile: FILE,
    replayTestName: 'the correct Bucket operator',
  });
  t.diagnostic(`${report.clean}/${report.seedsRun.length} seeds clean`);
  assert.deepEqual(report.failures, [], report.format());
});
