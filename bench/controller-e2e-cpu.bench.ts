/**
 * CPU of our own process per reconcile, against a plain undici loop doing the same status writes:
 * the part of bench/controller-e2e.bench.ts that does not depend on the API server's speed or on
 * how loaded the machine is. The server is bench/e2e/fake-widget-apiserver.ts (another process,
 * almost free), so what is measured here is only our side: workqueue, reconcile, cache read,
 * client, transport, JSON, the informer's watch events, metrics.
 *
 *   node --import tsx bench/controller-e2e-cpu.bench.ts [objects=2000] [workers=8]
 *   CPU_PROFILE=/tmp/p ...   also writes V8 CPU profiles, /tmp/p.plain-<round>.cpuprofile and /tmp/p.controller-<round>.cpuprofile
 *
 * Second pass (issue 27 item 3), profile-first. µs CPU per status write, 2000 objects, 8-way: the
 * base (7c48ecc) and this version run alternately, medians over the runs of two sittings (six
 * runs each) at the default 3 rounds and three sittings (ten runs each) at 5 rounds, load 2.2–3.1:
 *
 *   side                          BENCH_ROUNDS=3 (default)      BENCH_ROUNDS=5
 *                                  before    after             before    after
 *   plain undici loop                 75       70                 45       49
 *   KubeClient.patchStatus            73       65                 65       55
 *   controller reconcile             210      178                181      144
 *   controller / plain               2.8      2.5                4.0      2.9
 *
 * The plain loop is still warming up in round 2 (round by round: ~105, 80, 45, 42, 41), so with the
 * default 3 rounds its median is that of a cold loop; 5 rounds give the steady figures. Single
 * runs vary by ±15% and profiles by ±30% on this shared machine, so each change below was kept for
 * a cost its profile showed, not for a wall-clock A/B of it alone (a few µs are lost in the noise):
 *   - every response body built an Error for 'closed before its end' on its ordinary close: its
 *     stack capture walks the async chain, ~10 µs under a reconcile (src/client/body-limit.ts);
 *   - prom-client hashes the labels on every inc/set/observe: the controller's reconcile metrics
 *     and the cache's per-event series (events, last event, objects, handler backlog) are now plain
 *     numbers exported at scrape, as the workqueue's were (~5 + ~3 µs);
 *   - cache.get rebuilt and normalized the informer spec and its JSON key on every read: the
 *     informer a read resolves to is remembered (src/cache/informer-cache.ts, ~5 µs);
 *   - per watch event the watcher cancelled and re-made its stall timer and added and removed an
 *     abort listener: one IdleWatchdog and one AbortRace per watch now (~2 µs);
 *   - the handler dispatcher awaited the undefined a synchronous handler returns (a microtask
 *     turn and an async resume per event);
 *   - under tsx (as the benches run) every named closure costs a defineProperty when made
 *     (esbuild keepNames): body-limit's per-response one is gone (~3 µs; the compiled build gains
 *     only the closure).
 * What remains above the plain loop, from the profiles (inflated ~1.2× by the profiler): the
 * watch event (~17 µs: JSON.parse of the ~1 KB line ~5, the stacked async iterators of the body
 * stream, kube-client's watch generator and the watcher's loop, store upsert, dispatch, the
 * enqueue handler); the reconcile machinery (~15 µs, of which ~4 is Node 20's AbortSignal
 * constructor for the reconcile's signal: 2 µs alone in a loop, 0.1 µs on Node 24); the client's
 * request path shared with KubeClient.patchStatus (transport, body read, JSON.parse of the
 * answer); garbage collection (~10 µs against ~5 for the client alone: event objects, and stored
 * objects replaced in the old generation).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Session } from 'node:inspector/promises';
import { Agent, request } from 'undici';
import { KubeClient } from '../src/client/kube-client.js';
import { runWidgetRound, WIDGET } from './e2e/widget-controller.js';

const objects = Number(process.argv[2] ?? 2000);
const workers = Number(process.argv[3] ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const token = 'bench-token';
/**
 * `plain` or `controller`: run only that side in the measured rounds, after the same warm-up. For
 * instruction counts by difference: `valgrind --tool=callgrind` of a run with each, minus one with
 * BENCH_ROUNDS=0 (slow: minutes per run, and JIT compilation weighs heavily at small N).
 */
const only = process.env.BENCH_ONLY;
const none = { cpuUs: 0, wallMs: 0 };

