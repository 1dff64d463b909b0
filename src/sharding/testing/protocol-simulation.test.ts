/**
 * The sharding protocol simulation (protocol-simulation.ts) over a fixed set of seeds, in the default
 * run. A failure names its seed and the command that replays it. More seeds:
 *
 *   SIM_SEEDS=1-200 NODE_OPTIONS=--conditions=operator-runtime-source \
 *     node --import tsx --test src/sharding/testing/protocol-simulation.test.ts
 *
 * (`SIM_SEEDS` takes a list and ranges: `1,5,10-20`; `SIM_SEED=7` runs one.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replayCommand, simulationSeeds } from '../../testing/simulation/simulate.js';
import { overlappingIntervals } from './reconcile-intervals.js';
import { SIMULATION_KEYS, simulateShardingProtocol, type SimulationResult } from './protocol-simulation.js';

const FILE = 'src/sharding/testing/protocol-simulation.test.ts';
/**
 * Between them: two sharders at once, handing keys back and forth while their views of the ring
 * differ (4: 448 sharder writes), and partitions that fence members (1 and 18: three each). About
 * 1.5 s of CPU each (3–6 s on a 2-core machine at load 10).
 */
const DEFAULT_SEEDS = [1, 4, 18];

const replay = (seed: number): string => `replay: ${replayCommand(seed, FILE)}`;

const SEEDS = simulationSeeds(DEFAULT_SEEDS);
/** The run of the first SIM_SEEDS entry, kept for the replay test. */
let firstRun: { seed: number; result: SimulationResult } | undefined;

test('partitions, joins, clean stops and a second sharder: no key is ever reconciled by two members at once', async (t) => {
  for (const seed of SEEDS) {
    await t.test(`seed ${seed}`, async (st) => {
      const result = await simulateShardingProtocol(seed);
      firstRun ??= { seed, result };
      const { intervals, partitions, joins, reconciledAtEnd, stopped } = result;
      st.diagnostic(
        `seed ${seed}: ${intervals.length} reconciles, ${partitions} partitions, ${joins} members joined, ${reconciledAtEnd}/${SIMULATION_KEYS} keys reconciled after the final change, ${result.trace.length} trace events`,
      );
      const where = `seed ${seed} (${replay(seed)})`;
      assert.ok(stopped, `${where}: every member and sharder stopped`);
      assert.ok(intervals.length > 100, `${where}: the simulation did work`);
      assert.deepEqual(overlappingIntervals(intervals), [], where);
      assert.equal(reconciledAtEnd, SIMULATION_KEYS, `${where}: every key is served once the ring settles`);
    });
  }
});

test('a replayed seed gives the identical trace: faults, every API call and its outcome, every reconcile, the end state', async () => {
  const seed = firstRun?.seed ?? SEEDS[0]!;
  const first = firstRun?.result ?? (await simulateShardingProtocol(seed));
  const again = await simulateShardingProtocol(seed);
  assert.ok(first.trace.length > 500, `seed ${seed}: the trace records the run`);
  assert.deepEqual(again.trace, first.trace, `seed ${seed}: ${replay(seed)}`);
  assert.deepEqual(again.intervals, first.intervals, `seed ${seed}`);
});
