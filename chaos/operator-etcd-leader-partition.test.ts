/** Chaos: the etcd leader is cut off from its peers (15 s long / 5 s short) while the operator works. */
import { test } from 'node:test';
import { LONG, runOperatorScenario, sleep } from './support/operator-scenario.js';
import { etcdFaults } from 'operator-runtime/testing/chaos';

const FAULT_MS = Number(process.env.CHAOS_FAULT_MS ?? (LONG ? 15_000 : 5_000));

test(
  'the Database operator converges after the etcd leader is partitioned and healed',
  { timeout: 600_000 },
  async () => {
    await runOperatorScenario({
      name: 'etcd leader partition',
      fault: async ({ bed, faults, notes }) => {
        const leader = await etcdFaults(bed.env).waitForLeader();
        const t0 = Date.now();
        await etcdFaults(bed.env).partitionMember(leader);
        faults.push(`partition etcd leader (member ${leader}) ${FAULT_MS} ms`);
        try {
          await etcdFaults(bed.env).waitForLeader({ not: leader, timeoutMs: 20_000 });
          notes.newEtcdLeaderMs = Date.now() - t0;
          await sleep(Math.max(0, FAULT_MS - (Date.now() - t0)));
        } finally {
          await etcdFaults(bed.env).heal();
        }
      },
    });
  },
);
