/**
 * End-to-end controller throughput: N Widgets exist; a controller with 8 workers reconciles each
 * once (cache read + status PATCH). Compared in the same run with the API server's own ceiling for
 * status writes: a plain undici loop with the same concurrency patching the same objects.
 *
 *   node --import tsx bench/controller-e2e.bench.ts [objects=2000] [workers=8]
 *
 * After the second pass on our CPU per reconcile (bench/controller-e2e-cpu.bench.ts: 181 -> 144 µs),
 * three runs back to back (load 1.7-3.0): medians 86%, 88%, 87% of the plain ceiling (single rounds
 * 84-96%); against the ceiling with a watch open 98%, 90%, 89%. Before it: 92%, 87%, 87% and 97%,
 * 91%, 96%. Our CPU fell by a fifth and the ratio did not move beyond the spread: what is left is
 * mostly the API server's, not ours. The ceiling with a watch open was itself 88-97% of the plain
 * one in the same runs (770-834 against 860-872 writes/s): serving the informer's watch costs the
 * API server on these two cores about what the goal leaves, and every informer-based controller
 * (client-go's included) holds that watch.
 *
 * Where the rest goes (issue 27 item 3). The ratio is set by the CPU our process spends per
 * reconcile beyond the plain loop's, since on a 2-core box it is taken from the API server and etcd
 * (and under load each µs of it also waits for a core), plus the API server's own cost of the watch
 * the informer must hold. bench/controller-e2e-cpu.bench.ts measures our side alone against a
 * near-free stand-in server. µs CPU per status write, 2000 objects, 8-way; median of five runs
 * (each the median of 5 rounds), before and after run alternately, load 9–16:
 *
 *   side                                   before   after   what it adds
 *   plain undici loop                         64      58   TLS write/read, llhttp, dump()
 *   KubeClient.patchStatus alone              82      66   path, headers, body read, JSON.parse
 *   controller reconcile (this bench's)      218     176   everything below
 *   controller / plain                      3.55    2.99
 *
 * The ~110 µs the controller adds above the bare client, from V8 CPU profiles of the same rounds
 * (CPU_PROFILE=/tmp/p), each sample given to the first of our frames on its stack:
 *   - the informer's watch event for every write (~60–80 µs): TLS read and llhttp of the ~1 KB
 *     event, watch-decoder line + JSON.parse, store/indexer update, handler dispatch, predicates,
 *     cache metrics (src/cache/*, src/client/watch-decoder.ts);
 *   - more garbage collection (+20–25 µs), mostly the event objects above;
 *   - the reconcile machinery (~25 µs): workqueue get/done and its metrics, reconcileKey, the
 *     cache.get path (informerKey/informerForNamespace rebuild the informer's key on every get);
 *     the controller's prom-client metrics cost < 1 µs measured alone, so they were left;
 *   - start-up (list, watch, sync): 7–14 µs per reconcile at 2000 objects.
 * Fixed at their cause (a few µs each alone, ~40 µs together in place): a pino child logger built
 * per reconcile, now on its first written line only (src/controller/deferred-child-logger.ts); an
 * abort listener added and removed per reconcile, now a set of in-flight signals; a streaming
 * TextDecoder (an ICU converter) per response, now one shared decoder for single-chunk answers; a
 * URLSearchParams per write without options.
 * The comparison was unfair in two ways, both against the controller, now fixed: the server's
 * speed drifts during a run (in four runs it fell round after round, one 327, 177, 152 writes/s)
 * and the ceiling was taken only before the controller, so it is now taken before and after and
 * averaged; and the first controller round also paid for discovery and for compiling our code, so
 * an uncounted round 0 comes first. Otherwise fair: one identity, the same 8 keep-alive connections
 * (of a 64-connection pool on both sides), the same concurrency and server. The plain loop holds no
 * watch; the ratio in parentheses is against the ceiling with a watch open. On this machine, loaded
 * by other work (load 3–30), single rounds ranged from 44% to 95%: ratios need a quiet machine.
 */
import { Agent, request } from 'undici';
import { KubeClient } from '../src/client/kube-client.js';
import type { Kubeconfig } from '../src/client/kubeconfig.js';
import { runWidgetRound } from './e2e/widget-controller.js';
import { readManifests } from '../src/testing/control-plane/manifests.js';
import { TestEnv } from '../src/testing/control-plane/test-env.js';
import { writeBenchJson } from './report/bench-output.js';

const objects = Number(process.argv[2] ?? 2000);
const workers = Number(process.argv[3] ?? 8);

const env = await TestEnv.start({
  crds: await readManifests(new URL('../examples/quickstart/widget-crd.yaml', import.meta.url)),
});
const agent = new Agent({ connect: { ca: env.caPem }, connections: 64 });
const base = `${env.server}/apis/example.com/v1/namespaces/default/widgets`;
const headers = { authorization: `Bearer ${env.adminToken}`, 'content-type': 'application/json' };

