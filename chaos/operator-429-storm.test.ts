/** Chaos: every request of the operators answered 429 (Retry-After: 1) for a while (30 s long / 8 s short). */
import { test } from 'node:test';
import { LONG, runOperatorScenario, sleep } from './support/operator-scenario.js';

const FAULT_MS = Number(process.env.CHAOS_FAULT_MS ?? (LONG ? 30_000 : 8_000));

test('the Database operator rides out a 429 storm and converges', { timeout: 600_000 }, async () => {
  await runOperatorScenario({
    name: '429 storm',
    fault: async ({ bed, faults, notes }) => {
      const storm = bed.proxy.inject({ kind: 'status', status: 429, retryAfterSeconds: 1, durationMs: FAULT_MS });
      faults.push(`429 + Retry-After 1 s on every operator request for ${FAULT_MS} ms`);
      await sleep(FAULT_MS);
      storm.remove();
      notes.injected429 = storm.injected;
      notes.proxiedRequests = bed.proxy.stats().requests;
    },
  });
});
