/**
 * Chaos, fleet fairness: a member with CHAOS_OBJECTS (10,000) Widgets is engaged and its whole
 * list lands in the fleet controller's queue (one worker, 2 ms of work per reconcile: a backlog of
 * ~20 s); a member with ten is engaged a moment later and edited while the backlog drains. The
 * small member's keys must not wait behind the big one's: all ten reconciled, and each edit seen,
 * within FAIRNESS_BOUND_MS.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, Manager } from 'operator-runtime';
import { kubeconfigSecrets } from 'operator-runtime/fleet';
import { TestFleet } from 'operator-runtime/testing/fleet';
import { freePort, readManifests } from 'operator-runtime/testing';
import { recordChaosResult } from './support/chaos-results.js';
import { percentile } from './support/fleet-widget-workload.js';
import { WIDGET, type Widget } from './support/toy-widget-operator.js';

const BIG_OBJECTS = Number(process.env.CHAOS_OBJECTS ?? 10_000);
const SMALL_OBJECTS = 10;
const WORK_MS = 2;
const FAIRNESS_BOUND_MS = 2_000;
const NAMESPACE = 'default';

describe('chaos: fairness across member clusters', () => {
  let fleet: TestFleet;
  let host: KubeClient;

  before(async () => {
    const crds = await readManifests(new URL('../examples/quickstart/widget-crd.yaml', import.meta.url));
    fleet = await TestFleet.start({ members: ['big', 'small'], memberCrds: crds });
    host = await KubeClient.fromKubeconfig({ kubeconfig: fleet.host.kubeconfig });
  });
  after(async () => {
    await host?.close();
    await fleet?.stop();
  });

  test('a 10-object member is reconciled within the bound while another member relists 10,000', async () => {
    const big = await fleet.member('big').directClient();
    const small = await fleet.member('small').directClient();
    await createMany(big, BIG_OBJECTS);
    await createMany(small, SMALL_OBJECTS);
    const secrets = await fleet.host.createNamespace('fleet');
    const reconciles: { cluster: string; name: string; generation: number; atMs: number }[] = [];
    const manager = new Manager({
      client: host,
      metricsPort: 0,
      healthPort: await freePort(),
      fleet: { provider: kubeconfigSecrets({ client: host, namespace: secrets }) },
    });
    manager
      .fleetController('widgets')
      .for<Widget>(WIDGET)
      // One worker, as the scenario says: the queue's turn-taking alone must keep the small member
      // served (fleet controllers default to 4 workers, 2 per member, since issue 35).
      .withOptions({ maxConcurrentReconciles: 1 })
      .complete(async (request, ctx) => {
        const w = await ctx.get();
        reconciles.push({
          cluster: request.cluster,
          name: request.name,
          generation: w?.metadata.generation ?? 0,
          atMs: Date.now(),
        });
        await new Promise((r) => setTimeout(r, WORK_MS));
      });
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      await fleet.registerMembers({ namespace: secrets, members: ['big'] });
      await waitFor(() => reconciles.some((r) => r.cluster === 'big'), 60_000);
      const smallAt = Date.now();
      await fleet.registerMembers({ namespace: secrets, members: ['small'] });
      await waitFor(
        () => new Set(reconciles.filter((r) => r.cluster === 'small').map((r) => r.name)).size === SMALL_OBJECTS,
        60_000,
      );
      const smallSyncedMs = Date.now() - smallAt;
      const bigDoneAtSmallSync = new Set(reconciles.filter((r) => r.cluster === 'big').map((r) => r.name)).size;
      // Edits of the small member while the big backlog drains.
      const editLatencies: number[] = [];
      for (let i = 0; i < SMALL_OBJECTS; i++) {
        const sentAt = Date.now();
        const written = await small.patch<Widget>(
          WIDGET,
          `w-${i}`,
          { spec: { size: 2 + (i % 9) } },
          { type: 'merge', namespace: NAMESPACE },
        );
        await waitFor(
          () =>
            reconciles.some(
              (r) => r.cluster === 'small' && r.name === `w-${i}` && r.generation >= written.metadata.generation,
            ),
          60_000,
        );
        editLatencies.push(Date.now() - sentAt);
      }
      const bigDone = new Set(reconciles.filter((r) => r.cluster === 'big').map((r) => r.name)).size;
      const notes = {
        'small member: engage → all 10 reconciled ms': smallSyncedMs,
        'small member: edit → reconcile p99 ms': percentile(editLatencies, 99),
        'big member keys done when small had synced': bigDoneAtSmallSync,
        'big member keys done after the small edits': bigDone,
      };
      console.log(JSON.stringify(notes, null, 2));
      const passed =
        smallSyncedMs <= FAIRNESS_BOUND_MS &&
        percentile(editLatencies, 99) <= FAIRNESS_BOUND_MS &&
        bigDone < BIG_OBJECTS;
      await recordChaosResult({
        scenario: 'fleet: fairness while a member relists',
        faults: [`member with ${BIG_OBJECTS} objects listed into the queue`],
        objects: BIG_OBJECTS + SMALL_OBJECTS,
        convergenceMs: smallSyncedMs,
        backupsStarted: null,
        backupsCompleted: null,
        apiWrites: SMALL_OBJECTS,
        reconcileOverlaps: null,
        lostUpdates: 0,
        outOfOrderStatusWrites: 0,
        passed,
        notes,
      });
      assert.ok(bigDone < BIG_OBJECTS, 'the big backlog was still draining: the measurement was under load');
      assert.ok(smallSyncedMs <= FAIRNESS_BOUND_MS, `small member synced in ${smallSyncedMs} ms`);
      assert.ok(percentile(editLatencies, 99) <= FAIRNESS_BOUND_MS, `edit p99 ${percentile(editLatencies, 99)} ms`);
    } finally {
      stop.abort();
      await running;
      await big.close();
      await small.close();
    }
  });
});

async function createMany(client: KubeClient, count: number): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `w-${i}`);
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names
        .slice(i, i + 50)
        .map((name) => client.create({ ...WIDGET, metadata: { name, namespace: NAMESPACE }, spec: { size: 1 } })),
    );
  }
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