async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) await fn(i);
    }),
  );
  return (performance.now() - t0) / 1000;
}

try {
  const createSeconds = await pool(objects, 32, async (i) => {
    const res = await request(base, {
      method: 'POST',
      dispatcher: agent,
      headers,
      body: JSON.stringify({
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: `w-${i}` },
        spec: { size: 1 + (i % 10) },
      }),
    });
    await res.body.dump();
    if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode}`);
  });
  console.log(`created ${objects} widgets in ${createSeconds.toFixed(1)} s`);

  const client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });

  // Ceiling: plain undici status PATCHes, same concurrency as the controller's workers. With
  // `watching`, one raw watch stream is open meanwhile, as the controller's informer is: the API
  // server then also encodes and sends every write as an event.
  async function ceiling(label: string, watching = false): Promise<number> {
    const watchAbort = new AbortController();
    if (watching) {
      const res = await request(`${base}?watch=1&resourceVersion=0`, {
        dispatcher: agent,
        headers,
        signal: watchAbort.signal,
        bodyTimeout: 0,
      });
      res.body.on('data', () => {}).on('error', () => {});
    }
    const seconds = await pool(objects, workers, async (i) => {
      const res = await request(`${base}/w-${i}/status`, {
        method: 'PATCH',
        dispatcher: agent,
        headers: { ...headers, 'content-type': 'application/merge-patch+json' },
        // A new message each phase: a patch that changes nothing is not written, and would be cheaper.
        body: JSON.stringify({ status: { message: `ceiling ${label}` } }),
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`status patch failed: ${res.statusCode}`);
    });
    watchAbort.abort();
    return objects / seconds;
  }

  // The controller: the initial list enqueues every widget; each reconcile reads the cache and writes status.
  async function controller(round: number): Promise<{ rate: number; startupSeconds: number }> {
    let firstReconcileAt = 0;
    const t0 = performance.now();
    const doneAt = await runWidgetRound({
      client,
      objects,
      workers,
      round,
      onReconcile: () => (firstReconcileAt ||= performance.now()),
    });
    const seconds = (doneAt - t0) / 1000;
    return { rate: objects / seconds, startupSeconds: (firstReconcileAt - t0) / 1000 };
  }

  // Alternate the two, several rounds, so both see the same machine load; report medians.
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const ceilings: number[] = [];
  const controllers: number[] = [];
  const ratios: number[] = [];
  const watchedCeilings: number[] = [];
  const watchedRatios: number[] = [];
  const startups: number[] = [];
  // Round 0 is not counted: the first controller round would otherwise also pay for discovery and
  // for compiling our code, which the plain loop had done while creating the widgets.
  await controller(0);
  for (let round = 1; round <= rounds; round++) {
    // The server's speed drifts during a run (four runs fell round after round, one 327, 177, 152
    // writes/s): a ceiling taken only before the controller favoured it. Before and after, averaged.
    const before = await ceiling(`${round}a`);
    const r = await controller(round);
    const cw = await ceiling(`${round}w`, true);
    const after = await ceiling(`${round}b`);
    const c = (before + after) / 2;
    ceilings.push(c);
    controllers.push(r.rate);
    ratios.push(r.rate / c);
    watchedCeilings.push(cw);
    watchedRatios.push(r.rate / cw);
    startups.push(r.startupSeconds);
    console.log(
      `round ${round}: ceiling ${c.toFixed(0)} writes/s (${before.toFixed(0)} before, ${after.toFixed(0)} after; ${cw.toFixed(0)} with a watch open), controller ${r.rate.toFixed(0)} reconciles/s (start-up ${r.startupSeconds.toFixed(2)} s, included), ratio ${((100 * r.rate) / c).toFixed(0)}% (${((100 * r.rate) / cw).toFixed(0)}%)`,
    );
  }
  await client.close();
  writeBenchJson({
    bench: 'controller-e2e',
    objects,
    workers,
    rounds,
    ceilingPerSecond: ceilings,
    ceilingWithWatchPerSecond: watchedCeilings,
    controllerPerSecond: controllers,
    startupSeconds: startups,
  });
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `median of ${rounds}: ceiling (plain undici, ${workers}-way) ${median(ceilings).toFixed(0)} writes/s; controller (${workers} workers, list + sync included) ${median(controllers).toFixed(0)} reconciles/s; ratio ${(100 * median(ratios)).toFixed(0)}% (goal >= 90%); against the ceiling with a watch open (${median(watchedCeilings).toFixed(0)} writes/s): ${(100 * median(watchedRatios)).toFixed(0)}%`,
  );
} finally {
  await agent.close();
  await env.stop();
}
