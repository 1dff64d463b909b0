/**
 * Informer cost against a real API server (TestEnv, watch cache on as in every cluster): our
 * `SharedInformer` (through `InformerFactory` + `clientListerWatcherFactory`) next to
 * `@kubernetes/client-node@1.4.0`'s `makeInformer`, on the same Widgets in the same run.
 *
 *   node --expose-gc --import tsx bench/informer.bench.ts [counts]      (counts: 10000,50000)
 *
 * Environment: INFORMER_ROUNDS (measurements per count and informer, default 1),
 * INFORMER_DELIVERY_WINDOW_MS (default 15000), BENCH_JSON_OUT (raw rows as JSON, for bench:report),
 * INFORMER_IMPLS (comma-separated subset of `ours,baseline,client-node,client-node-2,plain-list`;
 * default `ours,client-node`), INFORMER_BASELINE (a checkout of an older commit with its
 * node_modules: `baseline` runs our informer from there, in the same run and against the same
 * server, to measure a change side by side), INFORMER_CLIENT_NODE_2 (a folder where
 * `npm i @kubernetes/client-node@2` was run: `client-node-2` measures that version's informer with
 * the same code as `client-node`, which is the 1.4.0 devDependency; not a project dependency).
 * Node 24, as the issue's comparison asks: run this file with the binary
 * `scripts/install-node24.sh | tail -n1` prints; the children use the same binary.
 *
 * `plain-list` is the floor a sync is compared with: one GET of the whole collection (no limit,
 * no resourceVersion: a quorum read, as `kubectl get`), its body read and `JSON.parse`d; sync = that
 * time, heap per object = the parsed list held as it is (managedFields included). It has no relist.
 *
 * Per count N (objects are created once, 32-way plain undici POSTs, and topped up for larger N):
 * - sync: start → synced (ours: `waitForSync`; client-node: `start()` resolved, which is after its
 *   list and the watch request);
 * - heap per object: heapUsed after gc once synced (and settled, see `settle`), minus heapUsed
 *   after gc before start, over N;
 * - relist: a ConfigMap write (so the informer's resourceVersion falls behind without it seeing an
 *   event), then a kube-apiserver restart: the restarted watch cache answers the resumed watch with
 *   410, so the informer must relist. heapUsed is sampled every 5 ms from the moment the server is
 *   back (ours: its connection, held mute by a TCP proxy across the restart, is reset; client-node:
 *   `start()` is called again) until the relist is in; peak vs steady (after gc) is printed both
 *   whole-process and minus the baseline (the heap before the informer existed). Our relist ms
 *   include the watcher's first backoff step (800 ms ± 20 %) after the reset. Sampled heapUsed
 *   includes garbage not yet collected (young-generation slack), so a second relist weighs live
 *   data only: gc as each list response arrives (before the informer takes it) and at the end.
 *   The sampler runs on the event loop, so a long synchronous step (client-node parses and applies
 *   its whole list in one go) is only seen at its end; a GC inside it would hide part of its peak.
 * - after the restart, a new Widget is created: does the informer deliver it by itself?
 *   client-node's informer stops on a non-410 error; its documented remedy is calling `start()`
 *   again from the error handler, which the bench does (after the check) to measure its relist.
 */
import * as k8sDev from '@kubernetes/client-node';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { KubeClient } from '../src/client/kube-client.js';
import type { Kubeconfig } from '../src/client/kubeconfig.js';
import type { KubeObject } from '../src/core/object-key.js';
import { clientListerWatcherFactory } from '../src/cache/client-lister-watcher.js';
import { InformerFactory } from '../src/cache/informer-factory.js';
import { until, viaPort } from '../src/cache/testing/int-helpers.js';
import { TcpProxy } from '../src/cache/testing/tcp-proxy.js';
import { readManifests } from '../src/testing/control-plane/manifests.js';
import { TestEnv, type KubeconfigObject } from '../src/testing/control-plane/test-env.js';
import { writeBenchJson } from './report/bench-output.js';

const CHILD = process.argv[2] === '--child';
const COUNTS = (CHILD ? '' : (process.argv[2] ?? '10000,50000'))
  .split(',')
  .filter(Boolean)
  .map(Number)
  .sort((a, b) => a - b);
