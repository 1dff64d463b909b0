/**
 * The sharding scale run (`npm run test:sharding`; minutes, so not in the default run): the
 * reference operator as real processes against a TestEnv (kube-apiserver 1.20, label mode).
 *
 *  1. Baselines, on a fresh control plane: the API server's status-write ceiling, then ONE unsharded
 *     replica reconciling the fleet (K Databases created while it runs).
 *     Then a spec change to every Database (a wave on objects already there), timed the same way.
 *  2. On a second fresh control plane: the ceiling again, then N sharded replicas on the same fleet
 *     and the same wave: time to all-reconciled, rate, each replica's cached share.
 *  3. kill -9 of one replica: its keys (by their shard label) picked up by the others, and a spec
 *     change to a sample of them reconciled, timed against leaseDuration + retryPeriod.
 *  4. Scale N → 5 → 2 while every Database's spec changes: all reconciled again, caches split.
 *  5. Overlaps over every record of the run, and the etcd-history audit of every Database write.
 *
 * Parameters: SHARDING_DATABASES (3000), SHARDING_REPLICAS (3), SHARDING_BASELINE=0 skips step 1.
 * Figures go to stdout and .tmp/sharding-results.json.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DATABASE, type Database } from '../../src/database.js';
import { setReplicas, waitAllReconciled } from './database-fleet.js';
import {
  auditDatabases,
  cacheSplit,
  loadAverage,
  measureFleet,
  measureSpecWave,
  overlapFigures,
  ringMembers,
  round,
  waitForRing,
  type CacheSplit,
  type FleetFigures,
} from './fleet-measurements.js';
import { firstPickUp } from '../replica-records.js';
import { OperatorBed } from '../operator-bed.js';
import { measureStatusWriteCeiling, type WriteCeiling } from './write-ceiling.js';

const K = Number(process.env.SHARDING_DATABASES ?? 3000);
const N = Number(process.env.SHARDING_REPLICAS ?? 3);
const NS = 'fleet';
const TIMEOUT_MS = Number(process.env.SHARDING_TIMEOUT_MS ?? 900_000);
const LEASE = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 };
const SHARD_LABEL = 'shard.operator-runtime.io/database-operator';
const RESULTS = fileURLToPath(new URL('../../../../.tmp/sharding-results.json', import.meta.url));
const replicaName = (i: number): string => `replica-${i}`;

interface Results {
  startedAt: string;
  databases: number;
  replicas: number;
  baseline?: { ceiling: WriteCeiling; load: string; oneReplica: FleetFigures; oneReplicaSpecWave: FleetFigures };
  sharded?: {
    ceiling: WriteCeiling;
    load: string;
    fleet: FleetFigures;
    split: CacheSplit;
    speedUp: number | null;
    specWave: FleetFigures;
    specWaveSpeedUp: number | null;
    ceilingShare: number | null;
    specWaveCeilingShare: number | null;
  };
  kill?: Record<string, unknown>;
  scale?: Record<string, unknown>[];
  overlaps?: { reconciles: number; overlaps: number; examples: readonly string[] };
  audit?: {
    keys: number;
    puts: number;
    lostUpdates: number;
    outOfOrderStatusWrites: number;
    historyGaps: number;
    findings: readonly string[];
  };
  supervisorRestarts?: number;
}

test(`sharding at scale: ${N} replicas × ${K} Databases, kill -9, ${N} → 5 → 2`, { timeout: 3_600_000 }, async () => {
  const results: Results = { startedAt: new Date().toISOString(), databases: K, replicas: N };
  const save = async (): Promise<void> => {
    await mkdir(fileURLToPath(new URL('.', `file://${RESULTS}`)), { recursive: true });
    await writeFile(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  };

  if (process.env.SHARDING_BASELINE !== '0') {
    const bed = await OperatorBed.start({ leaderElection: false, ...LEASE });
    try {
      const ceiling = await measureStatusWriteCeiling(bed.admin, { namespace: 'ceiling' });
      await bed.addReplica('single');
      const oneReplica = await measureFleet(bed, {
        namespace: NS,
        count: K,
        expect: 'provisioned',
        timeoutMs: TIMEOUT_MS,
      });
      const oneReplicaSpecWave = await measureSpecWave(bed, {
        namespace: NS,
        count: K,
        replicas: 2,
        expect: 'provisioned',
        timeoutMs: TIMEOUT_MS,
      });
      results.baseline = { ceiling, load: await loadAverage(), oneReplica, oneReplicaSpecWave };
      log('baseline', results.baseline);
      await save();
    } finally {
      await bed.stop();
    }
  }

  const bed = await OperatorBed.start({ sharding: true, ...LEASE });
  try {
    const ceiling = await measureStatusWriteCeiling(bed.admin, { namespace: 'ceiling' });
    const startRevision = (await bed.env.etcdRevision()) + 1;
    for (let i = 0; i < N; i++) await bed.addReplica(replicaName(i));
    await waitForRing(bed);
    const fleet = await measureFleet(bed, { namespace: NS, count: K, expect: 'provisioned', timeoutMs: TIMEOUT_MS });
    const split = await cacheSplit(bed, K);
    const specWave = await measureSpecWave(bed, {
      namespace: NS,
      count: K,
      replicas: 2,
      expect: 'provisioned',
      timeoutMs: TIMEOUT_MS,
    });
    const one = results.baseline?.oneReplica.databasesPerSecond ?? null;
    const oneWave = results.baseline?.oneReplicaSpecWave.databasesPerSecond ?? null;
    results.sharded = {
      ceiling,
      load: await loadAverage(),
      fleet,
      split,
      speedUp: one && fleet.databasesPerSecond ? round(fleet.databasesPerSecond / one, 2) : null,
      specWave,
      specWaveSpeedUp: oneWave && specWave.databasesPerSecond ? round(specWave.databasesPerSecond / oneWave, 2) : null,
      // The replicas' writes plus the fleet's creates, against what one client got through.
      ceilingShare:
        fleet.operatorWritesPerSecond === null || fleet.allReconciledMs === null
          ? null
          : round((fleet.operatorWritesPerSecond + (K * 1000) / fleet.allReconciledMs) / ceiling.writesPerSecond, 2),
      specWaveCeilingShare:
        specWave.operatorWritesPerSecond === null || specWave.allReconciledMs === null
          ? null
          : round(
              (specWave.operatorWritesPerSecond + (K * 1000) / specWave.allReconciledMs) / ceiling.writesPerSecond,
              2,
            ),
    };
    log('sharded', results.sharded);
    await save();

    // kill -9 of a member that is not the sharder (the sharder's own kill adds a leader election
    // before anyone reassigns: the chaos scenario covers it); its keys are those labelled with its id.
    const leader = await bed.leader();
    const victim = bed
      .running()
      .sort()
      .reverse()
      .find((r) => r !== leader)!;
    const victimId = (await ringMembers(bed)).get(victim);
    const all = (await bed.admin.list<Database>(DATABASE, { namespace: NS })).items;
    const victimKeys = all
      .filter((d) => victimId && d.metadata.labels?.[SHARD_LABEL] === victimId)
      .map((d) => `${NS}/${d.metadata.name}`);
    const killedAt = await bed.kill(victim, 'SIGKILL');
    // A spec change to a sample of its keys right after the kill: only a new owner can reconcile it.
    const sample = victimKeys.slice(0, 100).map((k) => k.split('/')[1]!);
    await setReplicas(bed.admin, NS, sample, 3);
    const bound = bed.leaseDurationMs + bed.retryPeriodMs;
    const picked = await waitFor(async () => {
      const p = firstPickUp(await bed.records(), victimKeys, killedAt, victim);
      return [...p.values()].every(Boolean) ? p : undefined;
    }, 120_000);
    const sampleDone = await waitAllReconciled(bed.admin, NS, K, {
      expect: 'provisioned',
      timeoutMs: 120_000,
      pollMs: 250,
    });
    const pickUps = picked ? [...picked.values()].map((r) => r!.startedAtMs - killedAt).sort((a, b) => a - b) : [];
    results.kill = {
      victim,
      sharder: leader ?? null,
      victimKeys: victimKeys.length,
      boundMs: bound,
      allPickedUp: picked !== undefined,
      firstPickUpMs: pickUps[0] ?? null,
      medianPickUpMs: pickUps[Math.floor(pickUps.length / 2)] ?? null,
      lastPickUpMs: pickUps.at(-1) ?? null,
      sampleChanged: sample.length,
      sampleReconciledMs: sampleDone.doneAt === undefined ? null : sampleDone.doneAt - killedAt,
      load: await loadAverage(),
    };
    log('kill -9', results.kill);
    await save();

    // Scale N-1 → N (restart) → 5 → 2, each step while every Database's spec changes.
    results.scale = [];
    await bed.addReplica(victim);
    await waitForRing(bed);
    const names = all.map((d) => d.metadata.name);
    const steps: { to: number; replicas: number }[] = [
      { to: 5, replicas: 4 },
      { to: 2, replicas: 1 },
    ];
    for (const step of steps) {
      const t0 = Date.now();
      const patching = setReplicas(bed.admin, NS, names, step.replicas, 16);
      const current = bed.running();
      if (step.to > current.length) {
        for (let i = 0; current.length + i < step.to; i++) await bed.addReplica(replicaName(N + i));
      } else {
        for (const name of current
          .sort()
          .reverse()
          .slice(0, current.length - step.to))
          await bed.kill(name, 'SIGTERM');
      }
      await patching;
      const done = await waitAllReconciled(bed.admin, NS, K, {
        expect: 'provisioned',
        timeoutMs: TIMEOUT_MS,
        pollMs: 500,
      });
      await waitForRing(bed);
      const stepSplit = await cacheSplit(bed, K);
      const row = {
        replicas: bed.running(),
        allReconciledMs: done.doneAt === undefined ? null : done.doneAt - t0,
        pending: done.pending.slice(0, 10),
        split: stepSplit,
        load: await loadAverage(),
      };
      results.scale.push(row);
      log(`scale to ${step.to}`, row);
      await save();
    }

    const records = await bed.records();
    results.overlaps = overlapFigures(records);
    const report = await auditDatabases(bed, startRevision, records);
    results.audit = {
      keys: report.keys,
      puts: report.puts,
      lostUpdates: report.lostUpdates,
      outOfOrderStatusWrites: report.outOfOrderStatusWrites,
      historyGaps: report.historyGaps,
      findings: report.findings.slice(0, 10).map((f) => JSON.stringify(f)),
    };
    results.supervisorRestarts = bed.supervisorRestarts;
    log('overlaps', results.overlaps);
    log('audit', results.audit);
    await save();

    assert.ok(
      fleet.allReconciledMs !== null,
      `every Database reconciled by ${N} replicas (pending: ${fleet.pending.join(', ')})`,
    );
    assert.equal(
      split.shardTotal,
      K,
      `each Database in exactly one replica's shard informer: ${JSON.stringify(split.inShard)}`,
    );
    assert.ok(
      split.maxShardDeviation <= 0.15,
      `each replica's shard informer holds 1/${N} ± 15%: ${JSON.stringify(split.inShard)}`,
    );
    assert.ok(
      split.maxDeviation <= 0.15,
      `each replica caches 1/${N} ± 15% of the Databases in all: ${JSON.stringify(split.cached)} (outside the shard informer: ${JSON.stringify(split.outsideShard)})`,
    );
    assert.ok(victimKeys.length > 0, 'the victim owned keys');
    assert.ok(picked !== undefined, 'every key of the killed replica picked up by another');
    assert.ok(sampleDone.doneAt !== undefined, "the spec change to the killed replica's keys reconciled");
    for (const row of results.scale)
      assert.ok(row.allReconciledMs !== null, `all reconciled after scaling to ${JSON.stringify(row.replicas)}`);
    assert.equal(
      results.overlaps.overlaps,
      0,
      `no two reconciles of one key at once: ${results.overlaps.examples.join('; ')}`,
    );
    assert.equal(report.lostUpdates, 0, 'audit: no lost update');
    assert.equal(report.outOfOrderStatusWrites, 0, 'audit: no out-of-order status write');
  } finally {
    await save().catch(() => undefined);
    await bed.stop();
  }
});

function log(phase: string, figures: unknown): void {
  console.log(`# ${phase}: ${JSON.stringify(figures)}`);
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}
