/**
 * CPU of our own process per reconcile, against a plain undici loop doing the same status writes:
 * the part of bench/controller-e2e.bench.ts that does not depend on the API server's speed or on
 * how loaded the machine is. The server is bench/e2e/fake-widget-apiserver.ts (another process,
 * almost free), so what is measured here is only our side: workqueue, reconcile, cache read,
 * client, transport, JSON, the informer's watch events, metrics.
 *
 *   node --import tsx bench/controller-e2e-cpu.bench.ts [objects=2000] [workers=8]
 *   CPU_PROFILE=/tmp/p ...   also writes V8 CPU profiles, /tmp/p.plain-<round>.cpuprofile and /tmp/p.controller-<round>.cpuprofile
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
