/**
 * What tracing and the console's history cost a reconcile, side by side in one run (issue 38): the Widget controller of
 * bench/controller-e2e-cpu.bench.ts (each reconcile a cache read and a status merge-patch, against
 * the stand-in API server in another process) with
 *   - off:  the controller's `tracing: false` (what an application without `@opentelemetry/api` gets,
 *           but for one context lookup per API call, which finds no span);
 *   - api:  tracing on, `@opentelemetry/api` installed, no SDK registered (no-op spans);
 *   - sdk:  `NodeTracerProvider` with a `BatchSpanProcessor` and the OTLP/HTTP exporter sending to
 *           a receiver in another process (three spans per reconcile: its trigger, itself, its patch).
 * Each round runs the modes in turn, in an order that turns each round; the medians are the figures. Reconciles per second are wall
 * clock (the whole pipeline, watch events to status writes); µs CPU per reconcile is our process's.
 *
 *   node --import tsx bench/tracing-overhead.bench.ts [objects=2000] [workers=8]
 *
 * Two further modes measure the console: its views without the per-object history (`console:
 * { history: false }`), and with it (each write diffed against the cached object and remembered).
 *
 * Figures (2000 Widgets, 8 workers, BENCH_ROUNDS=5, quiet 2-core machine, load 0.9–1.0):
 *
 *   mode                           reconciles/s   µs CPU/reconcile   CPU vs off
 *   off                                    5270                185         1.00
 *   API only (no SDK)                      5103                206         1.11
 *   SDK + batch OTLP/HTTP                  3337                326         1.77
 *   console, no history                    5246                190         1.03
 *   console + object history               3852                266         1.44
 *
 * A round moves by ±30% with the garbage the mode before it left; docs/observability.md reads them.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { KubeClient } from '../src/client/kube-client.js';
import { runWidgetRound } from './e2e/widget-controller.js';

const objects = Number(process.argv[2] ?? 2000);
const workers = Number(process.argv[3] ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const token = 'bench-token';

function childPort(args: string[]): { child: ReturnType<typeof spawn>; port: Promise<number> } {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = new Promise<number>((resolve) => {
    createInterface({ input: child.stdout! }).once('line', (line) =>
      resolve((JSON.parse(line) as { port: number }).port),
    );
  });
  return { child, port };
}

const dir = mkdtempSync(join(tmpdir(), 'tracing-bench-'));
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
const apiServer = childPort([
  '--import',
  'tsx',
  new URL('./e2e/fake-widget-apiserver.ts', import.meta.url).pathname,
  join(dir, 'cert.pem'),
  join(dir, 'key.pem'),
  token,
  String(objects),
]);
// An OTLP/HTTP receiver that reads and drops what arrives, in its own process as a collector would be.
const receiver = childPort([
  '-e',
  `let bytes = 0;
  require('node:http').createServer((q, s) => {
    if (q.method === 'GET') return s.end(JSON.stringify({ bytes }));
    q.on('data', (c) => (bytes += c.length));
    q.on('end', () => s.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  })
    .listen(0, '127.0.0.1', function () { console.log(JSON.stringify({ port: this.address().port })); });`,
]);
const server = `https://127.0.0.1:${await apiServer.port}`;
const otlpUrl = `http://127.0.0.1:${await receiver.port}/v1/traces`;
const kubeconfig = {
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'c', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
  users: [{ name: 'u', user: { token } }],
  contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'default' } }],
  'current-context': 'x',
};
const client = await KubeClient.fromKubeconfig({ kubeconfig });

type Mode = 'off' | 'api' | 'sdk' | 'console' | 'history';
const MODES: readonly Mode[] = ['off', 'api', 'sdk', 'console', 'history'];

/** One round of `mode`: reconciles per second (wall) and µs CPU per reconcile. */
async function measure(mode: Mode, round: number): Promise<{ perSecond: number; cpuUs: number }> {
  const provider =
    mode === 'sdk'
      ? new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: otlpUrl }))] })
      : undefined;
  provider?.register();
  try {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const doneAt = await runWidgetRound({
      client,
      objects,
      workers,
      round,
      tracing: mode === 'api' || mode === 'sdk',
      console: mode === 'console' ? 'views' : mode === 'history' ? 'history' : 'none',
    });
    const cpu = process.cpuUsage(cpu0);
    return { perSecond: objects / ((doneAt - t0) / 1000), cpuUs: (cpu.user + cpu.system) / objects };
  } finally {
    if (provider) {
      // Exports what is left (its cost counted above only in part, as a collector's lag would be).
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    }
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  console.log(`load ${loadavg()[0]!.toFixed(1)}; ${objects} Widgets, ${workers} workers, ${rounds} rounds`);
  // Warm-up: connections, discovery, JIT, each mode once.
  for (const mode of MODES) await measure(mode, 0);
  const figures = new Map<Mode, { perSecond: number[]; cpuUs: number[] }>(
    MODES.map((m) => [m, { perSecond: [], cpuUs: [] }]),
  );
  for (let round = 1; round <= rounds; round++) {
    const line: string[] = [];
    // The order turns each round: the first mode of a round pays for the last one's garbage and export.
    const order = MODES.map((_, i) => MODES[(i + round) % MODES.length]!);
    for (const mode of order) {
      const { perSecond, cpuUs } = await measure(mode, round);
      figures.get(mode)!.perSecond.push(perSecond);
      figures.get(mode)!.cpuUs.push(cpuUs);
      line.push(`${mode} ${perSecond.toFixed(0)}/s ${cpuUs.toFixed(0)} µs CPU`);
    }
    console.log(`round ${round}: ${line.join(', ')}`);
  }
  const received = (await (await fetch(otlpUrl)).json()) as { bytes: number };
  // Zero would mean the SDK rounds measured an exporter that sent nothing.
  if (!(received.bytes > 0)) throw new Error('the OTLP receiver got nothing from the SDK rounds');
  console.log(`the OTLP receiver got ${(received.bytes / 1e6).toFixed(1)} MB of spans`);
  const off = figures.get('off')!;
  console.log(`median of ${rounds} (load ${loadavg()[0]!.toFixed(1)} at the end):`);
  console.log('  mode                           reconciles/s   µs CPU/reconcile   CPU vs off');
  for (const mode of MODES) {
    const f = figures.get(mode)!;
    const label = {
      off: 'off',
      api: 'API only (no SDK)',
      sdk: 'SDK + batch OTLP/HTTP',
      console: 'console, no history',
      history: 'console + object history',
    }[mode];
    console.log(
      `  ${label.padEnd(30)} ${median(f.perSecond).toFixed(0).padStart(12)}   ${median(f.cpuUs).toFixed(0).padStart(16)}   ${(median(f.cpuUs) / median(off.cpuUs)).toFixed(2).padStart(10)}`,
    );
  }
} finally {
  await client.close();
  apiServer.child.kill('SIGTERM');
  receiver.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