const dir = mkdtempSync(join(tmpdir(), 'e2e-cpu-'));
execFileSync(
  'openssl',
  ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'].concat([
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'cert.pem'),
  ]),
  { stdio: 'ignore' },
);
const caPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    new URL('./e2e/fake-widget-apiserver.ts', import.meta.url).pathname,
    join(dir, 'cert.pem'),
    join(dir, 'key.pem'),
    token,
    String(objects),
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const port = await new Promise<number>((resolve) => {
  createInterface({ input: child.stdout! }).once('line', (line) =>
    resolve((JSON.parse(line) as { port: number }).port),
  );
});
const server = `https://127.0.0.1:${port}`;
const base = `${server}/apis/example.com/v1/namespaces/default/widgets`;
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json' };
const agent = new Agent({ connect: { ca: caPem }, connections: 64 });
const kubeconfig = {
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'c', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
  users: [{ name: 'u', user: { token } }],
  contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'default' } }],
  'current-context': 'x',
};
const client = await KubeClient.fromKubeconfig({ kubeconfig });
const profiler = process.env.CPU_PROFILE ? new Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
}

async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) await fn(i);
    }),
  );
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const cpu = process.cpuUsage(start);
  return cpu.user + cpu.system;
}

/** CPU µs (user + system) and wall ms of `fn`. */
async function measured(fn: () => Promise<void>): Promise<{ cpuUs: number; wallMs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: cpu.user + cpu.system, wallMs: performance.now() - t0 };
}

/** Runs `fn` under the V8 profiler when CPU_PROFILE is set: `<CPU_PROFILE>.<label>.cpuprofile`. */
async function profiled(label: string, fn: () => Promise<void>): Promise<void> {
  if (!profiler) return fn();
  await profiler.post('Profiler.start');
  await fn();
  const { profile } = await profiler.post('Profiler.stop');
  writeFileSync(`${process.env.CPU_PROFILE}.${label}.cpuprofile`, JSON.stringify(profile));
}

async function plain(round: number): Promise<void> {
  await pool(objects, workers, async (i) => {
    const res = await request(`${base}/w-${i}/status`, {
      method: 'PATCH',
      dispatcher: agent,
      headers,
      body: JSON.stringify({ status: { message: `ceiling ${round}` } }),
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`status patch failed: ${res.statusCode}`);
  });
}

let reconcilesRun = 0;
/** CPU µs from the manager's start to the first reconcile (list, watch, sync). */
let startupCpuUs = 0;
async function controller(round: number): Promise<void> {
  const startCpu = process.cpuUsage();
  await runWidgetRound({
    client,
    objects,
    workers,
    round,
    onReconcile: (started) => {
      reconcilesRun = started;
      if (started === 1) startupCpuUs = cpuSince(startCpu);
    },
  });
}

/** The client alone, no controller: `KubeClient.patchStatus` in the same 8-way loop as `plain`. */
async function clientOnly(round: number): Promise<void> {
  await pool(objects, workers, async (i) => {
    await client.patchStatus(WIDGET, `w-${i}`, { status: { message: `client ${round}` } }, { namespace: 'default' });
  });
}

try {
  // Warm-up: connections, discovery, JIT.
  await plain(0);
  await clientOnly(0);
  await controller(0);
  const sides = { plain: [] as number[], client: [] as number[], controller: [] as number[] };
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (let round = 1; round <= rounds; round++) {
    const p = only !== 'controller' ? await measured(() => profiled(`plain-${round}`, () => plain(round))) : none;
    const k = !only ? await measured(() => profiled(`client-${round}`, () => clientOnly(round))) : none;
    const c = only !== 'plain' ? await measured(() => profiled(`controller-${round}`, () => controller(round))) : none;
    sides.plain.push(p.cpuUs / objects);
    sides.client.push(k.cpuUs / objects);
    sides.controller.push(c.cpuUs / objects);
    console.log(
      `round ${round}: plain ${(p.cpuUs / objects).toFixed(0)} µs CPU/write (${p.wallMs.toFixed(0)} ms), client ${(k.cpuUs / objects).toFixed(0)} µs (${k.wallMs.toFixed(0)} ms), controller ${(c.cpuUs / objects).toFixed(0)} µs CPU/reconcile (${c.wallMs.toFixed(0)} ms; start-up ${(startupCpuUs / 1000).toFixed(0)} ms CPU = ${(startupCpuUs / objects).toFixed(0)} µs/reconcile; ${reconcilesRun} reconciles ran for ${objects} counted)`,
    );
  }
  if (rounds > 0)
    console.log(
      `median of ${rounds}: µs CPU per status write: plain undici ${median(sides.plain).toFixed(0)}, KubeClient.patchStatus ${median(sides.client).toFixed(0)}, controller reconcile ${median(sides.controller).toFixed(0)} (list + watch + sync included); controller/plain ${(median(sides.controller) / median(sides.plain)).toFixed(2)}`,
    );
} finally {
  await client.close();
  await agent.close();
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
