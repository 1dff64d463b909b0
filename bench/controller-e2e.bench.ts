/**
 * End-to-end controller throughput: N Widgets exist; a controller with 8 workers reconciles each
 * once (cache read + status PATCH). Compared in the same run with the API server's own ceiling for
 * status writes: a plain undici loop with the same concurrency patching the same objects.
 *
 *   node --import tsx bench/controller-e2e.bench.ts [objects=2000] [workers=8]
 */
import { Agent, request } from 'undici';
import { KubeClient } from '../src/client/kube-client.js';
import type { Kubeconfig } from '../src/client/kubeconfig.js';
import { createLogger } from '../src/logging/create-logger.js';
import { Manager } from '../src/manager/manager.js';
import { readManifests } from '../src/testing/manifests.js';
import { TestEnv } from '../src/testing/test-env.js';

const objects = Number(process.argv[2] ?? 2000);
const workers = Number(process.argv[3] ?? 8);
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };

const env = await TestEnv.start({ crds: await readManifests(new URL('../examples/quickstart/widget-crd.yaml', import.meta.url)) });
const agent = new Agent({ connect: { ca: env.caPem }, connections: 64 });
const base = `${env.server}/apis/example.com/v1/namespaces/default/widgets`;
const headers = { authorization: `Bearer ${env.adminToken}`, 'content-type': 'application/json' };

async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < n; i = next++) await fn(i);
  }));
  return (performance.now() - t0) / 1000;
}

try {
  const createSeconds = await pool(objects, 32, async (i) => {
    const res = await request(base, { method: 'POST', dispatcher: agent, headers, body: JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `w-${i}` }, spec: { size: 1 + (i % 10) } }) });
    await res.body.dump();
    if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode}`);
  });
  console.log(`created ${objects} widgets in ${createSeconds.toFixed(1)} s`);

  // Ceiling: plain undici status PATCHes, same concurrency as the controller's workers.
  const ceilingSeconds = await pool(objects, workers, async (i) => {
    const res = await request(`${base}/w-${i}/status`, {
      method: 'PATCH',
      dispatcher: agent,
      headers: { ...headers, 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ status: { message: 'ceiling' } }),
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`status patch failed: ${res.statusCode}`);
  });
  const ceilingRate = objects / ceilingSeconds;

  // The controller: initial list enqueues every widget; each reconcile reads the cache and writes status.
  const client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
  const manager = new Manager({ client, metricsPort: 0, healthPort: 0, logger: createLogger({ level: 'silent' }) });
  let reconciled = 0;
  let allDone!: () => void;
  const finished = new Promise<void>((r) => (allDone = r));
  manager
    .controller('bench')
    .for(WIDGET)
    .withOptions({ maxConcurrentReconciles: workers })
    .complete(async (req, { signal }) => {
      const w = await manager.cache.get<{ metadata: { generation: number } }>(WIDGET, req, { signal });
      await client.patchStatus(WIDGET, req.name, { status: { message: 'reconciled', observedGeneration: w.metadata.generation } }, { namespace: req.namespace, type: 'merge', signal });
      if (++reconciled === objects) allDone();
    });
  const stop = new AbortController();
  const t0 = performance.now();
  const running = manager.start(stop.signal);
  await finished;
  const controllerSeconds = (performance.now() - t0) / 1000;
  stop.abort();
  await running;
  await client.close();
  const controllerRate = objects / controllerSeconds;

  console.log(`status-write ceiling (plain undici, ${workers}-way): ${ceilingRate.toFixed(0)} writes/s (${ceilingSeconds.toFixed(2)} s)`);
  console.log(`controller (${workers} workers, incl. list + cache sync): ${controllerRate.toFixed(0)} reconciles/s (${controllerSeconds.toFixed(2)} s)`);
  console.log(`ratio: ${((controllerRate / ceilingRate) * 100).toFixed(0)}% of the ceiling (goal >= 80%)`);
} finally {
  await agent.close();
  await env.stop();
}
