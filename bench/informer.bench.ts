/**
 * Informer cost against a real API server (TestEnv, watch cache on as in every cluster): our
 * `SharedInformer` (through `InformerFactory` + `clientListerWatcherFactory`) next to
 * `@kubernetes/client-node@1.4.0`'s `makeInformer`, on the same Widgets in the same run.
 *
 *   node --expose-gc --import tsx bench/informer.bench.ts [counts]      (counts: 10000,50000)
 *
 * Per count N (objects are created once, 32-way plain undici POSTs, and topped up for larger N):
 * - sync: start → synced (ours: `waitForSync`; client-node: `start()` resolved, which is after its
 *   list and the watch request);
 * - heap per object: heapUsed after gc once synced, minus heapUsed after gc before start, over N;
 * - relist: a ConfigMap write (so the informer's resourceVersion falls behind without it seeing an
 *   event), then a kube-apiserver restart: the restarted watch cache answers the resumed watch with
 *   410, so the informer must relist. heapUsed is sampled every 5 ms from the moment the server is
 *   back (ours: its connection, held mute by a TCP proxy across the restart, is reset; client-node:
 *   `start()` is called again) until the relist is in; peak vs steady (after gc) is printed both
 *   whole-process and minus the baseline (the heap before the informer existed). Our relist ms
 *   include the watcher's first backoff step (800 ms ± 20 %) after the reset.
 *   The sampler runs on the event loop, so a long synchronous step (client-node parses and applies
 *   its whole list in one go) is only seen at its end; a GC inside it would hide part of its peak.
 * - after the restart, a new Widget is created: does the informer deliver it by itself?
 *   client-node's informer stops on a non-410 error; its documented remedy is calling `start()`
 *   again from the error handler, which the bench does (after the check) to measure its relist.
 */
import * as k8s from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { KubeClient } from '../src/client/kube-client.js';
import type { Kubeconfig } from '../src/client/kubeconfig.js';
import type { KubeObject } from '../src/core/object-key.js';
import { clientListerWatcherFactory } from '../src/cache/client-lister-watcher.js';
import { InformerFactory } from '../src/cache/informer-factory.js';
import { until, viaPort } from '../src/cache/testing/int-helpers.js';
import { TcpProxy } from '../src/cache/testing/tcp-proxy.js';
import { readManifests } from '../src/testing/manifests.js';
import { TestEnv } from '../src/testing/test-env.js';

const COUNTS = (process.argv[2] ?? '10000,50000').split(',').map(Number).sort((a, b) => a - b);
const NS = 'bench';
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const WIDGETS_PATH = `/apis/example.com/v1/namespaces/${NS}/widgets`;
const CONCURRENCY = 32;
/** How long an informer gets to deliver a change made after the restart before it counts as lost. */
const DELIVERY_WINDOW_MS = 15_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function heapAfterGc(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

/** Samples heapUsed every 5 ms until stopped; returns the peak. */
function heapSampler(): { stop(): number } {
  let peak = process.memoryUsage().heapUsed;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().heapUsed);
    },
  };
}

interface Row {
  n: number;
  impl: string;
  syncMs: number;
  bytesPerObject: number;
  baseMb: number;
  steadyMb: number;
  peakMb: number;
  relistMs: number;
  stoppedOnError: string;
  deliveredAfterRestartMs: number | undefined;
}

const mb = (b: number): number => b / 1024 / 1024;

async function createWidgets(env: TestEnv, from: number, to: number): Promise<number> {
  const agent = new Agent({ connections: CONCURRENCY, connect: { ca: env.caPem } });
  const started = Date.now();
  let next = from;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= to) return;
      const body = JSON.stringify({ ...WIDGET, metadata: { name: `w-${i}` }, spec: { size: (i % 10) + 1, color: 'red' } });
      for (let attempt = 0; ; attempt++) {
        const res = await request(`${env.server}${WIDGETS_PATH}`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${env.adminToken}`, 'content-type': 'application/json' },
          body,
        });
        await res.body.dump();
        if (res.statusCode === 201 || res.statusCode === 409) break;
        if (attempt > 5) throw new Error(`create w-${i}: ${res.statusCode}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await agent.close();
  return Date.now() - started;
}

/** A write the Widget informers do not see, so their resourceVersion is older than the restarted watch cache. */
async function writeElsewhere(env: TestEnv, tag: string): Promise<void> {
  const res = await env.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `bump-${tag}` } });
  if (res.status !== 201) throw new Error(`configmap: ${res.status}`);
}

