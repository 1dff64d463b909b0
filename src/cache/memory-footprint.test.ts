/**
 * Memory in CI: the cache's heap bytes per object and an idle manager's heap and RSS (on Node 22+
 * also after its idle heap compaction) stay within the budget in src/cache/testing/memory-thresholds.ts, and the informer's size estimate stays
 * close to the real figure. Measured in child processes with `--expose-gc` (heap after a full gc()
 * is deterministic; nothing here is timed). Print the current figures with
 * `node --expose-gc --import tsx src/cache/testing/memory-footprint.ts --print`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measureFootprint } from './testing/memory-footprint-runner.js';
import { formatFootprint, overBudget } from './testing/memory-thresholds.js';

test("the cache's heap per object, an idle manager's heap and RSS, and the size estimate's error stay within budget", async (t) => {
  const figures = await measureFootprint();
  t.diagnostic(formatFootprint(figures));
  assert.deepEqual(overBudget(figures), [], formatFootprint(figures));
});
