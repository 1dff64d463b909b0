/**
 * KubeClient overhead against plain undici: GET and status-PATCH rates against a local TestEnv,
 * sequential and 32-way, with the same requests written as bare `Pool.request` calls (same keep-alive
 * pool size, same JSON parsing). Goal: our time / plain time ≤ 1.10.
 *
 *   node --import tsx bench/client.bench.ts [requests] [rounds]
 *
 * Each round runs ours and plain back to back (the order flips every round) so drift in the API
 * server (GC, etcd compaction, other load on the machine) hits both; the ratio reported is the
 * median of the per-round ratios, the rates the medians of the rounds, after one warm-up of each.
 */
import { Pool } from 'undici';
import { TestEnv } from '../src/testing/test-env.js';
import { KubeClient } from '../src/client/kube-client.js';

const REQUESTS = Number(process.argv[2] ?? 1000);
const ROUNDS = Number(process.argv[3] ?? 5);
const CONCURRENCY = 32;
const CONNECTIONS = 64;
const NS = 'default';
const GROUP = 'bench.operator-runtime.dev';
const KIND = { apiVersion: `${GROUP}/v1`, kind: 'Counter' } as const;

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `counters.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'counters', singular: 'counter', kind: 'Counter' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

type Op = (worker: number, i: number) => Promise<unknown>;

async function run(op: Op, total: number, concurrency: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (next < total) await op(w, next++);
    }),
  );
  return performance.now() - t0;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const env = await TestEnv.start({ crds: [crd] });
const client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath, connections: CONNECTIONS });
const plain = new Pool(env.server, { connect: { ca: env.caPem, rejectUnauthorized: true }, connections: CONNECTIONS, keepAliveTimeout: 30_000 });
const auth = `Bearer ${env.adminToken}`;

try {
  for (let w = 0; w < CONCURRENCY; w++) {
    await client.create({ ...KIND, metadata: { name: `c${w}`, namespace: NS }, spec: { n: 0 } });
  }
  const path = (w: number): string => `/apis/${GROUP}/v1/namespaces/${NS}/counters/c${w}`;

  const ours: Record<'get' | 'patch', Op> = {
    get: (w) => client.get(KIND, `c${w}`, { namespace: NS }),
    patch: (w, i) => client.patchStatus(KIND, `c${w}`, { status: { n: i } }, { namespace: NS }),
  };
  const bare: Record<'get' | 'patch', Op> = {
    get: async (w) => {
      const res = await plain.request({ path: path(w), method: 'GET', headers: { authorization: auth, accept: 'application/json' } });
      const body: unknown = await res.body.json();
      if (res.statusCode !== 200) throw new Error(`GET ${res.statusCode}`);
      return body;
    },
    patch: async (w, i) => {
      const res = await plain.request({
        path: `${path(w)}/status`,
        method: 'PATCH',
        headers: { authorization: auth, accept: 'application/json', 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ status: { n: i } }),
      });
      const body: unknown = await res.body.json();
      if (res.statusCode !== 200) throw new Error(`PATCH ${res.statusCode}`);
      return body;
    },
  };

  console.log(`KubeClient vs plain undici against TestEnv (kube-apiserver 1.20), ${REQUESTS} requests per run, median of ${ROUNDS} rounds`);
  let worst = 0;
  for (const kind of ['get', 'patch'] as const) {
    for (const concurrency of [1, CONCURRENCY]) {
      const n = concurrency === 1 ? Math.max(100, Math.floor(REQUESTS / 4)) : REQUESTS;
      await run(ours[kind], Math.min(n, 100), concurrency);
      await run(bare[kind], Math.min(n, 100), concurrency);
      const a: number[] = [];
      const b: number[] = [];
      const ratios: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        if (r % 2 === 0) {
          a.push(await run(ours[kind], n, concurrency));
          b.push(await run(bare[kind], n, concurrency));
        } else {
          b.push(await run(bare[kind], n, concurrency));
          a.push(await run(ours[kind], n, concurrency));
        }
        ratios.push(a[r]! / b[r]!);
      }
      const ratio = median(ratios);
      worst = Math.max(worst, ratio);
      const rate = (ms: number): string => ((n / ms) * 1000).toFixed(0).padStart(6);
      // Extra wall time per request, from the medians: what the ratio means in absolute terms.
      const extraUs = ((median(a) - median(b)) / n) * 1000;
      console.log(
        `${(kind === 'get' ? 'GET' : 'status PATCH').padEnd(12)} ${concurrency === 1 ? 'sequential' : `${concurrency}-way     `}  n=${String(n).padEnd(5)} ours ${rate(median(a))} req/s   plain undici ${rate(median(b))} req/s   ratio ${ratio.toFixed(3)}   (${extraUs >= 0 ? '+' : ''}${extraUs.toFixed(0)} µs/req)`,
      );
    }
  }
  console.log(`worst ratio ${worst.toFixed(3)} (goal ≤ 1.10): ${worst <= 1.1 ? 'OK' : 'OVER'}`);
} finally {
  await client.close();
  await plain.close();
  await env.stop();
}
