import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kinds } from '../../client/kinds.js';
import { requeueAfter } from '../../core/result.js';
import { recordingLogger } from '../../logging/recording-logger.js';
import { Manager } from '../../manager/manager.js';
import { describeFault } from './fault.js';
import {
  LIVELOCK_RECONCILES,
  SimulationError,
  replayCommand,
  replaySeed,
  runSimulation,
  simulate,
  simulationSeeds,
  type SimulationOptions,
} from './simulate.js';
import type { RunRecord } from './simulation-records.js';
import { widgetSimulation } from './test-support/widget-operator.js';

const FILE = 'src/testing/simulation/simulate.test.ts';

/** The first call the fault-free run made after its first ConfigMap create completed. */
function afterFirstChildCreate(faultFree: RunRecord): number {
  const w = faultFree.writes.find((x) => x.verb === 'create' && x.kind === 'ConfigMap')!;
  return faultFree.calls.find((c) => c.at > w.at && c.atMs >= w.atMs)!.at;
}

test('a replayed seed gives the identical trace: every call and outcome, fault, restart, reconcile and the end state', async () => {
  const options = widgetSimulation();
  // Seed #13 crashes the operator right after a create (see the unchecked-create variant's test).
  const first = await replaySeed(options, 13);
  const again = await replaySeed(options, 13);
  assert.ok(first.record.faults.length > 0);
  assert.ok(first.record.trace.length > 100, 'the trace records the run');
  assert.ok(
    first.record.trace.some((l) => l.includes(' fault ')),
    'a fault fired',
  );
  assert.ok(
    first.record.trace.some((l) => l.includes('#1 starts')),
    'the operator restarted',
  );
  assert.deepEqual(again.record.trace, first.record.trace, replayCommand(13, FILE));
  assert.deepEqual(again.record.calls, first.record.calls);
  assert.deepEqual(again.record.writes, first.record.writes);
  assert.deepEqual(again.record.reconciles, first.record.reconciles);
  assert.deepEqual(again.findings, first.findings);
  const other = await replaySeed(options, 14);
  assert.notDeepEqual(other.record.trace, first.record.trace, 'another seed is another run');
});

test('a crash between two writes: the process is rebuilt from the same set-up against the same store, and a correct operator ends clean', async () => {
  const options = widgetSimulation();
  const faultFree = await runSimulation(options, { seed: 0, faults: [] });
  assert.deepEqual(faultFree.findings, []);
  const at = afterFirstChildCreate(faultFree.record);
  const run = await runSimulation(
    options,
    { seed: 1, faults: [{ kind: 'crash', at, restartAfterMs: 100 }] },
    faultFree.record,
  );
  assert.equal(run.record.calls[at]!.outcome, 'crashed');
  assert.ok(run.record.trace.some((l) => l.endsWith('#0 dies')));
  assert.ok(
    run.record.calls.some((c) => c.incarnation === 1),
    'a new process made calls',
  );
  assert.ok(
    run.record.reconciles.some((s) => s.incarnation === 1 && s.endSeq !== undefined),
    'and reconciled',
  );
  const diedAtMs = run.record.calls[at]!.atMs;
  assert.ok(
    !run.record.reconciles.some((s) => s.incarnation === 0 && s.startedAtMs > diedAtMs),
    'a dead process reconciles nothing',
  );
  assert.deepEqual(run.findings, []);
});

test('a finding names the key, the step and the fault; the same crash wedges the unchecked-create variant', async () => {
  const options = widgetSimulation('unchecked-create');
  const faultFree = await runSimulation(options, { seed: 0, faults: [] });
  const crash = { kind: 'crash' as const, at: afterFirstChildCreate(faultFree.record), restartAfterMs: 100 };
  const run = await runSimulation(options, { seed: 1, faults: [crash] }, faultFree.record);
  const convergence = run.findings.find((f) => f.oracle === 'convergence');
  assert.ok(convergence, JSON.stringify(run.findings, null, 2));
  assert.equal(convergence.key, 'Widget default/w1');
  assert.equal(convergence.fault, describeFault(crash));
  assert.equal(convergence.step, options.scenario.length - 1, 'end-of-run evidence: the last step');
});

