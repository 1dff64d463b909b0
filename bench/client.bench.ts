/**
 * KubeClient overhead against plain undici: GET and status-PATCH against a local TestEnv,
 * sequential and 32-way, next to the same requests written as bare `Pool.request` calls (same
 * keep-alive pool size, same JSON parsing). Goal: ours / plain ≤ 1.10.
 *
 *   node --import tsx bench/client.bench.ts [requests] [rounds]
 *
 * A/B interleaved: every worker alternates one request through KubeClient and one through plain
 * undici (which goes first flips each time), so both see the same API server, etcd and machine
 * load at the same moment; on a shared, loaded machine separate runs differ by ±20% from one
 * minute to the next, which would swamp a 10% goal. Per request the latency is recorded; the
 * figures are each side's mean latency, the ratio ours/plain (median over `rounds` rounds), and
 * the wall-clock rate of both sides together.
 *
 * A second part does the same against an in-process stub HTTP server that answers at once: with
 * no API server work in the way, the difference is the client's own per-request cost in µs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { TestEnv } from '../src/testing/control-plane/test-env.js';
import { KubeClient } from '../src/client/kube-client.js';
import { StaticTokenCredential } from '../src/client/credentials.js';
import { makeTlsConfig } from '../src/client/tls-config.js';

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

interface Round {
  oursMeanMs: number;
  plainMeanMs: number;
  /** Both sides together, requests per second of wall time. */
  combinedPerSecond: number;
}

/** `total` requests per side over `concurrency` workers, each alternating ours and plain. */
async function interleaved(ours: Op, plain: Op, total: number, concurrency: number): Promise<Round> {
  let next = 0;
  let oursMs = 0;
  let plainMs = 0;
  const start = performance.now();
  const timed = async (op: Op, w: number, i: number): Promise<number> => {
    const t0 = performance.now();
    await op(w, i);
    return performance.now() - t0;
  };
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (next < total) {
        const i = next++;
        // Not `oursMs += await …`: that reads oursMs before the await and loses the other workers' sums.
        const oursFirst = (i + w) % 2 === 0;
        const first = await timed(oursFirst ? ours : plain, w, i);
        const second = await timed(oursFirst ? plain : ours, w, i);
        oursMs += oursFirst ? first : second;
        plainMs += oursFirst ? second : first;
      }
    }),
  );
  return {
    oursMeanMs: oursMs / total,
    plainMeanMs: plainMs / total,
    combinedPerSecond: (2 * total * 1000) / (performance.now() - start),
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(
  ours: Op,
  plain: Op,
  n: number,
  concurrency: number,
): Promise<{ ours: number; plain: number; ratio: number; combined: number }> {
  await interleaved(ours, plain, Math.min(n, 100), concurrency); // warm-up
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await interleaved(ours, plain, n, concurrency));
  return {
    ours: median(rounds.map((r) => r.oursMeanMs)),
    plain: median(rounds.map((r) => r.plainMeanMs)),
    ratio: median(rounds.map((r) => r.oursMeanMs / r.plainMeanMs)),
    combined: median(rounds.map((r) => r.combinedPerSecond)),
  };
}

const env = await TestEnv.start({ crds: [crd] });
const client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath, connections: CONNECTIONS });
const pool = new Pool(env.server, {
  connect: { ca: env.caPem, rejectUnauthorized: true },
  connections: CONNECTIONS,
  keepAliveTimeout: 30_000,
});
const auth = `Bearer ${env.adminToken}`;
let worst = 0;

