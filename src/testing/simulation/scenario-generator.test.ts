/**
 * Scenarios generated from a kind's schema (scenario-generator.ts) and the differential oracle.
 * With no hand-written scenario, each seed drawing its own: the correct CronTask operator stays
 * clean and its duplicate-run bug is caught (seed #15 when written); an operator that only sets its
 * child on create is caught without any fault by the differential oracle.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { kinds } from '../../client/kinds.js';
import { isAlreadyExists } from '../../client/api-error.js';
import { patchStatus } from '../../helpers/status.js';
import { Manager } from '../../manager/manager.js';
import { validate } from '../fake-client/schema-validation.js';
import { generateScenario } from './scenario-generator.js';
import { simulate, simulationSeeds } from './simulate.js';
import { CRON_TASK_KIND, cronSimulation } from './test-support/cron-operator.js';
import { WIDGET, WIDGET_KINDS } from './test-support/widget-operator.js';

const FILE = 'src/testing/simulation/scenario-generator.test.ts';
const GENERATED_CLEAN_SEEDS = 10;
const DUPLICATE_WITHIN_SEEDS = 20;

test('a generated scenario is drawn by its seed and stays inside the schema: enums, minimum/maximum, required', () => {
  const spec = CRON_TASK_KIND.schema!.properties!.spec!;
  const kindsOfStep = new Set<string>();
  for (let seed = 1; seed <= 50; seed++) {
    const scenario = generateScenario({ kind: CRON_TASK_KIND, seed });
    assert.deepEqual(generateScenario({ kind: CRON_TASK_KIND, seed }), scenario, 'the seed names one scenario');
    for (const step of scenario) {
      kindsOfStep.add(step.type === 'patch' && step.afterMs === 5 ? 'other-writer' : step.type);
      const body =
        step.type === 'create'
          ? (step.object as { spec: Record<string, unknown> }).spec
          : step.type === 'patch'
            ? (step.patch as { spec?: Record<string, unknown> }).spec
            : undefined;
      if (!body) continue;
      const full =
        step.type === 'create' ? body : Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null));
      const causes = validate(full, step.type === 'create' ? spec : { ...spec, required: [] });
      assert.deepEqual(causes, [], `seed ${seed}: ${JSON.stringify(step)}`);
    }
  }
  assert.deepEqual([...kindsOfStep].sort(), ['create', 'delete', 'other-writer', 'patch']);
  assert.notDeepEqual(
    generateScenario({ kind: CRON_TASK_KIND, seed: 1 }),
    generateScenario({ kind: CRON_TASK_KIND, seed: 2 }),
  );
});

const cronScenario = (seed: number) => generateScenario({ kind: CRON_TASK_KIND, seed, stepGapMs: 3_000 });

test(`generated scenarios: the correct CronTask operator is clean over ${GENERATED_CLEAN_SEEDS} seeds, each with its own scenario`, async () => {
  const report = await simulate({
    ...cronSimulation(),
    scenario: cronScenario,
    seeds: simulationSeeds(GENERATED_CLEAN_SEEDS),
    replayFile: FILE,
  });
  assert.deepEqual(report.failures, [], report.format());
});

test(`generated scenarios catch the CronTask duplicate-run bug within ${DUPLICATE_WITHIN_SEEDS} seeds, with no hand-tuned scenario`, async (t) => {
  const report = await simulate({
    ...cronSimulation('duplicate-run'),
    scenario: cronScenario,
    seeds: simulationSeeds(DUPLICATE_WITHIN_SEEDS),
    replayFile: FILE,
    replayTestName: 'duplicate-run bug',
  });
  const failure = report.failures[0];
  assert.ok(failure, `not caught in ${report.seedsRun.length} seeds`);
  t.diagnostic(`caught at seed=${failure.seed}`);
  assert.match(failure.findings.map((f) => f.message).join('\n'), /ran 2 times .*one run per slot/);
});

test('the differential oracle: an operator that sets its child only on create ends elsewhere than the same spec created directly', async () => {
  const report = await simulate({
    setup: ({ client, clock, logger, registry }) => {
      const manager = new Manager({ client, clock, logger, registry, metricsPort: 0, healthPort: 0 });
      manager
        .controller('widget')
        .for(WIDGET)
        .owns(kinds.ConfigMap)
        .complete(async (_request, ctx) => {
          const w = await ctx.get();
          if (!w) return;
          const child: ConfigMap = {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `${w.metadata.name}-config`, namespace: w.metadata.namespace },
            data: { value: w.spec.value },
          };
          // The bug: created once, never brought up to date.
          await manager.client.create(child).catch((err: unknown) => {
            if (!isAlreadyExists(err)) throw err;
          });
          await patchStatus(manager.client, w, {});
        });
      return manager;
    },
    scenario: [
      { type: 'create', object: { ...WIDGET, metadata: { name: 'w1', namespace: 'default' }, spec: { value: 'a' } } },
      { type: 'patch', target: { ...WIDGET, namespace: 'default', name: 'w1' }, patch: { spec: { value: 'b' } } },
    ],
    primaryKinds: [WIDGET],
    ownedKinds: [kinds.ConfigMap],
    cluster: { kinds: WIDGET_KINDS },
    differential: true,
    seeds: 1,
  });
  const finding = report.failures[0]?.findings.find((f) => f.oracle === 'differential');
  assert.ok(finding, report.format());
  assert.equal(report.failures[0]!.faults.length, 0, 'no fault needed');
  assert.equal(finding.key, 'ConfigMap default/w1-config');
  assert.match(finding.message, /data\.value is "a" .* but "b" .*the operator's result depends on the path/);
});
