/**
 * Chaos: shard members of the sharded Database operator killed and partitioned while Databases are
 * created, changed and deleted. Three replicas (label mode on kube-apiserver 1.20, leader-elected
 * sharder), each behind its own cuttable link to the API server. Faults, one after another:
 * kill -9 of a member that is not the sharder, a partition of a member longer than its lease, a
 * partition shorter than its renew deadline, and kill -9 of the sharder. After heal: every live
 * Database Ready and current, no key ever reconciled by two replicas at once (records of every
 * replica), and etcd's history shows no lost update or out-of-order status write.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatAuditReport } from 'operator-runtime/testing/chaos';
import { DATABASE, type Database } from '../examples/database-operator/src/database.js';
import { OperatorBed } from '../examples/database-operator/testing/operator-bed.js';
import { statusWrites } from '../examples/database-operator/testing/replica-records.js';
import { isReconciled } from '../examples/database-operator/testing/sharding/database-fleet.js';
import {
  auditDatabases,
  overlapFigures,
  ringMembers,
  waitForRing,
} from '../examples/database-operator/testing/sharding/fleet-measurements.js';
import { recordChaosResult } from './support/chaos-results.js';
import { DatabaseWorkload } from './support/database-workload.js';
import { CONVERGENCE_BOUND_MS, LONG, sleep } from './support/operator-scenario.js';

const OBJECTS = Number(process.env.CHAOS_OBJECTS ?? (LONG ? 60 : 24));
const LEASE = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 };
const REPLICAS = ['replica-0', 'replica-1', 'replica-2'];

test(
  'the sharded Database operator: members killed and partitioned under load, no key reconciled twice at once, nothing lost',
  { timeout: 900_000 },
  async () => {
    const bed = await OperatorBed.start({ sharding: true, controllerManager: true, ...LEASE });
    const faults: string[] = [];
    const notes: Record<string, number | string> = {};
    const churnStop = new AbortController();
    let churning: Promise<void> | undefined;
    try {
      const startRevision = (await bed.env.etcdRevision()) + 1;
      await Promise.all(REPLICAS.map((r) => bed.addReplica(r)));
      await waitForRing(bed);
      const workload = new DatabaseWorkload(bed.admin);
      await workload.create(OBJECTS);
      churning = workload.churn(churnStop.signal, 150);

      // Each fault hits a member that is not the sharder and was not hit by the previous fault.
      let lastHit = '';
      const follower = async (): Promise<string> => {
        const leader = await bed.leader();
        const pick = bed
          .running()
          .sort()
          .find((r) => r !== leader && r !== lastHit)!;
        lastHit = pick;
        return pick;
      };

      // 1. kill -9 of a member; it comes back after its keys moved.
      const killed = await follower();
      await bed.kill(killed, 'SIGKILL');
      faults.push(`kill -9 member ${killed}`);
      await sleep(bed.leaseDurationMs + bed.retryPeriodMs + 2_000);
      await bed.addReplica(killed);
      await waitForRing(bed, 90_000);

      // 2. A member partitioned longer than its lease: it must stop before its keys are given away,
      // and the sharder must see it leave.
      await sleep(3_000);
      const cut = await follower();
      bed.partition(cut);
      faults.push(`partition member ${cut} ${2 * bed.leaseDurationMs} ms`);
      await sleep(2 * bed.leaseDurationMs);
      notes.partitionedMemberLeftRing = (await ringMembers(bed)).has(cut) ? 'no' : 'yes';
      bed.heal(cut);
      await waitForRing(bed, 90_000);

      // 3. A short partition (below the renew deadline): nothing should have to move.
      await sleep(3_000);
      const blip = await follower();
      bed.partition(blip);
      faults.push(`partition member ${blip} ${LEASE.renewDeadlineMs / 2} ms`);
      await sleep(LEASE.renewDeadlineMs / 2);
      bed.heal(blip);

      // 4. kill -9 of the sharder itself.
      await sleep(3_000);
      const sharder = await bed.leader();
      if (sharder && bed.running().includes(sharder)) {
        await bed.kill(sharder, 'SIGKILL');
        faults.push(`kill -9 sharder ${sharder}`);
        await sleep(bed.leaseDurationMs + bed.retryPeriodMs + 2_000);
        await bed.addReplica(sharder);
        await waitForRing(bed, 90_000);
      }

      const healAt = Date.now();
      await sleep(1_000);
      churnStop.abort();
      await churning;

      let convergenceMs: number | null = null;
      const deadline = healAt + CONVERGENCE_BOUND_MS;
      let stuck: string[] = [];
      while (Date.now() < deadline) {
        const items = await bed.admin
          .list<Database>(DATABASE, { namespace: 'default' })
          .then((l) => l.items)
          .catch(() => undefined);
        if (items) {
          stuck = items
            .filter((d) => d.metadata.deletionTimestamp || !isReconciled(d, 'ready'))
            .map(
              (d) =>
                `${d.metadata.name}:${d.status?.phase ?? 'none'}${d.metadata.deletionTimestamp ? ':deleting' : ''}`,
            );
          if (stuck.length === 0) {
            convergenceMs = Date.now() - healAt;
            break;
          }
        }
        await sleep(250);
      }
      notes.stuck = stuck.slice(0, 10).join(' ');

      const records = await bed.records();
      const overlaps = overlapFigures(records);
      const report = await auditDatabases(bed, startRevision, records);
      const backups = bed.backups.backups();
      notes.reconciles = overlaps.reconciles;
      notes.replicaRestartsAfterLostLease = bed.supervisorRestarts;
      if (overlaps.examples.length) notes.overlapExamples = overlaps.examples.join('; ');
      const passed =
        notes.partitionedMemberLeftRing === 'yes' &&
        convergenceMs !== null &&
        overlaps.overlaps === 0 &&
        report.lostUpdates === 0 &&
        report.outOfOrderStatusWrites === 0;
      await recordChaosResult({
        scenario: 'sharding members killed and partitioned',
        faults,
        objects: workload.names.length + workload.deleted.length,
        convergenceMs,
        backupsStarted: backups.length,
        backupsCompleted: backups.filter((b) => b.completedAt).length,
        apiWrites: workload.writes + statusWrites(records).length,
        reconcileOverlaps: overlaps.overlaps,
        lostUpdates: report.lostUpdates,
        outOfOrderStatusWrites: report.outOfOrderStatusWrites,
        passed,
        notes,
      });

      assert.equal(
        notes.partitionedMemberLeftRing,
        'yes',
        'the long partition cut the member off (its Lease went stale)',
      );
      assert.notEqual(
        convergenceMs,
        null,
        `did not converge within ${CONVERGENCE_BOUND_MS} ms after heal: ${stuck.slice(0, 20).join(', ')}`,
      );
      assert.equal(overlaps.overlaps, 0, `never two reconciles of one key at once: ${overlaps.examples.join('; ')}`);
      assert.equal(report.lostUpdates, 0, formatAuditReport(report));
      assert.equal(report.outOfOrderStatusWrites, 0, formatAuditReport(report));
    } finally {
      churnStop.abort();
      await churning?.catch(() => undefined);
      await bed.stop();
    }
  },
);
