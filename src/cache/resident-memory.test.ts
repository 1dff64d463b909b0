/**
 * Resident memory in CI (issue 41): one informer syncing 10,000 Database-like objects from a
 * loopback server that serves the list whole, as the API server's watch cache does. Its peak and
 * settled RSS above bare Node's (measured in the same run, each in a fresh process over the built
 * package) stay within RESIDENT_THRESHOLDS. RSS spreads between identical runs, so the smallest of
 * two runs is kept and the limits sit 20–25% above the highest figures measured when they were set;
 * the list held whole as text (before list-decoder.ts) measured 26–35% above them. Nothing is timed.
 * The same figures with more detail: bench/informer-resident.bench.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measureResident, startListServer } from '../../bench/resident/resident-runner.js';

const MiB = 1024 * 1024;
const OBJECTS = 10_000;

interface ResidentThresholds {
  /** Peak RSS during the initial sync, above bare Node's RSS. */
  readonly peakAboveBare: number;
  /** RSS after the sync and a full GC, above bare Node's RSS. */
  readonly settledAboveBare: number;
}

/** By Node major; a major not listed uses the highest listed one below it. */
const RESIDENT_THRESHOLDS: Readonly<Record<number, ResidentThresholds>> = {
  // Measured: Node 20 peak 59.9–66.4, settled 49.2–54.3 above bare; Node 24 peak and settled 71–77.7.
  20: { peakAboveBare: 90 * MiB, settledAboveBare: 68 * MiB },
  24: { peakAboveBare: 95 * MiB, settledAboveBare: 95 * MiB },
};

function thresholdsFor(version: string): ResidentThresholds {
  const major = Number(/^v(\d+)/.exec(version)?.[1]);
  const listed = Object.keys(RESIDENT_THRESHOLDS)
    .map(Number)
    .filter((m) => m <= major)
    .sort((a, b) => b - a);
  return RESIDENT_THRESHOLDS[listed[0] ?? 20]!;
}

test('one informer over 10,000 objects served whole: peak and settled RSS above bare Node stay within budget', async (t) => {
  const server = await startListServer(OBJECTS);
  try {
    // A full GC and a second's rest before the settled figure: enough for what this check compares.
    const options = { settleMs: 1000 };
    const bare = await measureResident(server, OBJECTS, 'bare', options);
    const runs = [
      await measureResident(server, OBJECTS, 'ours', options),
      await measureResident(server, OBJECTS, 'ours', options),
    ];
    const peak = Math.min(...runs.map((r) => r.peakRss)) - bare.settledRss;
    const settled = Math.min(...runs.map((r) => r.settledRss)) - bare.settledRss;
    const limits = thresholdsFor(process.version);
    const show = (b: number): string => `${(b / MiB).toFixed(1)} MiB`;
    const lines = [
      `node ${process.version}, ${OBJECTS} objects; bare RSS ${show(bare.settledRss)}`,
      `peak above bare ${show(peak)} (limit ${show(limits.peakAboveBare)}); settled above bare ${show(settled)} (limit ${show(limits.settledAboveBare)})`,
      `runs: ${runs.map((r) => `peak ${show(r.peakRss)} settled ${show(r.settledRss)} live heap ${show(r.liveHeap)}`).join('; ')}`,
    ];
    for (const line of lines) t.diagnostic(line);
    const report = lines.join('\n');
    const over = [
      ...(peak > limits.peakAboveBare
        ? [`peak RSS above bare is ${show(peak)}, over ${show(limits.peakAboveBare)}`]
        : []),
      ...(settled > limits.settledAboveBare
        ? [`settled RSS above bare is ${show(settled)}, over ${show(limits.settledAboveBare)}`]
        : []),
    ];
    assert.deepEqual(over, [], `${report}\n(limits: RESIDENT_THRESHOLDS in src/cache/resident-memory.test.ts)`);
  } finally {
    server.stop();
  }
});
