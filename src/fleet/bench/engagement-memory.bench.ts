/**
 * Heap per engaged member cluster and what is left after it leaves: N FakeClient members (empty, or
 * with OBJECTS ConfigMaps each), engaged, synced, disengaged, ROUNDS times, heap measured after
 * forced GCs. The fakes' own stores are created before the first measurement, so the figures are
 * the engagement's (informers, cache, client), not the objects' source.
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --expose-gc --no-warnings --import tsx \
 *     src/fleet/bench/engagement-memory.bench.ts 1000
 */
import { Registry } from 'prom-client';
import { FakeClient } from '../../testing/fake-client/fake-client.js';
import { realClock } from '../../core/clock.js';
import { silentLogger } from '../../core/logger.js';
import { kinds } from '../../client/kinds.js';
import { Fleet } from '../fleet.js';
const N = 20,
  OBJECTS = Number(process.argv[2] ?? 0),
  ROUNDS = 3;
const gc = globalThis.gc;
if (!gc) {
  console.error('run with --expose-gc');
  process.exit(2);
}
const heap = () => {
  for (let i = 0; i < 5; i++) gc();
  return process.memoryUsage().heapUsed;
};
const tick = () => new Promise((r) => setImmediate(r));
const fakes = Array.from(
  { length: N },
  (_, c) =>
    new FakeClient({
      objects: Array.from({ length: OBJECTS }, (_, i) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace: 'ns' },
        data: { v: `value-${c}-${i}` },
      })),
    }),
);
const fleet = new Fleet(
  { provider: { description: 'm', start: (s) => new Promise((r) => s.addEventListener('abort', () => r())) } },
  { clock: realClock, logger: silentLogger, registry: new Registry() },
);
fleet.watchKind(kinds.ConfigMap);
const stop = new AbortController();
const run = fleet.start(stop.signal);
await tick();
const out: unknown[] = [];
let base = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const f of fakes) f.clearRequests();
  const before = heap();
  if (round === 0) base = before;
  for (let c = 0; c < N; c++) fleet.engage({ name: `m${c}`, revision: String(round), connect: async () => fakes[c]! });
  while (fleet.health().length < N || fleet.health().some((h) => h.state !== 'ready')) await tick();
  const engaged = heap();
  for (let c = 0; c < N; c++) void fleet.disengage(`m${c}`);
  for (let c = 0; c < N; c++) await fleet.whenLeft(`m${c}`);
  await tick();
  for (const f of fakes) f.clearRequests();
  const after = heap();
  out.push({
    round,
    perClusterKiB: Math.round((engaged - before) / N / 1024),
    afterLeaveVsFirstBaseKiB: Math.round((after - base) / 1024),
  });
}
console.log(JSON.stringify({ clusters: N, objectsPerCluster: OBJECTS, rounds: out }));
stop.abort();
await run;
