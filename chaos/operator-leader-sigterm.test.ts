/** Chaos: the leading operator replica gets SIGTERM mid-workload (graceful: drain, release), then restarts. */
import { test } from 'node:test';
import { runOperatorScenario } from './support/operator-scenario.js';

test(
  'the Database operator hands over within about a retry period after SIGTERM of its leader',
  { timeout: 600_000 },
  async () => {
    await runOperatorScenario({
      name: 'operator leader SIGTERM',
      fault: async ({ bed, faults, notes }) => {
        const leader = await bed.waitForLeader();
        const t0 = Date.now();
        await bed.kill(leader, 'SIGTERM');
        notes.leaderStoppedMs = Date.now() - t0;
        faults.push(`SIGTERM leading replica (${leader})`);
        const next = await bed.waitForLeader({ not: leader });
        notes.failoverMs = Date.now() - t0;
        notes.newLeader = next;
        await bed.addReplica(leader);
      },
    });
  },
);
