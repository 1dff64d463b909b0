/**
 * CPU the `kubeconfigSecrets` provider spends engaging N member Secrets of ~4 KiB present at start
 * (a FakeClient host, so the figure is the provider's and the informer's, not a network's): from
 * `start()` until every cluster is engaged and the process is idle. 1,000 and 2,000 side by side in one run; linear work
 * gives a ratio near 2 (the measurement of the pass-per-event version: 19.3 s and 69.8 s).
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --no-warnings --import tsx \
 *     src/fleet/bench/provider-sync.bench.ts [1000 2000]
 */
import { FakeClient } from '../../testing/fake-client/fake-client.js';
import type { ClusterEvents } from '../cluster-provider.js';
import { kubeconfigSecrets } from '../providers/kubeconfig-secrets.js';
import { tokenKubeconfig } from '../testing/kubeconfig-fixtures.js';

const SIZES = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [1_000, 2_000];
const NS = 'fleet';
/** Idle: less than IDLE_CPU_MS of CPU in IDLE_MS; the figures end where that window began. */
const IDLE_MS = 250;
const IDLE_CPU_MS = 10;

/** A kubeconfig of about 4 KiB: a long token makes up the size, as a client certificate would. */
function kubeconfig(i: number): string {
  const small = tokenKubeconfig(`https://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:6443`, 't');
  return tokenKubeconfig(
    `https://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:6443`,
    `t${String(i).padStart(8, '0')}`.padEnd(4096 - small.length, 'x'),
  );
}

async function measure(n: number): Promise<{ cpuMs: number; wallMs: number; bytes: number }> {
  const secrets = Array.from({ length: n }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `member-${String(i).padStart(5, '0')}`,
      namespace: NS,
      labels: { 'operator-runtime.io/fleet-member': 'true' },
    },
    data: { kubeconfig: Buffer.from(kubeconfig(i)).toString('base64') },
  }));
  const client = new FakeClient({ objects: secrets });
  let engaged = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const events: ClusterEvents = {
    engage: () => {
      if (++engaged === n) done();
    },
    disengage: () => {},
  };
  const stop = new AbortController();
  const cpu = process.cpuUsage();
  const wall = performance.now();
  const run = kubeconfigSecrets({ client, namespace: NS }).start(stop.signal, events);
  await all;
  // Every cluster engaged is not the end of the work: a version that compared all Secrets once per
  // event went on doing so after the first comparison engaged them all. Measured until idle.
  let before = process.cpuUsage(cpu);
  for (;;) {
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const now = process.cpuUsage(cpu);
    if (now.user + now.system - (before.user + before.system) < IDLE_CPU_MS * 1000) break;
    before = now;
  }
  const used = before;
  const wallMs = performance.now() - wall - IDLE_MS;
  stop.abort();
  await run;
  return {
    cpuMs: (used.user + used.system) / 1000,
    wallMs,
    bytes: Buffer.from(secrets[0]!.data.kubeconfig, 'base64').length,
  };
}

// Untimed: module loading and the JIT's first compilations would count against the first size only.
await measure(300);
const results: { n: number; cpuMs: number; wallMs: number; bytes: number }[] = [];
for (const n of SIZES) results.push({ n, ...(await measure(n)) });
for (const r of results)
  console.log(
    `${String(r.n).padStart(6)} Secrets of ${r.bytes} B: ${r.cpuMs.toFixed(0).padStart(7)} ms CPU, ${r.wallMs.toFixed(0).padStart(7)} ms wall`,
  );
if (results.length >= 2) {
  const [a, b] = [results[0]!, results[results.length - 1]!];
  console.log(`CPU ratio ${b.n}/${a.n} Secrets: ${(b.cpuMs / a.cpuMs).toFixed(2)} (linear: ${(b.n / a.n).toFixed(2)})`);
}
