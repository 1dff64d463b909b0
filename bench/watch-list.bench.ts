/**
 * Initial informer sync of N custom resources on the Kubernetes 1.36 CRD-only API server (TestEnv
 * `server: 'modern'`, watch cache on): watch-list vs paged list vs resourceVersion=0 list, in one run.
 *
 *   node --expose-gc --import tsx bench/watch-list.bench.ts [count]      (count: default 50000)
 *
 * The objects (small Widgets) are created once; each mode then runs in a fresh child process so
 * that no heap is shared between measurements:
 * - watch-list: `SharedInformer` over `KubeClient` as shipped (sendInitialEvents, done at the
 *   initial-events-end bookmark);
 * - paged: the same informer with `watchList: false`, its lists made quorum reads (no
 *   resourceVersion) with limit 500, as the watcher's relist after a 410;
 * - rv0: `watchList: false` as it is: the first list asks resourceVersion=0 with limit 500;
 * - wl-incr: watch-list with the store's `relistMode: 'incremental'` (pages applied as they come
 *   instead of one atomic replacement at the end), to show what the atomic replacement costs.
 * Per mode: sync = informer start → synced; baseline = heapUsed after gc before the informer
 * exists; steady = heapUsed after gc once synced; peak = the highest heapUsed sampled every 5 ms
 * during the sync (sampled heapUsed includes garbage not yet collected; the sampler runs between
 * chunks, so a long synchronous step is seen only at its end); live peak = the same from a second
 * child per mode whose sampler runs a full gc before each sample (every 25 ms), so it weighs live
 * data only (its sync time, slowed by the gcs, is not reported). Ratios are printed for the whole
 * heap (peak/steady) and above the baseline ((peak-baseline)/(steady-baseline)).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../src/client/kube-client.js';
import { clientListerWatcher } from '../src/cache/client-lister-watcher.js';
import { SharedInformer } from '../src/cache/informer.js';
import type { ListerWatcher } from '../src/cache/lister-watcher.js';
import type { KubeObject } from '../src/core/object-key.js';
import { readManifests } from '../src/testing/control-plane/manifests.js';
import { TestEnv } from '../src/testing/control-plane/test-env.js';

type Mode = 'watch-list' | 'paged' | 'rv0' | 'wl-incr';
const ALL_MODES: readonly Mode[] = ['watch-list', 'paged', 'rv0', 'wl-incr'];
const MODES = (process.env.WATCH_LIST_MODES?.split(',').filter(Boolean) ?? ALL_MODES) as readonly Mode[];
for (const m of MODES) if (!ALL_MODES.includes(m)) throw new Error(`WATCH_LIST_MODES: unknown mode ${m}`);
const BASELINE = process.env.WATCH_LIST_BASELINE;
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const NS = 'bench';
const CONCURRENCY = 32;

interface Row {
  mode: Mode;
  /** The checkout that measured it: ours, or the baseline (WATCH_LIST_BASELINE). */
  impl?: 'ours' | 'baseline';
  live: boolean;
  syncMs: number;
  baselineMb: number;
  steadyMb: number;
  peakMb: number;
  objects: number;
  /** (steady − baseline) / objects, in bytes: the cache's heap per object. */
  bytesPerObject: number;
  listMode: string | undefined;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const mb = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function child(mode: Mode, kubeconfigPath: string, live: boolean): Promise<Row> {
  const client = await KubeClient.fromKubeconfig({ path: kubeconfigPath });
  const base = clientListerWatcher(client, { ...WIDGET, namespace: NS });
  // paged: every list a quorum read, as after a 410 (the watcher's first list would ask RV=0).
  const lw: ListerWatcher<KubeObject> =
    mode === 'paged' ? { ...base, list: (opts) => base.list({ ...opts, resourceVersion: undefined }) } : base;
  await client.listPage(WIDGET, { namespace: NS, limit: 1 }); // discovery and connection warm-up, outside the measurement
  gc!();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const sampler = setInterval(
    () => {
      if (live) gc!();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    },
    live ? 25 : 5,
  );
  const informer = new SharedInformer(lw, {
    watchList: mode === 'watch-list' || mode === 'wl-incr',
    pageSize: 500,
    ...(mode === 'wl-incr' ? { relistMode: 'incremental' as const } : {}),
  });
  const ac = new AbortController();
  const t0 = performance.now();
  const running = informer.start(ac.signal);
  await informer.waitForSync(ac.signal, 600_000);
  const syncMs = performance.now() - t0;
  clearInterval(sampler);
  // The last sample too: after a gc in the live run (it weighs live data only).
  if (live) gc!();
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  gc!();
  const steady = process.memoryUsage().heapUsed;
  const row: Row = {
    mode,
    live,
    syncMs: Math.round(syncMs),
    baselineMb: mb(baseline),
    steadyMb: mb(steady),
    peakMb: mb(peak),
    objects: informer.reader.list().length,
    bytesPerObject: Math.round((steady - baseline) / Math.max(1, informer.reader.size)),
    listMode: informer.health().listMode,
  };
  ac.abort();
  await running;
  await client.close();
  return row;
}

