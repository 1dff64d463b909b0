/**
 * `npm run bench:report`: runs the benchmarks one after another (each as its own process, each
 * measuring ours beside its anchor in that same process), collects their JSON and writes one
 * self-contained HTML page with SVG charts plus the JSON next to it.
 *
 *   node --import tsx bench/report/run-report.ts [--quick] [--out DIR] [--only informer,controller,workqueue,leader-failover,relist]
 *   node --import tsx bench/report/run-report.ts --render report.json [--out DIR]     (re-render a saved JSON only)
 *
 * Output: DIR/report.html and DIR/report.json (DIR defaults to .tmp/bench-report). A bench that
 * fails or times out is listed on the page and makes the exit status 1; the others still report.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BENCH_JSON_ENV } from './bench-output.js';
import { renderReport } from './render-report.js';
import type { BenchFailure, ReportData } from './report-data.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface BenchPlan {
  readonly key: 'informer' | 'controller' | 'workqueue' | 'leaderFailover' | 'relist';
  readonly name: string;
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly exposeGc: boolean;
  readonly timeoutMs: number;
}

/**
 * Sizes and rounds. Quick keeps the whole run under 5 minutes on a busy 2-core machine: each
 * informer measurement restarts the API server twice and waits for client-node's delivery after
 * the restart (15 s, 5 s in quick), so quick measures the informers once per count (their spread
 * shows in the full run only); full
 * uses each bench's own default sizes and more rounds.
 */
function plans(quick: boolean): BenchPlan[] {
  const minutes = (m: number): number => m * 60_000;
  return [
    // In-process benches first, before TestEnvs have warmed the machine up.
    {
      key: 'workqueue',
      name: 'workqueue',
      file: 'bench/workqueue.bench.ts',
      args: quick ? ['50000', '3'] : ['100000', '5'],
      env: {},
      exposeGc: false,
      timeoutMs: minutes(quick ? 2 : 10),
    },
    {
      key: 'relist',
      name: 'relist-memory',
      file: 'src/cache/bench/relist-memory.bench.ts',
      args: quick ? ['5000'] : ['50000'],
      env: { RELIST_ROUNDS: '3' },
      exposeGc: true,
      timeoutMs: minutes(quick ? 2 : 10),
    },
    {
      key: 'controller',
      name: 'controller-e2e',
      file: 'bench/controller-e2e.bench.ts',
      args: quick ? ['300', '8'] : ['2000', '8'],
      env: { BENCH_ROUNDS: quick ? '3' : '5' },
      exposeGc: false,
      timeoutMs: minutes(quick ? 3 : 20),
    },
    {
      key: 'informer',
      name: 'informer',
      file: 'bench/informer.bench.ts',
      args: quick ? ['500,2000'] : ['10000,50000'],
      env: { INFORMER_ROUNDS: quick ? '1' : '2', ...(quick ? { INFORMER_DELIVERY_WINDOW_MS: '5000' } : {}) },
      exposeGc: true,
      timeoutMs: minutes(quick ? 4 : 60),
    },
    {
      key: 'leaderFailover',
      name: 'leader-failover',
      file: 'bench/leader-failover.bench.ts',
      args: quick ? ['2'] : ['5'],
      env: {},
      exposeGc: false,
      timeoutMs: minutes(quick ? 3 : 15),
    },
  ];
}

function commandLine(p: BenchPlan): string {
  const env = Object.entries(p.env)
    .map(([k, v]) => `${k}=${v} `)
    .join('');
  return `${env}node ${p.exposeGc ? '--expose-gc ' : ''}--import tsx ${p.file} ${p.args.join(' ')}`.trim();
}

/** Runs one bench in its own process group (so a timeout can stop it and whatever it started). */
function runBench(p: BenchPlan, jsonFile: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [...(p.exposeGc ? ['--expose-gc'] : []), '--import', 'tsx', p.file, ...p.args],
      {
        cwd: ROOT,
        env: { ...process.env, ...p.env, [BENCH_JSON_ENV]: jsonFile },
        stdio: ['ignore', 'inherit', 'inherit'],
        detached: true,
      },
    );
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      reject(new Error(`timed out after ${p.timeoutMs / 1000} s`));
    }, p.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise();
      else reject(new Error(`exited with ${code ?? signal}`));
    });
  });
}

async function writeReport(data: ReportData, outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, 'report.json'), `${JSON.stringify(data, null, 2)}\n`);
  await writeFile(join(outDir, 'report.html'), renderReport(data));
  console.log(`\nreport: ${relative(process.cwd(), join(outDir, 'report.html'))} and report.json`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      out: { type: 'string' },
      only: { type: 'string' },
      render: { type: 'string' },
    },
  });
  const outDir = resolve(values.out ?? join(ROOT, '.tmp/bench-report'));
  if (values.render) {
    await writeReport(JSON.parse(await readFile(values.render, 'utf8')) as ReportData, outDir);
    return 0;
  }
  const quick = values.quick ?? false;
  const only = values.only?.split(',').map((s) => s.trim());
  const selected = plans(quick).filter((p) => !only || only.includes(p.name) || only.includes(p.key));
  const started = Date.now();
  const loadAverageStart = loadavg();
  const results: Record<string, unknown> = {};
  const failures: BenchFailure[] = [];
  const commands: Record<string, string> = {};
  const dir = await mkdtemp(join(tmpdir(), 'bench-report-'));
  try {
    for (const p of selected) {
      commands[p.name] = commandLine(p);
      console.log(`\n== ${p.name}: ${commands[p.name]}`);
      const jsonFile = join(dir, `${p.name}.json`);
      const t0 = Date.now();
      try {
        await runBench(p, jsonFile);
        results[p.key] = JSON.parse(await readFile(jsonFile, 'utf8'));
        console.log(`== ${p.name}: done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        failures.push({ bench: p.name, message });
        console.error(`== ${p.name}: FAILED (${message})`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const cpu = cpus();
  const data: ReportData = {
    title: `operator-runtime benchmark report${quick ? ' (quick)' : ''}`,
    generatedAt: new Date().toISOString(),
    quick,
    durationMs: Date.now() - started,
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model.trim() ?? 'unknown',
      totalMemoryMb: Math.round(totalmem() / 1024 / 1024),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      loadAverageStart,
      loadAverageEnd: loadavg(),
    },
    commands,
    ...(results as Partial<ReportData>),
    failures,
  };
  await writeReport(data, outDir);
  console.log(
    `total ${(data.durationMs / 1000).toFixed(0)} s; load average at start ${loadAverageStart.map((l) => l.toFixed(2)).join(' ')}`,
  );
  return failures.length ? 1 : 0;
}

process.exitCode = await main();
