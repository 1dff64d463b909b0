/** Chaos: the leading operator replica is killed with SIGKILL mid-workload, then restarted. */
import { test } from 'node:test';
import { runOperatorScenario } from './support/operator-scenario.js';

test(
  'the Database operator converges after its leader is killed with SIGKILL, nothing lost',
  { timeout: 600_000 },
  async () => {
    await runOperatorScenario({
      name: 'operator leader kill -9',
      fault: async ({ bed, faults, notes }) => {
        const leader = await bed.waitForLeader();
        await bed.kill(leader, 'SIGKILL');
        const killedAt = Date.now();
        faults.push(`kill -9 leading replica (${leader})`);
        const next = await bed.waitForLeader({ not: leader });
        notes.failoverMs = Date.now() - killedAt;
        notes.newLeader = next;
        await bed.addReplica(leader);
      },
    });
  },
);
