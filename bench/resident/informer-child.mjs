/**
 * One measured process of bench/informer-resident.bench.ts, in plain JavaScript over the built
 * package (`dist/`, as an operator runs it): no TypeScript loader in the process, whose transpiled
 * code and source maps would count as the informer's. Syncs one informer over the loopback list
 * server on `port` (list-server.ts), samples resident memory from a worker thread (which a long
 * synchronous parse on the main thread does not stop) from start to sync, lets it settle, and
 * prints one JSON line. Modes: `ours` (SharedInformer through KubeClient from RESIDENT_SRC's
 * `dist/` — a checkout's root, default this one — so a baseline runs side by side), `bare`
 * (nothing loaded: the runtime's own resident memory), `client-node` (@kubernetes/client-node's
 * makeInformer from RESIDENT_CLIENT_NODE, a folder where `npm i @kubernetes/client-node@2` ran).
 *
 *   node --expose-gc bench/resident/informer-child.mjs <port> <objects> <mode>
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [portArg, objectsArg, mode = 'ours'] = process.argv.slice(2);
const port = Number(portArg);
const objects = Number(objectsArg);
const gc = globalThis.gc;
/** How long after the sync the settled figures are taken. */
const SETTLE_MS = Number(process.env.RESIDENT_SETTLE_MS ?? 3000);
const SRC = process.env.RESIDENT_SRC ?? fileURLToPath(new URL('../../', import.meta.url));
const load = (rel) => import(pathToFileURL(join(SRC, 'dist', rel)).href);

const sampler = new Worker(
  `const { parentPort } = require('node:worker_threads');
   let peak = 0;
   const t = setInterval(() => { const r = process.memoryUsage.rss(); if (r > peak) peak = r; }, 2);
   parentPort.on('message', () => { clearInterval(t); parentPort.postMessage(peak); });`,
  { eval: true },
);
const peakRss = () =>
  new Promise((resolve) => {
    sampler.once('message', resolve);
    sampler.postMessage('stop');
  });

async function syncOurs() {
  const { KubeClient } = await load('client/kube-client.js');
  const { StaticTokenCredential } = await load('client/credentials.js');
  const { makeTlsConfig } = await load('client/tls-config.js');
  const { clientListerWatcher } = await load('cache/client-lister-watcher.js');
  const { SharedInformer } = await load('cache/informer.js');
  const client = new KubeClient({
    server: `http://127.0.0.1:${port}`,
    tls: makeTlsConfig({}),
    credential: new StaticTokenCredential('t'),
    namespace: 'default',
  });
  const informer = new SharedInformer(clientListerWatcher(client, { apiVersion: 'example.com/v1', kind: 'Database' }), {
    name: 'databases',
  });
  const ctl = new AbortController();
  const running = informer.start(ctl.signal);
  await informer.waitForSync(ctl.signal);
  return {
    size: informer.reader.size,
    stop: async () => {
      ctl.abort();
      await running;
      await client.close();
    },
  };
}

async function syncClientNode() {
  const dir = process.env.RESIDENT_CLIENT_NODE;
  if (!dir)
    throw new Error('mode client-node: set RESIDENT_CLIENT_NODE (a folder where npm i @kubernetes/client-node@2 ran)');
  const k8s = await import(pathToFileURL(join(dir, 'node_modules/@kubernetes/client-node/dist/index.js')).href);
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const listFn = () => api.listClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'databases' });
  const informer = k8s.makeInformer(kc, '/apis/example.com/v1/databases', listFn);
  informer.on('error', () => {});
  await informer.start();
  return { size: informer.list().length, stop: () => informer.stop() };
}

await sleep(200);
gc();
const before = process.memoryUsage();
const started = performance.now();
const run = mode === 'ours' ? await syncOurs() : mode === 'client-node' ? await syncClientNode() : undefined;
const syncMs = performance.now() - started;
if (run && run.size !== objects) throw new Error(`${mode}: synced ${run.size} of ${objects}`);
const peak = await peakRss();
await sleep(SETTLE_MS);
gc();
gc();
const settled = process.memoryUsage();
// V8 12+ (Node 22+): what the manager's idle heap compaction (a last-resort GC) gives back.
let compactedRss;
if (Number(process.versions.v8.split('.')[0]) >= 12) {
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  compactedRss = process.memoryUsage().rss;
}
/**
 * Resident memory by what backs it (/proc/self/smaps), in bytes: the node binary's pages (clean
 * code, shared and reclaimable), anonymous mappings (V8's heap, thread stacks and arenas), malloc's
 * main `[heap]`, and other files (shared libraries, ICU data).
 */
function rssByMapping() {
  const totals = { binary: 0, anonymous: 0, mallocHeap: 0, otherFiles: 0 };
  let bucket = 'anonymous';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const path = header[1] ?? '';
      bucket =
        path === process.execPath
          ? 'binary'
          : path === '' || path.startsWith('[anon') || path === '[stack]'
            ? 'anonymous'
            : path === '[heap]'
              ? 'mallocHeap'
              : 'otherFiles';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) totals[bucket] += Number(rss[1]) * 1024;
  }
  return totals;
}

process.stdout.write(
  `${JSON.stringify({
    mode,
    node: process.version,
    objects,
    syncMs: run ? Math.round(syncMs) : 0,
    peakRss: Math.max(peak, settled.rss),
    settledRss: settled.rss,
    liveHeap: settled.heapUsed - before.heapUsed,
    heapTotal: settled.heapTotal,
    compactedRss,
    mappings: rssByMapping(),
  })}\n`,
);
await run?.stop();
await sampler.terminate();
process.exit(0);
