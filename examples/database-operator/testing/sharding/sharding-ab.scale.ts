/**
 * The reconcile-rate comparison as an interleaved A/B on ONE control plane, so a shared machine's
 * drifting load hits both sides alike: the same sharded operator with one live member (A) and with
 * three (B), alternating A, B, A, B; each side a spec change to all K Databases timed to
 * all-reconciled, with the API server's write ceiling (ConfigMap patches, 32 in flight, 10 s)
 * measured just before it. Not in the default run (minutes):
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx --test \
 *     examples/database-operator/testing/sharding/sharding-ab.scale.ts
 *
 * SHARDING_DATABASES (3000), SHARDING_AB_ROUNDS (2). Figures: stdout and .tmp/sharding-ab-results.json.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  cacheSplit,
  loadAverage,
  measureFleet,
  measureSpecWave,
  overlapFigures,
  round,
  waitForRing,
  type FleetFigures,
} from './fleet-measurements.js';
import { OperatorBed } from '../operator-bed.js';
import { measureConfigMapWriteCeiling, type WriteCeiling } from './write-ceiling.js';

const K = Number(process.env.SHARDING_DATABASES ?? 3000);
const ROUNDS = Number(process.env.SHARDING_AB_ROUNDS ?? 2);
const NS = 'fleet';
const TIMEOUT_MS = 900_000;
const RESULTS = fileURLToPath(new URL('../../../../.tmp/sharding-ab-results.json', import.meta.url));
const MEMBERS = ['replica-0', 'replica-1', 'replica-2'];

interface Side {
  readonly members: number;
  readonly ceiling: WriteCeiling;
  readonly wave: FleetFigures;
  readonly load: string;
}

test(
  `reconcile rate, 1 vs 3 sharded replicas interleaved on one control plane (${K} Databases, ${ROUNDS} rounds)`,
  { timeout: 3_600_000 },
  async () => {
    const bed = await OperatorBed.start({
      sharding: true,
      leaseDurationMs: 6_000,
      renewDeadlineMs: 4_000,
      retryPeriodMs: 1_000,
    });
    const sides: Side[] = [];
    let replicas = 1;
    const save = async (extra: Record<string, unknown> = {}): Promise<void> => {
      await mkdir(fileURLToPath(new URL('.', `file://${RESULTS}`)), { recursive: true });
      await writeFile(RESULTS, `${JSON.stringify({ databases: K, sides, ...extra }, null, 2)}\n`);
    };
    try {
      await bed.addReplica(MEMBERS[0]!);
      await waitForRing(bed);
      const created = await measureFleet(bed, {
        namespace: NS,
        count: K,
        expect: 'provisioned',
        timeoutMs: TIMEOUT_MS,
      });
      console.log(`# created with 1 member: ${JSON.stringify(created)}`);
      let ceilingRun = 0;
      for (let round = 0; round < ROUNDS; round++) {
        for (const members of [1, 3]) {
          for (const m of MEMBERS.slice(1)) {
            if (members === 3) await bed.addReplica(m);
            else if (bed.running().includes(m)) await bed.kill(m, 'SIGTERM');
          }
          await waitForRing(bed, 90_000);
          const split = await cacheSplit(bed, K, 300_000); // every key assigned to a live member before the clock starts
          assert.equal(split.shardTotal, K, `all keys assigned before the wave: ${JSON.stringify(split.inShard)}`);
          const ceiling = await measureConfigMapWriteCeiling(bed.admin, { namespace: `ceiling-${ceilingRun++}` });
          replicas = (replicas % 9) + 1; // a new spec.replicas each wave: a new generation for every Database
          const wave = await measureSpecWave(bed, {
            namespace: NS,
            count: K,
            replicas,
            expect: 'provisioned',
            timeoutMs: TIMEOUT_MS,
          });
          const side: Side = { members, ceiling, wave, load: await loadAverage() };
          sides.push(side);
          console.log(
            `# round ${round + 1}, ${members} member(s): ${JSON.stringify({ ceilingWritesPerSecond: round1(ceiling.writesPerSecond), databasesPerSecond: wave.databasesPerSecond, reconcilesPerSecond: wave.reconcilesPerSecond, operatorWritesPerSecond: wave.operatorWritesPerSecond, reconcilesByReplica: wave.reconcilesByReplica, load: side.load })}`,
          );
          await save();
        }
      }
      const rate = (m: number): number[] =>
        sides.filter((s) => s.members === m).map((s) => s.wave.databasesPerSecond ?? 0);
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      const ratios = sides
        .filter((s) => s.members === 3)
        .map((b, i) =>
          round(
            (b.wave.databasesPerSecond ?? 0) / (sides.filter((s) => s.members === 1)[i]!.wave.databasesPerSecond ?? 1),
            2,
          ),
        );
      const overlaps = overlapFigures(await bed.records());
      const summary = {
        oneMemberDatabasesPerSecond: rate(1),
        threeMembersDatabasesPerSecond: rate(3),
        ratioPerRound: ratios,
        ratioOfMeans: round(mean(rate(3)) / mean(rate(1)), 2),
        overlaps: overlaps.overlaps,
        reconciles: overlaps.reconciles,
      };
      console.log(`# summary: ${JSON.stringify(summary)}`);
      await save({ summary });
      assert.equal(overlaps.overlaps, 0, overlaps.examples.join('; '));
    } finally {
      await bed.stop();
    }
  },
);

function round1(n: number): number {
  return round(n, 1);
}
