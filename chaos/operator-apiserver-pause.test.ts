/**
 * Chaos: kube-apiserver frozen (SIGSTOP) longer than the operators' renew deadline (20 s long /
 * 8 s short): the leader must stop its work before its deadline; after resume one leader continues.
 */
import { test } from 'node:test';
import { LONG, runOperatorScenario, sleep } from './support/operator-scenario.js';

const FAULT_MS = Number(process.env.CHAOS_FAULT_MS ?? (LONG ? 20_000 : 8_000));

test(
  'the Database operator survives a frozen API server, with no two leaders at work',
  { timeout: 600_000 },
  async () => {
    await runOperatorScenario({
      name: 'kube-apiserver paused',
      fault: async ({ bed, faults, notes }) => {
        const before = await bed.waitForLeader();
        bed.env.pause('kube-apiserver');
        faults.push(`SIGSTOP kube-apiserver ${FAULT_MS} ms`);
        try {
          await sleep(FAULT_MS);
        } finally {
          bed.env.resume('kube-apiserver');
        }
        const t0 = Date.now();
        notes.leaderBefore = before;
        notes.leaderAfter = await bed.waitForLeader({ timeoutMs: 60_000 });
        notes.leaderAfterResumeMs = Date.now() - t0;
      },
    });
  },
);
