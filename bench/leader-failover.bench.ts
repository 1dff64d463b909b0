/**
 * Leader failover time with the DEFAULT timings (lease 15 s, renew deadline 10 s, retry 2 s), real
 * replica processes against a TestEnv: a leader and a standby start, the standby watches for a random
 * 3–5 s, then the leader is killed (kill -9) or terminated (SIGTERM, which releases the Lease), and the
 * time until the standby starts its leader-only work is measured. Prints every run and the median.
 *
 *   OPERATOR_RUNTIME_ASSETS=... node --import tsx bench/leader-failover.bench.ts [runs=5]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestEnv } from '../src/testing/control-plane/test-env.js';
import { ReplicaGroup } from '../src/leader-election/testing/replica-group.js';
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from '../src/leader-election/leader-elector-options.js';
import { findOverlap } from '../src/leader-election/testing/intervals.js';
import { writeBenchJson } from './report/bench-output.js';

const runs = Number(process.argv[2] ?? 5);
if (!(runs >= 1)) throw new Error('runs must be >= 1');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const env = await TestEnv.start();
const dir = await mkdtemp(join(tmpdir(), 'leader-failover-bench-'));
let current: ReplicaGroup | undefined;

async function failover(mode: 'SIGKILL' | 'SIGTERM', run: number): Promise<number> {
  // Default timings: the replica passes no timing options.
  const g = new ReplicaGroup({
    kubeconfigPath: env.kubeconfigPath,
    namespace: 'default',
    name: `failover-${mode.toLowerCase()}-${run}`,
    dir,
  });
  current = g;
  try {
    g.spawn('leader');
    await g.waitForLeader(30_000);
    g.spawn('standby');
    await g.waitFor(
      'the standby to see the leader',
      (rs) => rs.find((r) => r.id === 'standby' && r.ev === 'leader-seen'),
      30_000,
    );
    await sleep(3_000 + Math.random() * 2_000);
    const at = g.signal('leader', mode);
    const next = await g.waitForLeader(DEFAULT_LEASE_DURATION_MS + 15_000, at, 'leader');
    const overlap = findOverlap(g.intervals());
    if (overlap) throw new Error(`leader-only work overlapped: ${JSON.stringify(overlap)}`);
    return next.t - at;
  } finally {
    await g.stopAll();
    current = undefined;
  }
}

try {
  console.log(
    `leader failover, defaults: leaseDuration ${DEFAULT_LEASE_DURATION_MS} ms, renewDeadline ${DEFAULT_RENEW_DEADLINE_MS} ms, retryPeriod ${DEFAULT_RETRY_PERIOD_MS} ms; ${runs} runs each`,
  );
  const results: Record<string, number[]> = {};
  for (const mode of ['SIGKILL', 'SIGTERM'] as const) {
    const times: number[] = [];
    results[mode] = times;
    for (let i = 0; i < runs; i++) {
      const ms = await failover(mode, i);
      times.push(ms);
      console.log(`  ${mode === 'SIGKILL' ? 'kill -9' : 'SIGTERM'} run ${i + 1}: ${(ms / 1000).toFixed(2)} s`);
    }
    console.log(
      `${mode === 'SIGKILL' ? 'kill -9' : 'SIGTERM'}: median ${(median(times) / 1000).toFixed(2)} s, min ${(Math.min(...times) / 1000).toFixed(2)} s, max ${(Math.max(...times) / 1000).toFixed(2)} s over ${runs} runs`,
    );
  }
  writeBenchJson({
    bench: 'leader-failover',
    leaseDurationMs: DEFAULT_LEASE_DURATION_MS,
    renewDeadlineMs: DEFAULT_RENEW_DEADLINE_MS,
    retryPeriodMs: DEFAULT_RETRY_PERIOD_MS,
    runs,
    killMs: results.SIGKILL,
    termMs: results.SIGTERM,
  });
} finally {
  await current?.stopAll();
  await env.stop();
  await rm(dir, { recursive: true, force: true });
}
