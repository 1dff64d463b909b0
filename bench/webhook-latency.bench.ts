/**
 * Admission webhook latency through the real kube-apiserver 1.20: 50 workers create ConfigMaps,
 * each worker alternating one create in a namespace our validating + mutating webhooks apply to
 * (namespaceSelector) and one in a namespace they do not, so both sides see the same API server,
 * etcd and machine load at the same moment. The load comes from a child process (as a cluster's
 * clients are other processes), so the webhook server's event loop serves only reviews. Figures:
 * client-observed p50/p99 create latency of each side, the difference (what two webhook calls
 * add), the webhook server's own mean time per review from `controller_runtime_webhook_latency_seconds`,
 * and the webhook process's event-loop delay.
 *
 *   node --import tsx bench/webhook-latency.bench.ts [requestsPerSide] [concurrency]
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { KubeClient } from '../src/client/kube-client.js';
import type { Kubeconfig } from '../src/client/kubeconfig.js';
import { kinds } from '../src/client/kinds.js';
import { Manager } from '../src/manager/manager.js';
import { createMetricsRegistry } from '../src/metrics/create-metrics-registry.js';
import { eventually } from '../src/testing/control-plane/eventually.js';
import { kubectl } from '../src/testing/control-plane/kubectl.js';
import { TestEnv } from '../src/testing/control-plane/test-env.js';
import { webhookServingCertificate } from '../src/testing/control-plane/webhook-certificate.js';
import { deny } from '../src/webhook/handlers.js';
import { webhookManifests } from '../src/webhook/webhook-manifests.js';

const LOAD = process.argv[2] === '--load';
const args = LOAD ? process.argv.slice(4) : process.argv.slice(2);
const REQUESTS = Number(args[0] ?? 1000);
const CONCURRENCY = Number(args[1] ?? 50);
const HOOKED = 'bench-hooked';
const LOOP_RESOLUTION_MS = 10;
const PLAIN = 'bench-plain';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;

/** The load generator (child process): creates, alternating sides, and prints each side's latencies as JSON. */
async function generateLoad(kubeconfigPath: string): Promise<void> {
  const client = await KubeClient.fromKubeconfig({
    path: kubeconfigPath,
    rateLimit: { qps: 10_000, burst: 10_000 },
    connections: 128,
  });
  const create = (ns: string, name: string): Promise<ConfigMap> =>
    client.create<ConfigMap>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns },
      data: { k: 'v' },
    });
  // Warm-up: connections, the API server's webhook client, JIT.
  await Promise.all(
    Array.from({ length: CONCURRENCY }, (_, i) =>
      Promise.all([create(HOOKED, `warm-${i}`), create(PLAIN, `warm-${i}`)]),
    ),
  );
  const latencies: Record<string, number[]> = { [HOOKED]: [], [PLAIN]: [] };
  let next = 0;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = next++; i < REQUESTS; i = next++) {
        // Which side goes first flips, so neither always meets the other's tail.
        const order = (i + worker) % 2 === 0 ? [HOOKED, PLAIN] : [PLAIN, HOOKED];
        for (const ns of order) {
          const t = performance.now();
          const cm = await create(ns, `cm-${i}`);
          latencies[ns]!.push(performance.now() - t);
          if (ns === HOOKED && cm.metadata?.annotations?.['bench.operator-runtime.dev/checked'] !== 'true')
            throw new Error('a hooked create was not mutated');
        }
      }
    }),
  );
  process.stdout.write(JSON.stringify({ latencies, wallMs: performance.now() - startedAt }));
  await client.close();
}

if (LOAD) {
  await generateLoad(process.argv[3]!);
  process.exit(0);
}

