/**
 * Simulation speed (issue 28; target: 1,000 seeds of a 20-step scenario of the reference operator
 * in ≤ 60 s on 2 cores). Runs `simulate()` over seeds 1…N of the reference Database operator's
 * 20-step scenario (examples/database-operator/testing/database-simulation.ts), split across
 * child processes (a run seeds Math.random for its process, so runs are one at a time per process),
 * without shrinking, and prints seeds per second, the wall time (process start-up included), the
 * CPU time the simulations used (seeds per CPU-second does not move with other work on the machine;
 * 2 dedicated cores give twice that per wall second), clean seeds and the machine's load.
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx bench/simulation.bench.ts [seeds=1000] [processes=2] [operator=database|cron|widget|bucket|site]
 *
 * Each process runs the fault-free reference run once as well. `cron` is the time-driven CronTask
 * operator (src/testing/simulation/test-support/cron-operator.ts), `widget` the widget operator,
 * `bucket` the Bucket operator over a simulated external service (bucket-operator.ts), `site` the
 * two controllers writing one Site (site-operator.ts), all correct versions, the last two over
 * generated scenarios: `npm run bench:simulation` runs 1,000 seeds of each and exits non-zero if
 * any seed fails (the correct operators' 1,000-seed check, issue 42).
 *
 * Measured (issue 42 item 6; 2 cores, load 0.9–2.9, 300 seeds over 2 processes, before → after the
 * simulation speed work): database 19.9 → 25.2 seeds/s (11.8 → 15.6 per CPU-second), cron 44.8 →
 * 47.4 (33.9 → 36.1), widget (200 seeds) 29.0 → 31.6 (21.8 → 24.5). At the default 1,000 seeds,
 * with the reference operator on dependents (load 1.7–2.0): database 30.7 and 33.8 seeds/s (17.1 and
 * 18.6 per CPU-second), cron 81.8 (51.2); a 300-seed run spends a fifth of its time starting the
 * processes and warming the JIT (21.4). docs/simulation.md has the rest.
 */
import { availableParallelism, loadavg } from 'node:os';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { simulate, type SimulationOptions } from 'operator-runtime/testing/simulation';
import { databaseSimulation } from '../examples/database-operator/testing/database-simulation.js';
import { cronSimulation } from '../src/testing/simulation/test-support/cron-operator.js';
import { widgetSimulation } from '../src/testing/simulation/test-support/widget-operator.js';
import { bucketSimulation } from '../src/testing/simulation/test-support/bucket-operator.js';
import { siteSimulation } from '../src/testing/simulation/test-support/site-operator.js';

const OPERATORS: Readonly<Record<string, () => SimulationOptions>> = {
  database: databaseSimulation,
  cron: () => cronSimulation(),
  widget: () => widgetSimulation(),
  bucket: () => bucketSimulation(),
  site: () => siteSimulation(),
};

interface Slice {
  readonly from: number;
  readonly to: number;
}

interface SliceResult {
  readonly seeds: number;
  readonly clean: number;
  readonly failedSeeds: readonly number[];
  readonly ms: number;
  /** CPU time of the process (user + system) for the slice: what a loaded machine does not inflate. */
  readonly cpuMs: number;
}

async function runSlice({ from, to }: Slice, operator: string): Promise<SliceResult> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const options = OPERATORS[operator];
  if (!options)
    throw new Error(`unknown operator ${JSON.stringify(operator)}: one of ${Object.keys(OPERATORS).join(', ')}`);
  const report = await simulate({
    ...options(),
    seeds: Array.from({ length: to - from + 1 }, (_, i) => from + i),
    shrink: false,
    maxFailures: Number.POSITIVE_INFINITY,
  });
  return {
    seeds: report.seedsRun.length,
    clean: report.clean,
    failedSeeds: report.failures.map((f) => f.seed),
    ms: performance.now() - started,
    cpuMs: ((u) => (u.user + u.system) / 1000)(process.cpuUsage(cpu)),
  };
}

if (process.argv[2] === '--slice') {
  const [from, to, operator] = process.argv.slice(3);
  console.log(JSON.stringify(await runSlice({ from: Number(from), to: Number(to) }, operator ?? 'database')));
} else {
  const seeds = Number(process.argv[2] ?? 1000);
  const processes = Number(process.argv[3] ?? 2);
  const operator = process.argv[4] ?? 'database';
  const per = Math.ceil(seeds / processes);
  const load = loadavg().map((l) => l.toFixed(2));
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: processes }, (_, i) => {
      const args = ['--slice', String(i * per + 1), String(Math.min(seeds, (i + 1) * per)), operator];
      return new Promise<SliceResult>((resolve, reject) => {
        execFile(
          process.execPath,
          [...process.execArgv, fileURLToPath(import.meta.url), ...args],
          { maxBuffer: 16 * 1024 * 1024 },
          (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as SliceResult)),
        );
      });
    }),
  );
  const wallMs = performance.now() - started;
  const total = results.reduce((n, r) => n + r.seeds, 0);
  const clean = results.reduce((n, r) => n + r.clean, 0);
  const failed = results.flatMap((r) => r.failedSeeds);
  console.log(
    JSON.stringify({
      operator,
      seeds: total,
      processes,
      cpus: availableParallelism(),
      wallSeconds: Number((wallMs / 1000).toFixed(1)),
      seedsPerSecond: Number((total / (wallMs / 1000)).toFixed(1)),
      perProcessSeconds: results.map((r) => Number((r.ms / 1000).toFixed(1))),
      // Seeds per CPU-second: on a machine shared with other work, the figure the wall time hides.
      cpuSeconds: Number((results.reduce((n, r) => n + r.cpuMs, 0) / 1000).toFixed(1)),
      seedsPerCpuSecond: Number((total / (results.reduce((n, r) => n + r.cpuMs, 0) / 1000)).toFixed(1)),
      clean,
      failedSeeds: failed,
      loadAverageAtStart: load,
      loadAverageAtEnd: loadavg().map((l) => l.toFixed(2)),
    }),
  );
}