const NS = 'bench';
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const WIDGETS_PATH = `/apis/example.com/v1/namespaces/${NS}/widgets`;
const CONCURRENCY = 32;
/** How long an informer gets to deliver a change made after the restart before it counts as lost. */
const DELIVERY_WINDOW_MS = Number(process.env.INFORMER_DELIVERY_WINDOW_MS ?? 15_000);
/** Measurements per count and informer (`INFORMER_ROUNDS`), alternating the two, for the report's spread. */
const ROUNDS = Number(process.env.INFORMER_ROUNDS ?? 1);
/** In a child: which round it measures; names of the objects it creates carry it so rounds do not collide. */
const ROUND_SUFFIX = CHILD && Number(process.argv[5] ?? 1) > 1 ? `-r${process.argv[5]}` : '';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

/**
 * What a measurement needs from the control plane. Each measurement runs in a fresh child process
 * (so one informer's leftovers, such as a stopped informer's socket, cannot inflate another's
 * baseline); the parent owns the TestEnv and restarts the API server when a child asks.
 */
interface BenchEnv {
  readonly server: string;
  readonly kubeconfig: KubeconfigObject;
  readonly kubeconfigPath: string;
  request(method: 'POST', path: string, body: unknown): Promise<{ status: number }>;
  /** One GET of `path`, body parsed with JSON.parse. */
  getJson(path: string): Promise<unknown>;
  restartApiServer(): Promise<void>;
}

interface EnvInfo {
  readonly server: string;
  readonly kubeconfig: KubeconfigObject;
  readonly kubeconfigPath: string;
  readonly caPem: string;
  readonly adminToken: string;
}

type ParentMessage = { readonly type: 'restarted' };
type ChildMessage = { readonly type: 'restart' } | { readonly type: 'result'; readonly row: Row };

