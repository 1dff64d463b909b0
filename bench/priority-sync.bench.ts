/**
 * An edit during a long initial sync: how soon is it reconciled, first in first out (the queue
 * before priorities, `priorityQueue: false`) and with the priority queue (the default)? Both run
 * in one process against one TestEnv, one after the other, each with a fresh manager and cache:
 *
 * - N ConfigMaps (default 10,000) exist before the manager starts; its controller reconciles one
 *   key at a time and each reconcile takes `workMs` (default 2 ms), so the initial sync takes about
 *   N × workMs;
 * - once the first reconcile ran, 20 objects from the back half of the list are edited, one every
 *   250 ms; the latency of an edit is from sending the update until a reconcile reads the edited
 *   object from the cache.
 *
 * Prints the median and max of the 20 latencies for each mode, and the load average.
 *
 *   OPERATOR_RUNTIME_ASSETS=... NODE_OPTIONS=--conditions=operator-runtime-source \
 *     node --import tsx bench/priority-sync.bench.ts [objects=10000] [workMs=2]
 */
import { loadavg } from 'node:os';
import { KubeClient } from '../src/client/kube-client.js';
import type { Kubeconfig } from '../src/client/kubeconfig.js';
import type { KubeObject } from '../src/core/object-key.js';
import { createLogger } from '../src/logging/create-logger.js';
import { Manager } from '../src/manager/manager.js';
import { createMetricsRegistry } from '../src/metrics/create-metrics-registry.js';
import { TestEnv } from '../src/testing/control-plane/test-env.js';
import { writeBenchJson } from './report/bench-output.js';

const OBJECTS = Number(process.argv[2] ?? 10_000);
const WORK_MS = Number(process.argv[3] ?? 2);
const EDITS = 20;
const EDIT_EVERY_MS = 250;
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };
const namespace = `priority-sync-${process.pid}`;

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const env = await TestEnv.start();
const client = await KubeClient.fromKubeconfig({
  kubeconfig: env.kubeconfig as unknown as Kubeconfig,
  registry: createMetricsRegistry(),
});

async function createObjects(): Promise<void> {
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < OBJECTS; i = next++)
      await client.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${String(i).padStart(6, '0')}`, namespace },
        data: { v: '0' },
      });
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

interface ModeResult {
  readonly mode: 'fifo' | 'priority';
  readonly latenciesMs: number[];
  readonly syncMs: number;
}

async function run(mode: ModeResult['mode'], round: number): Promise<ModeResult> {
  const manager = new Manager({
    client,
    metricsPort: 0,
    healthPort: 0,
    registry: createMetricsRegistry(),
    logger: createLogger({ level: (process.env.LOG_LEVEL ?? 'silent') as 'silent' }),
    namespaces: [namespace],
  });
  let firstReconciled: () => void = () => {};
  const firstReconcile = new Promise<void>((resolve) => (firstReconciled = resolve));
  /** Per edited key, the value it was edited to and when the update was sent. */
  const edits = new Map<string, { value: string; atMs: number; reconciledAtMs?: number }>();
  let reconciles = 0;
  manager
    .controller(`sync-${mode}`)
    .for(CONFIGMAP, { predicates: [] })
    .withOptions({ priorityQueue: mode === 'priority', maxConcurrentReconciles: 1 })
    .complete(async (req, ctx) => {
      reconciles++;
      if (reconciles === 1) firstReconciled();
      const obj = (await ctx.get()) as ConfigMap | undefined;
      const edit = edits.get(req.name);
      if (edit && edit.reconciledAtMs === undefined && obj?.data?.v === edit.value)
        edit.reconciledAtMs = performance.now();
      await sleep(WORK_MS);
    });
  const stop = new AbortController();
  const startedAt = performance.now();
  const running = manager.start(stop.signal);
  try {
    await firstReconcile;
    // Edit objects from the back half of the list: FIFO reaches them last.
    for (let i = 0; i < EDITS; i++) {
      const index = OBJECTS - 1 - Math.floor((i * OBJECTS) / 2 / EDITS);
      const name = `cm-${String(index).padStart(6, '0')}`;
      const value = `edit-${mode}-${round}-${i}`;
      const current = await client.get<ConfigMap>(CONFIGMAP, name, { namespace });
      // From when the update is sent: the watch event (and the reconcile) can beat the update's answer.
      edits.set(name, { value, atMs: performance.now() });
      await client.update({ ...current, data: { v: value } });
      await sleep(EDIT_EVERY_MS);
    }
    while ([...edits.values()].some((e) => e.reconciledAtMs === undefined) || reconciles < OBJECTS) await sleep(50);
    const syncMs = performance.now() - startedAt;
    return { mode, syncMs, latenciesMs: [...edits.values()].map((e) => e.reconciledAtMs! - e.atMs) };
  } finally {
    stop.abort();
    await running;
  }
}

try {
  console.log(
    `priority sync bench: ${OBJECTS} ConfigMaps, ${WORK_MS} ms per reconcile, 1 worker, ${EDITS} edits; load ${load()}`,
  );
  const t0 = performance.now();
  await createObjects();
  console.log(`  created ${OBJECTS} objects in ${((performance.now() - t0) / 1000).toFixed(1)} s; load ${load()}`);
  const results: ModeResult[] = [];
  for (const mode of ['fifo', 'priority'] as const) {
    const r = await run(mode, 0);
    results.push(r);
    console.log(
      `  ${mode.padEnd(8)} edit → reconcile: median ${median(r.latenciesMs).toFixed(0)} ms, max ${Math.max(...r.latenciesMs).toFixed(0)} ms over ${EDITS} edits; initial sync + edits ${(r.syncMs / 1000).toFixed(1)} s; load ${load()}`,
    );
  }
  const [fifo, priority] = results;
  console.log(
    `  median ratio fifo/priority: ${(median(fifo!.latenciesMs) / median(priority!.latenciesMs)).toFixed(1)}×`,
  );
  writeBenchJson({
    bench: 'priority-sync',
    objects: OBJECTS,
    workMs: WORK_MS,
    edits: EDITS,
    results: results.map((r) => ({ mode: r.mode, latenciesMs: r.latenciesMs, syncMs: r.syncMs })),
  });
} finally {
  await env.stop();
}