async function parent(count: number): Promise<void> {
  const crds = await readManifests(new URL('../examples/quickstart/widget-crd.yaml', import.meta.url));
  const t0 = performance.now();
  const env = await TestEnv.start({ server: 'modern', crds, startTimeoutMs: 120_000 });
  console.log(`modern TestEnv started in ${Math.round(performance.now() - t0)} ms (${env.server})`);
  try {
    const t1 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < count; i = next++) {
          const res = await env.request('POST', `/apis/example.com/v1/namespaces/${NS}/widgets`, {
            ...WIDGET,
            metadata: { name: `w-${i}` },
            spec: { size: 1 + (i % 10) },
          });
          if (res.status !== 201) throw new Error(`create w-${i}: ${res.status} ${JSON.stringify(res.body)}`);
        }
      }),
    );
    console.log(`created ${count} Widgets in ${Math.round(performance.now() - t1)} ms`);
    const rows: Row[] = [];
    const liveRows = new Map<string, Row>();
    const impls = BASELINE ? (['ours', 'baseline'] as const) : (['ours'] as const);
    for (const mode of MODES) {
      // Interleaved, so a change in the machine's load hits both checkouts alike.
      for (const impl of impls) rows.push({ ...(await runChild(mode, env.kubeconfigPath, false, impl)), impl });
      for (const impl of impls)
        liveRows.set(`${mode} ${impl}`, { ...(await runChild(mode, env.kubeconfigPath, true, impl)), impl });
    }
    console.log(`\ninitial sync of ${count} Widgets, Kubernetes 1.36 (watch cache on), one fresh process per mode:`);
    console.log(
      'mode                   sync ms  baseline MB  steady MB  peak MB  peak/steady  over-baseline  live peak MB  live peak/steady  live over-baseline  objects  B/obj  listMode',
    );
    for (const r of rows) {
      const l = liveRows.get(`${r.mode} ${r.impl}`)!;
      const label = r.impl === 'baseline' ? `${r.mode} (baseline)` : r.mode;
      const over = (r.peakMb - r.baselineMb) / Math.max(0.1, r.steadyMb - r.baselineMb);
      const liveOver = (l.peakMb - l.baselineMb) / Math.max(0.1, l.steadyMb - l.baselineMb);
      console.log(
        `${label.padEnd(21)}  ${String(r.syncMs).padStart(7)}  ${String(r.baselineMb).padStart(11)}  ${String(r.steadyMb).padStart(9)}  ${String(r.peakMb).padStart(7)}  ${(r.peakMb / r.steadyMb).toFixed(2).padStart(11)}  ${over.toFixed(2).padStart(13)}  ${String(l.peakMb).padStart(12)}  ${(l.peakMb / l.steadyMb).toFixed(2).padStart(16)}  ${liveOver.toFixed(2).padStart(18)}  ${String(r.objects).padStart(7)}  ${String(r.bytesPerObject ?? '-').padStart(5)}  ${r.listMode}`,
      );
      if (l.objects !== count)
        throw new Error(`${r.mode} (live): the informer holds ${l.objects} objects, expected ${count}`);
      if (r.objects !== count) throw new Error(`${r.mode}: the informer holds ${r.objects} objects, expected ${count}`);
    }
  } finally {
    await env.stop();
  }
}

function runChild(mode: Mode, kubeconfigPath: string, live: boolean, impl: 'ours' | 'baseline'): Promise<Row> {
  const script = impl === 'baseline' ? `${BASELINE}/bench/watch-list.bench.ts` : fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    const p = fork(script, ['--child', mode, kubeconfigPath, live ? 'live' : 'sampled'], {
      execArgv: ['--expose-gc', '--import', 'tsx'],
    });
    let row: Row | undefined;
    p.on('message', (m) => (row = m as Row));
    p.on('error', reject);
    p.on('exit', (code) => (row && code === 0 ? resolve(row) : reject(new Error(`child ${mode} exited ${code}`))));
  });
}

if (process.argv[2] === '--child') {
  const row = await child(process.argv[3] as Mode, process.argv[4]!, process.argv[5] === 'live');
  process.send!(row);
} else {
  await parent(Number(process.argv[2] ?? 50_000));
}