async function createMarker(env: TestEnv, name: string): Promise<void> {
  const res = await env.request('POST', WIDGETS_PATH, { ...WIDGET, metadata: { name }, spec: { size: 1 } });
  if (res.status !== 201) throw new Error(`marker: ${res.status}`);
}

/** Resolves with the ms until `cond` holds, or undefined after `windowMs`. */
async function timeUntil(cond: () => boolean, windowMs: number): Promise<number | undefined> {
  const t0 = Date.now();
  try {
    await until(cond, windowMs, 'delivery', 10);
    return Date.now() - t0;
  } catch {
    return undefined;
  }
}

async function benchOurs(env: TestEnv, n: number): Promise<Row> {
  // Through a TCP proxy that goes mute across the restart, so the relist is measured from the
  // moment the server is back (as for client-node's start()), without the restart's own garbage.
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: Number(new URL(env.server).port) });
  const base = heapAfterGc();
  const client = await KubeClient.fromKubeconfig({ kubeconfig: viaPort(env.kubeconfig, proxy.port) as unknown as Kubeconfig });
  const factory = new InformerFactory(clientListerWatcherFactory(client));
  const informer = factory.informerFor<KubeObject>({ ...WIDGET, namespace: NS });
  const stop = new AbortController();
  const t0 = performance.now();
  const run = factory.start(stop.signal);
  await informer.waitForSync(stop.signal);
  const syncMs = performance.now() - t0;
  if (informer.reader.size < n) throw new Error(`ours: ${informer.reader.size} objects, expected ${n}`);
  const size = informer.reader.size;
  const steady = heapAfterGc();

  await writeElsewhere(env, `ours-${n}`);
  const lists = informer.health().lists;
  proxy.freeze();
  await env.restartApiServer();
  heapAfterGc();
  const sampler = heapSampler();
  const r0 = performance.now();
  proxy.thaw();
  proxy.cut(); // a reset: the watcher backs off (800 ms ± 20 %), resumes, gets 410 and relists
  await until(() => informer.health().lists > lists && informer.health().state === 'watching', 120_000, 'our relist', 5);
  const relistMs = performance.now() - r0;
  const peak = sampler.stop();

  await createMarker(env, `marker-ours-${n}`);
  const deliveredAfterRestartMs = await timeUntil(() => informer.reader.has(`${NS}/marker-ours-${n}`), DELIVERY_WINDOW_MS);
  stop.abort();
  await run;
  await client.close();
  await proxy.close();
  return {
    n: size,
    impl: 'operator-runtime',
    syncMs,
    bytesPerObject: (steady - base) / size,
    baseMb: mb(base),
    steadyMb: mb(steady),
    peakMb: mb(peak),
    relistMs,
    stoppedOnError: 'no',
    deliveredAfterRestartMs,
  };
}

