/** Chaos: the backup service is down (30 s long / 8 s short) while Databases are being deleted. */
import { test } from 'node:test';
import { LONG, runOperatorScenario, sleep } from './support/operator-scenario.js';

const FAULT_MS = Number(process.env.CHAOS_FAULT_MS ?? (LONG ? 30_000 : 8_000));

test(
  'deletions wait for the backup service and complete once it is back, one backup each',
  { timeout: 600_000 },
  async () => {
    await runOperatorScenario({
      name: 'backup service down',
      fault: async ({ bed, faults, notes }) => {
        bed.backups.setFaults({ down: true });
        faults.push(`backup service answers 503 for ${FAULT_MS} ms`);
        try {
          await sleep(FAULT_MS);
        } finally {
          bed.backups.setFaults({});
        }
        notes.injectedBackupErrors = bed.backups.injectedErrors;
      },
    });
  },
);
