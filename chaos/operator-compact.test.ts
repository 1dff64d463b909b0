/**
 * Chaos: etcd compacted at its current revision with the API server's watch cache off, so every
 * watch from an older resourceVersion gets 410 Gone and every informer must relist.
 */
import { test } from 'node:test';
import { runOperatorScenario, sleep } from './support/operator-scenario.js';

test(
  'the Database operator relists after a compaction forces 410 on its watches, nothing lost',
  { timeout: 600_000 },
  async () => {
    await runOperatorScenario({
      name: 'etcd compaction (410 on every watch)',
      bed: { watchCache: false },
      fault: async (ctx) => {
        await sleep(1_000);
        ctx.compactedAt = await ctx.bed.env.compact();
        ctx.faults.push(`compact etcd at revision ${ctx.compactedAt} (watch cache off)`);
        await sleep(2_000);
      },
    });
  },
);