async function benchClientNode(env: TestEnv, n: number): Promise<Row> {
  const base = heapAfterGc();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(env.kubeconfigPath);
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  let listsDone = 0;
  const listFn = async (): Promise<k8s.KubernetesListObject<k8s.KubernetesObject>> => {
    const list = (await api.listNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: NS, plural: 'widgets' })) as k8s.KubernetesListObject<k8s.KubernetesObject>;
    listsDone++;
    return list;
  };
  const informer = k8s.makeInformer(kc, WIDGETS_PATH, listFn);
  const errors: unknown[] = [];
  informer.on('error', (err: unknown) => errors.push(err));
  const t0 = performance.now();
  await informer.start();
  const syncMs = performance.now() - t0;
  const size = informer.list(NS).length;
  if (size < n) throw new Error(`client-node: ${size} objects, expected ${n}`);
  const steady = heapAfterGc();

  await writeElsewhere(env, `cn-${n}`);
  const sampler = heapSampler();
  const r0 = performance.now();
  const listsBefore = listsDone;
  await env.restartApiServer();
  // Either it relists by itself (a 410 from the restarted watch cache) or it has stopped on an error.
  await until(() => listsDone > listsBefore || errors.length > 0, 60_000, 'client-node to relist or fail', 5);
  const stopped = errors.length > 0;
  const firstError = stopped ? describeError(errors[0]) : '';
  await createMarker(env, `marker-cn-${n}`);
  const deliveredAfterRestartMs = await timeUntil(() => informer.get(`marker-cn-${n}`, NS) !== undefined, stopped ? DELIVERY_WINDOW_MS : 60_000);
  let relistMs = performance.now() - r0;
  let peak = sampler.stop();
  if (stopped) {
    // What its users are told to do: call start() again from the error handler. From the old
    // resourceVersion, so the restarted watch cache answers 410 and it relists.
    const again = heapSampler();
    const a0 = performance.now();
    const listsNow = listsDone;
    await informer.start();
    await until(() => listsDone > listsNow, 60_000, 'client-node relist after start()', 5);
    await new Promise((r) => setImmediate(r)); // its list is applied synchronously right after listFn resolves
    relistMs = performance.now() - a0;
    peak = again.stop();
  }
  await informer.stop();
  return {
    n: size,
    impl: 'client-node 1.4.0',
    syncMs,
    bytesPerObject: (steady - base) / size,
    baseMb: mb(base),
    steadyMb: mb(steady),
    peakMb: mb(peak),
    relistMs,
    stoppedOnError: stopped ? `yes: ${firstError}` : 'no',
    deliveredAfterRestartMs,
  };
}

function describeError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const e = err as { code?: unknown; statusCode?: unknown; message?: unknown; type?: unknown };
  return [e.code ?? e.statusCode ?? e.type, typeof e.message === 'string' ? e.message.slice(0, 60) : ''].filter(Boolean).join(' ');
}

const fmt = (x: number, d = 0): string => x.toFixed(d);

async function main(): Promise<void> {
  const env = await TestEnv.start({ crds: await readManifests(fileURLToPath(new URL('../examples/quickstart/widget-crd.yaml', import.meta.url))) });
  const rows: Row[] = [];
  try {
    const ns = await env.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    if (ns.status !== 201) throw new Error(`namespace: ${ns.status}`);
    let have = 0;
    for (const n of COUNTS) {
      const ms = await createWidgets(env, have, n);
      console.error(`created widgets ${have}..${n} in ${ms} ms (${fmt(((n - have) / ms) * 1000)}/s)`);
      have = n;
      // Markers from earlier rounds are objects too: the informers see n + a few.
      rows.push(await benchOurs(env, n));
      console.error(JSON.stringify(rows.at(-1)));
      rows.push(await benchClientNode(env, n));
      console.error(JSON.stringify(rows.at(-1)));
    }
  } finally {
    await env.stop();
  }
  const header = ['objects', 'informer', 'sync ms', 'heap B/obj', 'steady MB', 'relist peak MB', 'peak/steady', 'peak/steady − base', 'relist ms', 'stopped on error', 'change after restart'];
  const lines = rows.map((r) => [
    String(r.n),
    r.impl,
    fmt(r.syncMs),
    fmt(r.bytesPerObject),
    fmt(r.steadyMb, 1),
    fmt(r.peakMb, 1),
    `${fmt(r.peakMb / r.steadyMb, 2)}×`,
    `${fmt((r.peakMb - r.baseMb) / (r.steadyMb - r.baseMb), 2)}×`,
    fmt(r.relistMs),
    r.stoppedOnError,
    r.deliveredAfterRestartMs === undefined ? `lost (not in ${DELIVERY_WINDOW_MS / 1000} s)` : `${fmt(r.deliveredAfterRestartMs)} ms`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(row(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const l of lines) console.log(row(l));
  console.log(`node ${process.version}, relist forced by a kube-apiserver restart (watch cache on) after a write the informer did not see`);
}

await main();