try {
  for (let w = 0; w < CONCURRENCY; w++) {
    await client.create({ ...KIND, metadata: { name: `c${w}`, namespace: NS }, spec: { n: 0 } });
  }
  const path = (w: number): string => `/apis/${GROUP}/v1/namespaces/${NS}/counters/c${w}`;
  const ours: Record<'get' | 'patch', Op> = {
    get: (w) => client.get(KIND, `c${w}`, { namespace: NS }),
    patch: (w, i) => client.patchStatus(KIND, `c${w}`, { status: { n: i } }, { namespace: NS }),
  };
  const plain: Record<'get' | 'patch', Op> = {
    get: async (w) => {
      const res = await pool.request({
        path: path(w),
        method: 'GET',
        headers: { authorization: auth, accept: 'application/json' },
      });
      const body: unknown = await res.body.json();
      if (res.statusCode !== 200) throw new Error(`GET ${res.statusCode}`);
      return body;
    },
    patch: async (w, i) => {
      const res = await pool.request({
        path: `${path(w)}/status`,
        method: 'PATCH',
        headers: { authorization: auth, accept: 'application/json', 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ status: { n: -i } }),
      });
      const body: unknown = await res.body.json();
      if (res.statusCode !== 200) throw new Error(`PATCH ${res.statusCode}`);
      return body;
    },
  };

  console.log(
    `KubeClient vs plain undici against TestEnv (kube-apiserver 1.20), A/B interleaved, median of ${ROUNDS} rounds`,
  );
  for (const kind of ['get', 'patch'] as const) {
    for (const concurrency of [1, CONCURRENCY]) {
      const n = concurrency === 1 ? Math.max(100, Math.floor(REQUESTS / 4)) : REQUESTS;
      const m = await measure(ours[kind], plain[kind], n, concurrency);
      worst = Math.max(worst, m.ratio);
      console.log(
        `${(kind === 'get' ? 'GET' : 'status PATCH').padEnd(12)} ${(concurrency === 1 ? 'sequential' : `${concurrency}-way`).padEnd(10)} n=${String(n).padEnd(5)}` +
          ` ours ${(m.ours * 1000).toFixed(0).padStart(5)} µs/req   plain undici ${(m.plain * 1000).toFixed(0).padStart(5)} µs/req   ratio ${m.ratio.toFixed(3)}   (both together ${m.combined.toFixed(0)} req/s)`,
      );
    }
  }
  console.log(`worst ratio ${worst.toFixed(3)} (goal ≤ 1.10): ${worst <= 1.1 ? 'OK' : 'OVER'}`);
} finally {
  await client.close();
  await pool.close();
  await env.stop();
}

await stubOverhead();

/** Client-only cost: GET against a stub server that answers a fixed ConfigMap at once. */
async function stubOverhead(): Promise<void> {
  const body = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'x', namespace: 'd', resourceVersion: '1' },
    data: { a: 'b'.repeat(1000) },
  });
  const discovery = JSON.stringify({
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get'] }],
  });
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(req.url === '/api/v1' ? discovery : body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stubClient = new KubeClient(
    {
      server: url,
      tls: makeTlsConfig({ rejectUnauthorized: true }),
      credential: new StaticTokenCredential('t'),
      namespace: 'd',
    },
    { connections: CONNECTIONS },
  );
  const stubPool = new Pool(url, { connections: CONNECTIONS });
  const type = { apiVersion: 'v1', kind: 'ConfigMap' };
  const ours: Op = () => stubClient.get(type, 'x', { namespace: 'd' });
  const plain: Op = async () => {
    const res = await stubPool.request({
      path: '/api/v1/namespaces/d/configmaps/x',
      method: 'GET',
      headers: { authorization: 'Bearer t', accept: 'application/json' },
    });
    return res.body.json();
  };
  try {
    console.log(
      `\nclient-side cost against an in-process stub server (no API server work), ${REQUESTS * 5} GETs per side per round`,
    );
    // Sequential only: with 32 in flight the in-process server's own queueing swamps a µs figure.
    for (const concurrency of [1]) {
      const m = await measure(ours, plain, REQUESTS * 5, concurrency);
      console.log(
        `GET ${(concurrency === 1 ? 'sequential' : `${concurrency}-way`).padEnd(10)} ours ${(m.ours * 1000).toFixed(1).padStart(6)} µs/req   plain undici ${(m.plain * 1000).toFixed(1).padStart(6)} µs/req   client cost ${((m.ours - m.plain) * 1000).toFixed(1)} µs/req`,
      );
    }
  } finally {
    await stubClient.close();
    await stubPool.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