function childEnv(info: EnvInfo): BenchEnv {
  const agent = new Agent({ connect: { ca: info.caPem } });
  let waiting: (() => void) | undefined;
  process.on('message', (m: ParentMessage) => {
    if (m.type === 'restarted') waiting?.();
  });
  return {
    server: info.server,
    kubeconfig: info.kubeconfig,
    kubeconfigPath: info.kubeconfigPath,
    async request(method, path, body) {
      const res = await request(`${info.server}${path}`, {
        method,
        dispatcher: agent,
        headers: { authorization: `Bearer ${info.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.body.dump();
      return { status: res.statusCode };
    },
    async getJson(path) {
      const res = await request(`${info.server}${path}`, {
        method: 'GET',
        dispatcher: agent,
        headers: { authorization: `Bearer ${info.adminToken}`, accept: 'application/json' },
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode}`);
      return JSON.parse(text);
    },
    restartApiServer() {
      return new Promise<void>((resolve) => {
        waiting = resolve;
        process.send!({ type: 'restart' } satisfies ChildMessage);
      });
    },
  };
}

/**
 * Lets the informer finish what follows its sync (ours: open the watch; both: let the HTTP layer
 * drop the last list response). Measured: right at sync the whole response text of a list the
 * watch cache served in one piece (~460 B per object) is still referenced, and is gone a moment
 * later, so a heap reading taken at once would charge it to the cache.
 */
async function settle(): Promise<void> {
  await new Promise((r) => setTimeout(r, 250));
}

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
  /** This process's CPU time (user + system) from start to synced: the client's own cost, less exposed to a busy server than wall time. */
  syncCpuMs: number;
  bytesPerObject: number;
  baseMb: number;
  steadyMb: number;
  peakMb: number;
  /** Max heapUsed after gc taken as each list response arrives during a second relist: live data only. */
  livePeakMb: number;
  relistMs: number;
  stoppedOnError: string;
  deliveredAfterRestartMs: number | undefined;
}

const mb = (b: number): number => b / 1024 / 1024;
const cpuMsSince = (from: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};

async function createWidgets(env: TestEnv, from: number, to: number): Promise<number> {
  const agent = new Agent({ connections: CONCURRENCY, connect: { ca: env.caPem } });
  const started = Date.now();
  let next = from;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= to) return;
      const body = JSON.stringify({
        ...WIDGET,
        metadata: { name: `w-${i}` },
        spec: { size: (i % 10) + 1, color: 'red' },
      });
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
async function writeElsewhere(env: BenchEnv, tag: string): Promise<void> {
  const res = await env.request('POST', `/api/v1/namespaces/${NS}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `bump-${tag}` },
  });
  if (res.status !== 201) throw new Error(`configmap: ${res.status}`);
}

async function createMarker(env: BenchEnv, name: string): Promise<void> {
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

async function benchOurs(env: BenchEnv, n: number): Promise<Row> {
  // Through a TCP proxy that goes mute across the restart, so the relist is measured from the
  // moment the server is back (as for client-node's start()), without the restart's own garbage.
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: Number(new URL(env.server).port) });
  const base = heapAfterGc();
  const client = await KubeClient.fromKubeconfig({
    kubeconfig: viaPort(env.kubeconfig, proxy.port) as unknown as Kubeconfig,
  });
  // As each list page arrives (before the informer takes it), optionally weigh what is live.
  let onPage: (() => void) | undefined;
  const lwFactory = clientListerWatcherFactory(client);
  const factory = new InformerFactory((spec) => {
    const lw = lwFactory(spec);
    return {
      list: async (opts) => {
        const page = await lw.list(opts);
        onPage?.();
        return page;
      },
      watch: (opts) => lw.watch(opts),
    };
  });
  const informer = factory.informerFor<KubeObject>({ ...WIDGET, namespace: NS });
  const stop = new AbortController();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const run = factory.start(stop.signal);
  await informer.waitForSync(stop.signal);
  const syncMs = performance.now() - t0;
  const syncCpuMs = cpuMsSince(cpu0);
  if (informer.reader.size < n) throw new Error(`ours: ${informer.reader.size} objects, expected ${n}`);
  const size = informer.reader.size;
  await settle();
  const steady = heapAfterGc();

  await writeElsewhere(env, `ours-${n}${ROUND_SUFFIX}`);
  const lists = informer.health().lists;
  proxy.freeze();
  await env.restartApiServer();
  heapAfterGc();
  const sampler = heapSampler();
  const r0 = performance.now();
  proxy.thaw();
  proxy.cut(); // a reset: the watcher backs off (800 ms ± 20 %), resumes, gets 410 and relists
  await until(
    () => informer.health().lists > lists && informer.health().state === 'watching',
    120_000,
    'our relist',
    5,
  );
  const relistMs = performance.now() - r0;
  const peak = sampler.stop();

  // The same again, weighing only live data: gc as each page arrives (slows this relist down).
  await writeElsewhere(env, `ours-live-${n}${ROUND_SUFFIX}`);
  const lists2 = informer.health().lists;
  proxy.freeze();
  await env.restartApiServer();
  let livePeak = heapAfterGc();
  onPage = () => {
    livePeak = Math.max(livePeak, heapAfterGc());
  };
  proxy.thaw();
  proxy.cut();
  await until(
    () => informer.health().lists > lists2 && informer.health().state === 'watching',
    120_000,
    'our second relist',
    5,
  );
  onPage = undefined;
  livePeak = Math.max(livePeak, heapAfterGc());

  await createMarker(env, `marker-ours-${n}${ROUND_SUFFIX}`);
  const deliveredAfterRestartMs = await timeUntil(
    () => informer.reader.has(`${NS}/marker-ours-${n}${ROUND_SUFFIX}`),
    DELIVERY_WINDOW_MS,
  );
  stop.abort();
  await run;
  await client.close();
  await proxy.close();
  return {
    n: size,
    impl: 'operator-runtime',
    syncMs,
    syncCpuMs,
    bytesPerObject: (steady - base) / size,
    baseMb: mb(base),
    steadyMb: mb(steady),
    peakMb: mb(peak),
    livePeakMb: mb(livePeak),
    relistMs,
    stoppedOnError: 'no',
    deliveredAfterRestartMs,
  };
}

type ClientNode = typeof k8sDev;

/** client-node 2.x from INFORMER_CLIENT_NODE_2 (its informer API is the same shape as 1.4.0's). */
async function clientNode2(): Promise<ClientNode> {
  const dir = process.env.INFORMER_CLIENT_NODE_2;
  if (!dir) throw new Error('INFORMER_IMPLS has client-node-2: set INFORMER_CLIENT_NODE_2 (see the top of this file)');
  const entry = join(dir, 'node_modules/@kubernetes/client-node/dist/index.js');
  return (await import(pathToFileURL(entry).href)) as ClientNode;
}

async function benchPlainList(env: BenchEnv, n: number): Promise<Row> {
  const base = heapAfterGc();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const list = (await env.getJson(WIDGETS_PATH)) as { items: unknown[] };
  const syncMs = performance.now() - t0;
  const syncCpuMs = cpuMsSince(cpu0);
  const size = list.items.length;
  if (size < n) throw new Error(`plain list: ${size} objects, expected ${n}`);
  await settle();
  const steady = heapAfterGc();
  if (list.items.length !== size) throw new Error('unreachable: keeps the list alive until measured');
  return {
    n: size,
    impl: 'plain list (floor)',
    syncMs,
    syncCpuMs,
    bytesPerObject: (steady - base) / size,
    baseMb: mb(base),
    steadyMb: mb(steady),
    peakMb: NaN,
    livePeakMb: NaN,
    relistMs: NaN,
    stoppedOnError: '-',
    deliveredAfterRestartMs: undefined,
  };
}

async function benchClientNode(env: BenchEnv, n: number, k8s: ClientNode): Promise<Row> {
  const base = heapAfterGc();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(env.kubeconfigPath);
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  let listsDone = 0;
  let onList: (() => void) | undefined;
  const listFn = async (): Promise<k8sDev.KubernetesListObject<k8sDev.KubernetesObject>> => {
    const list = (await api.listNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: NS,
      plural: 'widgets',
    })) as k8sDev.KubernetesListObject<k8sDev.KubernetesObject>;
    onList?.();
    listsDone++;
    return list;
  };
  const informer = k8s.makeInformer(kc, WIDGETS_PATH, listFn);
  const errors: unknown[] = [];
  informer.on('error', (err: unknown) => errors.push(err));
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await informer.start();
  const syncMs = performance.now() - t0;
  const syncCpuMs = cpuMsSince(cpu0);
  const size = informer.list(NS).length;
  if (size < n) throw new Error(`client-node: ${size} objects, expected ${n}`);
  await settle();
  const steady = heapAfterGc();

  await writeElsewhere(env, `cn-${n}${ROUND_SUFFIX}`);
  const sampler = heapSampler();
  const r0 = performance.now();
  const listsBefore = listsDone;
  await env.restartApiServer();
  // Either it relists by itself (a 410 from the restarted watch cache) or it has stopped on an error.
  await until(() => listsDone > listsBefore || errors.length > 0, 60_000, 'client-node to relist or fail', 5);
  const stopped = errors.length > 0;
  const firstError = stopped ? describeError(errors[0]) : '';
  await createMarker(env, `marker-cn-${n}${ROUND_SUFFIX}`);
  const deliveredAfterRestartMs = await timeUntil(
    () => informer.get(`marker-cn-${n}${ROUND_SUFFIX}`, NS) !== undefined,
    stopped ? DELIVERY_WINDOW_MS : 60_000,
  );
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

  // The same again, weighing only live data: gc when the list response arrives and after it is applied.
  await writeElsewhere(env, `cn-live-${n}${ROUND_SUFFIX}`);
  const errorsBefore = errors.length;
  const listsBefore2 = listsDone;
  await env.restartApiServer();
  await until(
    () => listsDone > listsBefore2 || errors.length > errorsBefore,
    60_000,
    'client-node to relist or fail again',
    5,
  );
  let livePeak = heapAfterGc();
  onList = () => {
    livePeak = Math.max(livePeak, heapAfterGc());
  };
  const listsNow2 = listsDone;
  if (errors.length > errorsBefore) await informer.start();
  await until(() => listsDone > listsNow2, 60_000, 'client-node second relist', 5);
  await new Promise((r) => setImmediate(r));
  onList = undefined;
  livePeak = Math.max(livePeak, heapAfterGc());
  await informer.stop();
  return {
    n: size,
    impl: `client-node ${clientNodeVersion(k8s)}`,
    syncMs,
    syncCpuMs,
    bytesPerObject: (steady - base) / size,
    baseMb: mb(base),
    steadyMb: mb(steady),
    peakMb: mb(peak),
    livePeakMb: mb(livePeak),
    relistMs,
    stoppedOnError: stopped ? `yes: ${firstError}` : 'no',
    deliveredAfterRestartMs,
  };
}

function clientNodeVersion(k8s: ClientNode): string {
  return k8s === k8sDev ? '1.4.0' : '2.x';
}

function describeError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const e = err as { code?: unknown; statusCode?: unknown; message?: unknown; type?: unknown };
  return [e.code ?? e.statusCode ?? e.type, typeof e.message === 'string' ? e.message.slice(0, 60) : '']
    .filter(Boolean)
    .join(' ');
}

const fmt = (x: number, d = 0): string => x.toFixed(d);

/** Runs one measurement in a fresh process, serving its restart requests. */
type Impl = 'ours' | 'baseline' | 'client-node' | 'client-node-2' | 'plain-list';
const BASELINE = process.env.INFORMER_BASELINE;
const IMPLS = (process.env.INFORMER_IMPLS ?? 'ours,client-node').split(',').filter(Boolean) as Impl[];
if (IMPLS.includes('baseline') && !BASELINE)
  throw new Error('INFORMER_IMPLS has baseline: set INFORMER_BASELINE to an older checkout');

function measure(env: TestEnv, impl: Impl, n: number, round = 1): Promise<Row> {
  const info: EnvInfo = {
    server: env.server,
    kubeconfig: env.kubeconfig,
    kubeconfigPath: env.kubeconfigPath,
    caPem: env.caPem,
    adminToken: env.adminToken,
  };
  // The baseline is the same bench file in the older checkout, measuring its own `ours`; its round
  // number is offset so the objects it names do not collide with ours.
  const script = impl === 'baseline' ? `${BASELINE}/bench/informer.bench.ts` : fileURLToPath(import.meta.url);
  const args =
    impl === 'baseline'
      ? ['--child', 'ours', String(n), String(round + 1000)]
      : ['--child', impl, String(n), String(round)];
  const child = fork(script, args, {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: { ...process.env, INFORMER_BENCH_ENV: JSON.stringify(info) },
  });
  return new Promise<Row>((resolve, reject) => {
    let row: Row | undefined;
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'result') row = impl === 'baseline' ? { ...m.row, impl: `${m.row.impl} (baseline)` } : m.row;
      else
        env.restartApiServer().then(
          () => child.send({ type: 'restarted' } satisfies ParentMessage),
          (err: unknown) => {
            child.kill();
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
    });
    child.on('exit', (code) => (row ? resolve(row) : reject(new Error(`${impl} ${n}: child exited with ${code}`))));
  });
}

async function child(): Promise<void> {
  const [impl, n] = [process.argv[3], Number(process.argv[4])];
  const env = childEnv(JSON.parse(process.env.INFORMER_BENCH_ENV!) as EnvInfo);
  const row =
    impl === 'ours'
      ? await benchOurs(env, n)
      : impl === 'plain-list'
        ? await benchPlainList(env, n)
        : await benchClientNode(env, n, impl === 'client-node-2' ? await clientNode2() : k8sDev);
  process.send!({ type: 'result', row } satisfies ChildMessage);
  process.disconnect();
  // Leftover sockets (client-node's) must not keep the child alive.
  setTimeout(() => process.exit(0), 100).unref();
}

async function main(): Promise<void> {
  const env = await TestEnv.start({
    crds: await readManifests(fileURLToPath(new URL('../examples/quickstart/widget-crd.yaml', import.meta.url))),
  });
  const rows: Row[] = [];
  const jsonRows: (Row & { count: number; round: number })[] = [];
  try {
    const ns = await env.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NS },
    });
    if (ns.status !== 201) throw new Error(`namespace: ${ns.status}`);
    let have = 0;
    for (const n of COUNTS) {
      const ms = await createWidgets(env, have, n);
      console.error(`created widgets ${have}..${n} in ${ms} ms (${fmt(((n - have) / ms) * 1000)}/s)`);
      have = n;
      // Markers from earlier measurements are objects too: the informers see n + a few.
      for (let round = 1; round <= ROUNDS; round++) {
        for (const impl of IMPLS) {
          rows.push(await measure(env, impl, n, round));
          jsonRows.push({ count: n, round, ...rows.at(-1)! });
          console.error(JSON.stringify(rows.at(-1)));
        }
      }
    }
  } finally {
    await env.stop();
  }
  writeBenchJson({
    bench: 'informer',
    counts: COUNTS,
    rounds: ROUNDS,
    deliveryWindowMs: DELIVERY_WINDOW_MS,
    rows: jsonRows,
  });
  const header = [
    'objects',
    'informer',
    'sync ms',
    'sync CPU ms',
    'heap B/obj',
    'steady MB',
    'relist peak MB',
    'peak/steady',
    'cache: peak/steady',
    'cache: live peak/steady',
    'relist ms',
    'stopped on error',
    'change after restart',
  ];
  // The plain list has no relist: its relist cells are NaN (null once sent from its child) and printed as '-'.
  const none = (x: number | null): boolean => x === null || Number.isNaN(x);
  const dash = (x: number, text: () => string): string => (none(x) ? '-' : text());
  const lines = rows.map((r) => [
    String(r.n),
    r.impl,
    fmt(r.syncMs),
    fmt(r.syncCpuMs),
    fmt(r.bytesPerObject),
    fmt(r.steadyMb, 1),
    dash(r.peakMb, () => fmt(r.peakMb, 1)),
    dash(r.peakMb, () => `${fmt(r.peakMb / r.steadyMb, 2)}×`),
    dash(r.peakMb, () => `${fmt((r.peakMb - r.baseMb) / (r.steadyMb - r.baseMb), 2)}×`),
    dash(r.livePeakMb, () => `${fmt((r.livePeakMb - r.baseMb) / (r.steadyMb - r.baseMb), 2)}×`),
    dash(r.relistMs, () => fmt(r.relistMs)),
    r.stoppedOnError,
    none(r.relistMs)
      ? '-'
      : r.deliveredAfterRestartMs === undefined
        ? `lost (not in ${DELIVERY_WINDOW_MS / 1000} s)`
        : `${fmt(r.deliveredAfterRestartMs)} ms`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(row(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const l of lines) console.log(row(l));
  if (ROUNDS > 1) {
    // Medians per count and informer: rounds alternate the informers, so drift in the machine's load hits each alike.
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const n of COUNTS) {
      for (const impl of new Set(rows.map((r) => r.impl))) {
        const rs = jsonRows.filter((r) => r.count === n && r.impl === impl);
        if (rs.length === 0) continue;
        console.log(
          `median of ${rs.length}, ${n} objects, ${impl}: sync ${fmt(median(rs.map((r) => r.syncMs)))} ms, sync CPU ${fmt(median(rs.map((r) => r.syncCpuMs)))} ms, relist ${fmt(median(rs.map((r) => r.relistMs)))} ms`,
        );
      }
    }
  }
  // Each informer's sync against the plain-list floor of the same count (medians when ROUNDS > 1).
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const n of COUNTS) {
    const floor = jsonRows.filter((r) => r.count === n && r.impl === 'plain list (floor)').map((r) => r.syncMs);
    if (floor.length === 0) continue;
    for (const impl of new Set(rows.map((r) => r.impl))) {
      if (impl === 'plain list (floor)') continue;
      const rs = jsonRows.filter((r) => r.count === n && r.impl === impl);
      if (rs.length > 0)
        console.log(
          `${n} objects, ${impl}: sync / plain-list floor = ${fmt(med(rs.map((r) => r.syncMs)) / med(floor), 2)}×`,
        );
    }
  }
  console.log(
    `node ${process.version}; relist forced by a kube-apiserver restart (watch cache on) after a write the informer did not see.`,
  );
  console.log(
    'cache: … = (heap − baseline before the informer) / (steady − baseline); "peak" is sampled heapUsed every 5 ms (garbage included),',
  );
  console.log('"live peak" the largest heapUsed after gc as each list response arrived, in a second relist.');
}

await (CHILD ? child() : main());
