/**
 * The default run's sharding smoke (the full figures come from `npm run test:sharding`): three
 * sharded replicas of the reference operator as processes, 150 Databases. Every Database is
 * reconciled, each is cached by exactly one replica, a kill -9'd replica's keys are picked up by the
 * others, no key is ever reconciled by two replicas at once, and etcd's history shows no lost update.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DATABASE, type Database } from '../../src/database.js';
import { setReplicas, waitAllReconciled } from './database-fleet.js';
import {
  auditDatabases,
  cacheSplit,
  measureFleet,
  overlapFigures,
  ringMembers,
  waitForRing,
} from './fleet-measurements.js';
import { firstPickUp, statusWrites } from '../replica-records.js';
import { OperatorBed } from '../operator-bed.js';

const K = 150;
const NS = 'smoke';
const SHARD_LABEL = 'shard.operator-runtime.io/database-operator';

let bed: OperatorBed;
let startRevision: number;

before(async () => {
  bed = await OperatorBed.start({
    sharding: true,
    leaseDurationMs: 6_000,
    renewDeadlineMs: 4_000,
    retryPeriodMs: 1_000,
  });
  startRevision = (await bed.env.etcdRevision()) + 1;
  await Promise.all(['replica-0', 'replica-1', 'replica-2'].map((name) => bed.addReplica(name)));
  await waitForRing(bed);
});

after(async () => {
  await bed?.stop();
});

test(
  'three sharded replicas reconcile 150 Databases, each cached by exactly one replica',
  { timeout: 180_000 },
  async () => {
    const fleet = await measureFleet(bed, { namespace: NS, count: K, expect: 'provisioned', timeoutMs: 120_000 });
    assert.notEqual(fleet.allReconciledMs, null, `not reconciled: ${fleet.pending.join(', ')}`);
    assert.equal(
      Object.keys(fleet.reconcilesByReplica).length,
      3,
      `every replica reconciled some: ${JSON.stringify(fleet.reconcilesByReplica)}`,
    );
    const split = await cacheSplit(bed, K);
    assert.equal(
      split.shardTotal,
      K,
      `each Database in exactly one replica's shard informer: ${JSON.stringify(split.inShard)}`,
    );
    // ±50% here: with 150 keys the sampling noise alone is ±12% (one sigma); ±15% is checked at 3,000.
    assert.ok(split.maxShardDeviation <= 0.5, `shards split about 1/3 each: ${JSON.stringify(split.inShard)}`);
    assert.deepEqual(
      split.outsideShard,
      { 'replica-0': 0, 'replica-1': 0, 'replica-2': 0 },
      'no replica caches Databases outside its shard',
    );
  },
);

test(
  'kill -9 of one replica: its keys are picked up by the others and a spec change to them is reconciled',
  { timeout: 120_000 },
  async () => {
    const victim = 'replica-2';
    const victimId = (await ringMembers(bed)).get(victim);
    assert.ok(victimId, 'the victim holds a membership Lease');
    const dbs = (await bed.admin.list<Database>(DATABASE, { namespace: NS })).items;
    const keys = dbs.filter((d) => d.metadata.labels?.[SHARD_LABEL] === victimId).map((d) => d.metadata.name);
    assert.ok(keys.length > 0, 'the victim owns keys');
    const killedAt = await bed.kill(victim, 'SIGKILL');
    await setReplicas(bed.admin, NS, keys, 2);
    const done = await waitAllReconciled(bed.admin, NS, K, { expect: 'provisioned', timeoutMs: 90_000, pollMs: 250 });
    assert.notEqual(done.doneAt, undefined, `not reconciled after the kill: ${done.pending.join(', ')}`);
    const picked = firstPickUp(
      await bed.records(),
      keys.map((k) => `${NS}/${k}`),
      killedAt,
      victim,
    );
    const missing = [...picked].filter(([, r]) => !r).map(([k]) => k);
    assert.deepEqual(missing, [], 'every key of the killed replica reconciled by another');
    const split = await cacheSplit(bed, K);
    assert.equal(
      split.shardTotal,
      K,
      `the two survivors' shards hold every Database: ${JSON.stringify(split.inShard)}`,
    );
  },
);

test(
  "no key was ever reconciled by two replicas at once, and etcd's history shows no lost update",
  { timeout: 120_000 },
  async () => {
    const records = await bed.records();
    const overlaps = overlapFigures(records);
    assert.ok(overlaps.reconciles >= K, `records were collected (${overlaps.reconciles})`);
    assert.ok(
      statusWrites(records).length >= K,
      `status writes were recorded for the audit (${statusWrites(records).length})`,
    );
    assert.equal(overlaps.overlaps, 0, overlaps.examples.join('; '));
    const report = await auditDatabases(bed, startRevision, records);
    assert.equal(report.lostUpdates, 0, JSON.stringify(report.findings.slice(0, 5)));
    assert.equal(report.outOfOrderStatusWrites, 0, JSON.stringify(report.findings.slice(0, 5)));
    assert.equal(report.historyGaps, 0);
  },
);