test('simulate(): a failing seed is shrunk to the faults it needs and printed with its replay command', async () => {
  const options: SimulationOptions = {
    ...widgetSimulation('unchecked-create'),
    seeds: [11, 12, 13],
    replayFile: FILE,
  };
  const report = await simulate(options);
  assert.deepEqual(report.seedsRun, [11, 12, 13]);
  assert.equal(report.clean, 2);
  const [failure] = report.failures;
  assert.ok(failure);
  assert.equal(failure.seed, 13);
  assert.ok(failure.shrunk.length >= 1 && failure.shrunk.length < failure.faults.length, 'shrunk');
  assert.ok(failure.shrunk.every((f) => failure.faults.includes(f)));
  assert.ok(failure.findings.some((f) => f.oracle === 'convergence'));
  assert.equal(
    failure.replay,
    `SIM_SEED=13 NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx --test ${FILE}`,
  );
  const text = report.format();
  assert.match(text, /seed=13 failed — replay: SIM_SEED=13 /);
  assert.match(text, /faults \(shrunk from 3 to 1\): crash@\d+/);
  assert.match(text, /\[convergence\] Widget default\/w1 \(step 11\) after crash@\d+/);
});

test('replay commands and seeds from the environment', () => {
  assert.equal(
    replayCommand(7, 'a.test.ts', 'finalizer (early) caught'),
    'SIM_SEED=7 NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx --test --test-name-pattern="finalizer \\\\(early\\\\) caught" a.test.ts',
  );
  const saved = { one: process.env.SIM_SEED, many: process.env.SIM_SEEDS };
  try {
    delete process.env.SIM_SEED;
    delete process.env.SIM_SEEDS;
    assert.equal(simulationSeeds(20), 20);
    process.env.SIM_SEEDS = '1,5,10-12';
    assert.deepEqual(simulationSeeds(20), [1, 5, 10, 11, 12]);
    process.env.SIM_SEED = '7';
    assert.deepEqual(simulationSeeds(20), [7]);
    process.env.SIM_SEED = 'x';
    assert.throws(() => simulationSeeds(20), /SIM_SEEDS/);
  } finally {
    if (saved.one === undefined) delete process.env.SIM_SEED;
    else process.env.SIM_SEED = saved.one;
    if (saved.many === undefined) delete process.env.SIM_SEEDS;
    else process.env.SIM_SEEDS = saved.many;
  }
});

test('runs cannot overlap (each seeds Math.random while it lasts), and Math.random is given back', async () => {
  const original = Math.random;
  const options = widgetSimulation();
  const first = runSimulation(options, { seed: 0, faults: [] });
  await assert.rejects(runSimulation(options, { seed: 0, faults: [] }), SimulationError);
  await first;
  assert.equal(Math.random, original);
});

test('a requeue with no delay (reconciles that never let fake time move) is stopped and reported, not hung', async () => {
  const options: SimulationOptions = {
    setup: ({ client, clock, logger, registry }) => {
      const manager = new Manager({ client, clock, logger, registry, metricsPort: 0, healthPort: 0 });
      manager
        .controller('hot')
        .for(kinds.ConfigMap)
        .complete(async (_request, ctx) => {
          await ctx.get(); // a cached read: no API call, no fake time
          return requeueAfter(0);
        });
      return manager;
    },
    scenario: [{ type: 'create', object: { ...kinds.ConfigMap, metadata: { name: 'a', namespace: 'default' } } }],
    primaryKinds: [kinds.ConfigMap],
    converged: () => true,
    seeds: 1,
  };
  const report = await simulate(options);
  const finding = report.failures[0]?.findings[0];
  assert.equal(finding?.oracle, 'quiescence');
  assert.equal(finding.key, 'hot default/a');
  assert.match(finding.message, /reconciled 101 times at one instant of fake time .*a requeue with no delay/);
  // With the hot-key bound lifted, the livelock guard (reconciles at one instant) stops it still.
  const unbounded = await simulate({ ...options, budget: { hotKeyReconcilesPerSecond: Number.POSITIVE_INFINITY } });
  assert.match(
    unbounded.failures[0]?.findings[0]?.message ?? '',
    new RegExp(`more than ${LIVELOCK_RECONCILES} reconciles started at one instant`),
  );
});

test('the logger option gets every process its lines, bound to the incarnation', async () => {
  const options = widgetSimulation();
  const faultFree = await runSimulation(options, { seed: 0, faults: [] });
  const logger = recordingLogger();
  const at = afterFirstChildCreate(faultFree.record);
  await runSimulation({ ...options, logger }, { seed: 1, faults: [{ kind: 'crash', at, restartAfterMs: 100 }] });
  const started = logger.entries.filter((e) => e.msg === 'reconcile started');
  assert.ok(started.some((e) => e.bindings.incarnation === 0 && e.bindings.controller === 'widget'));
  assert.ok(started.some((e) => e.bindings.incarnation === 1));
});