const env = await TestEnv.start();
const cert = await webhookServingCertificate();
const client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
try {
  for (const name of [HOOKED, PLAIN])
    await client.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { 'bench-webhooks': name === HOOKED ? 'on' : 'off' } },
    });
  const registry = createMetricsRegistry();
  const manager = new Manager({
    client,
    registry,
    metricsPort: 0,
    healthPort: 0,
    webhook: { port: 0, certDir: cert.dir },
  });
  manager.webhooks.validate(kinds.ConfigMap, (cm) =>
    Object.keys(cm.data ?? {}).length > 100 ? deny('at most 100 keys') : undefined,
  );
  manager.webhooks.mutate(kinds.ConfigMap, (cm) => {
    cm.metadata = {
      ...cm.metadata,
      annotations: { ...cm.metadata?.annotations, 'bench.operator-runtime.dev/checked': 'true' },
    };
    return cm;
  });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  await eventually('webhook server', () => manager.endpoints.webhookPort);
  const objects = webhookManifests(manager, {
    name: 'bench',
    url: `https://127.0.0.1:${manager.endpoints.webhookPort}`,
    caBundle: cert.caPem,
    namespaceSelector: { matchLabels: { 'bench-webhooks': 'on' } },
  });
  await kubectl(
    env.kubeconfigPath,
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  await eventually('the mutating webhook to be active', async () => {
    const cm = await client.create<ConfigMap>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `probe-${randomBytes(3).toString('hex')}`, namespace: HOOKED },
    });
    return cm.metadata?.annotations?.['bench.operator-runtime.dev/checked'] === 'true';
  });

  const histogram = () => registry.getSingleMetric('controller_runtime_webhook_latency_seconds')!.get();
  /** The API server's own view of each webhook call (apiserver_admission_webhook_admission_duration_seconds): sum and count by webhook name. */
  const apiServerView = async (): Promise<Map<string, { sum: number; count: number }>> => {
    const text = (await env.request<string>('GET', '/metrics', undefined, { accept: 'text/plain' })).body;
    const out = new Map<string, { sum: number; count: number }>();
    for (const m of text.matchAll(
      /^apiserver_admission_webhook_admission_duration_seconds_(sum|count)\{[^}]*name="([^"]+)"[^}]*\} ([0-9.e+-]+)$/gm,
    )) {
      const entry = out.get(m[2]!) ?? { sum: 0, count: 0 };
      entry[m[1] as 'sum' | 'count'] += Number(m[3]);
      out.set(m[2]!, entry);
    }
    return out;
  };
  const before = await histogram();
  const apiBefore = await apiServerView();
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loopDelay.enable();
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...process.execArgv, import.meta.filename, '--load', env.kubeconfigPath, String(REQUESTS), String(CONCURRENCY)],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  loopDelay.disable();
  const { latencies, wallMs } = JSON.parse(stdout) as { latencies: Record<string, number[]>; wallMs: number };
  const after = await histogram();
  const apiAfter = await apiServerView();
  const sumCount = (m: typeof after, path: string) => {
    const value = (suffix: string): number =>
      m.values.find(
        (v: { metricName?: string; labels: Record<string, unknown> }) =>
          v.metricName?.endsWith(suffix) && v.labels.webhook === path,
      )?.value ?? 0;
    return { sum: value('_sum'), count: value('_count') };
  };

  const hooked = latencies[HOOKED]!.sort((a, b) => a - b);
  const plain = latencies[PLAIN]!.sort((a, b) => a - b);
  console.log(
    `# webhook latency: ${REQUESTS} ConfigMap creates per side, ${CONCURRENCY} concurrent workers (another process), kube-apiserver 1.20 (TestEnv), ${wallMs.toFixed(0)} ms wall`,
  );
  console.log(
    `with validating + mutating webhook: p50 ${fmt(percentile(hooked, 50))}  p90 ${fmt(percentile(hooked, 90))}  p99 ${fmt(percentile(hooked, 99))}  max ${fmt(hooked.at(-1)!)}`,
  );
  console.log(
    `without webhooks:                   p50 ${fmt(percentile(plain, 50))}  p90 ${fmt(percentile(plain, 90))}  p99 ${fmt(percentile(plain, 99))}  max ${fmt(plain.at(-1)!)}`,
  );
  console.log(
    `added by the two webhook calls:     p50 ${fmt(percentile(hooked, 50) - percentile(plain, 50))}  p99 ${fmt(percentile(hooked, 99) - percentile(plain, 99))}`,
  );
  for (const path of ['/validate-core-v1-configmap', '/mutate-core-v1-configmap']) {
    const a = sumCount(after, path);
    const b = sumCount(before, path);
    const n = a.count - b.count;
    console.log(`server time per review ${path}: mean ${fmt(((a.sum - b.sum) / n) * 1000)} over ${n} reviews`);
  }
  for (const [name, a] of apiAfter) {
    const b = apiBefore.get(name) ?? { sum: 0, count: 0 };
    console.log(
      `API server's time per call to ${name}: mean ${fmt(((a.sum - b.sum) / (a.count - b.count)) * 1000)} over ${a.count - b.count} calls`,
    );
  }
  // The histogram records whole sampling intervals: the delay is what exceeds the resolution.
  const lag = (ns: number): string => fmt(Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS));
  console.log(
    `webhook process event-loop delay: p50 ${lag(loopDelay.percentile(50))}  p99 ${lag(loopDelay.percentile(99))}  max ${lag(loopDelay.max)}`,
  );
  stop.abort();
  await running;
} finally {
  await client.close();
  await env.stop();
  await cert.remove();
}
