/**
 * What one engaged member cluster costs, and whether leaving gives it back: a host and one member
 * (kube-apiserver 1.20 each, TestFleet), a manager with the kubeconfigSecrets provider and a fleet
 * controller of Widgets. Heap used after gc() at four points — no member; member engaged with an
 * empty cache; with N Widgets cached; after the member's Secret was deleted — and, over R joins,
 * the time from creating the Secret to the member's first reconcile.
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --expose-gc --import tsx \
 *     bench/fleet-memory.bench.ts [objects=1000] [joins=5]
 *
 * Exits 1 when the heap after the leave is not within 10% of the heap before the join.
 */
import { freePort } from '../src/testing/control-plane/free-port.js';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeClient } from '../src/client/kube-client.js';
import type { KubeObject } from '../src/core/object-key.js';
import { kubeconfigSecrets } from '../src/fleet/providers/kubeconfig-secrets.js';
import { Manager } from '../src/manager/manager.js';
import { WIDGET_CRD } from '../src/testing/conformance/client-conformance.js';
import { eventually } from '../src/testing/control-plane/eventually.js';
import { TestFleet } from '../src/testing/fleet/test-fleet.js';

const OBJECTS = Number(process.argv[2] ?? 1000);
const JOINS = Number(process.argv[3] ?? 5);
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };
const NAMESPACE = 'default';
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  process.stderr.write('fleet-memory: run with node --expose-gc\n');
  process.exit(2);
}

async function heapUsed(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await delay(50);
  }
  return process.memoryUsage().heapUsed;
}

const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(2);

const fleet = await TestFleet.start({ members: ['member'], memberCrds: [WIDGET_CRD] });
const host = await KubeClient.fromKubeconfig({ kubeconfig: fleet.host.kubeconfig });
const member = await fleet.member('member').directClient();
const secrets = await fleet.host.createNamespace('fleet');
const reconciledAt: number[] = [];
const manager = new Manager({
  client: host,
  metricsPort: 0,
  healthPort: await freePort(),
  fleet: { provider: kubeconfigSecrets({ client: host, namespace: secrets }) },
});
manager
  .fleetController('widgets')
  .for<KubeObject>(WIDGET)
  .complete(async () => {
    reconciledAt.push(Date.now());
  });
const stop = new AbortController();
const running = manager.start(stop.signal);
const secretName = fleet.member('member').secretManifest({ namespace: secrets }).metadata.name;
let exitCode = 0;
try {
  await eventually(
    'manager ready',
    async () => (await fetch(`http://127.0.0.1:${manager.endpoints.healthPort}/readyz`)).ok,
  );
  // One object so a join has something to reconcile; the rest come later.
  await member.create({ ...WIDGET, metadata: { name: 'w-0', namespace: NAMESPACE }, spec: { size: 1 } });

  const joinMs: number[] = [];
  const leaveMs: number[] = [];
  const join = async (): Promise<void> => {
    const t0 = Date.now();
    const seen = reconciledAt.length;
    await fleet.registerMembers({ namespace: secrets });
    await eventually('first reconcile', () => reconciledAt.length > seen, { timeoutMs: 60_000, intervalMs: 5 });
    joinMs.push(reconciledAt[seen]! - t0);
  };
  const leave = async (): Promise<void> => {
    const t0 = Date.now();
    await host.delete({ apiVersion: 'v1', kind: 'Secret' }, secretName, { namespace: secrets });
    await eventually('left', () => manager.fleet!.cluster('member') === undefined, {
      timeoutMs: 60_000,
      intervalMs: 5,
    });
    leaveMs.push(Date.now() - t0);
  };
  // Warm-up join and leave: code paths loaded, lazy singletons made, before the first figure.
  await join();
  await leave();
  const before = await heapUsed();
  await join();
  await eventually('synced', () => manager.fleet!.cluster('member')?.synced === true);
  const engagedEmpty = await heapUsed();
  for (let i = 1; i < OBJECTS; i++)
    await member.create({
      ...WIDGET,
      metadata: { name: `w-${i}`, namespace: NAMESPACE },
      spec: { size: (i % 10) + 1 },
    });
  await eventually(
    `${OBJECTS} cached`,
    async () =>
      (await manager.fleet!.cluster('member')!.client.list(WIDGET, { namespace: NAMESPACE })).items.length === OBJECTS,
    { timeoutMs: 120_000 },
  );
  const engagedFull = await heapUsed();
  await leave();
  const after = await heapUsed();
  for (let i = 1; i < JOINS; i++) {
    await join();
    await leave();
  }
  const sorted = [...joinMs].sort((a, b) => a - b);
  const backRatio = after / before;
  console.log(
    [
      `fleet-memory: ${OBJECTS} Widgets, ${joinMs.length} joins, Node ${process.version}`,
      `heap used, no member:              ${mib(before)} MiB`,
      `heap used, member engaged (empty): ${mib(engagedEmpty)} MiB (+${mib(engagedEmpty - before)})`,
      `heap used, ${OBJECTS} Widgets cached:      ${mib(engagedFull)} MiB (+${mib(engagedFull - before)}; ${((engagedFull - engagedEmpty) / OBJECTS).toFixed(0)} B/object)`,
      `heap used, after the leave:        ${mib(after)} MiB (${((backRatio - 1) * 100).toFixed(1)}% of before)`,
      `Secret created → first reconcile:  median ${sorted[Math.floor(sorted.length / 2)]} ms, all ${joinMs.join(', ')} ms`,
      `Secret deleted → member gone:      ${leaveMs.join(', ')} ms`,
    ].join('\n'),
  );
  if (Math.abs(backRatio - 1) > 0.1) {
    console.error(
      `fleet-memory: heap after the leave is not within 10% of before (${mib(after)} vs ${mib(before)} MiB)`,
    );
    exitCode = 1;
  }
} finally {
  stop.abort();
  await running.catch((err: unknown) => console.error(err));
  await member.close();
  await host.close();
  await fleet.stop();
}
process.exit(exitCode);
