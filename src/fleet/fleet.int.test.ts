/**
 * The fleet against real API servers: a host kube-apiserver 1.20 holding the members' kubeconfig
 * Secrets, and two member clusters (1.20, each behind its own link and fault proxy). One manager
 * with the kubeconfigSecrets provider and a fleet controller writing Widgets' observedGeneration in
 * the member each request names. Members join when their Secret appears, leave when it is deleted,
 * and one member cut off leaves the other converging and /readyz green.
 */
import { freePort } from '../testing/control-plane/free-port.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { kinds } from '../client/kinds.js';
import { KubeClient } from '../client/kube-client.js';
import type { KubeObject } from '../core/object-key.js';
import { Manager } from '../manager/manager.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { WIDGET_CRD } from '../testing/conformance/client-conformance.js';
import { TestFleet } from '../testing/fleet/test-fleet.js';
import { kubeconfigSecrets } from './providers/kubeconfig-secrets.js';
import type { FleetReconcileContext } from './fleet-reconciler.js';
import type { FleetRequest } from './fleet-request.js';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };
const EVENT = kinds.Event;
const NAMESPACE = 'default';
/** What the test allows from a Secret's creation to the member's first reconcile (measured: see the log line). */
const JOIN_BOUND_MS = 15_000;

interface Widget extends KubeObject {
  metadata: { name: string; namespace: string; resourceVersion: string; generation: number };
  spec: { size: number };
  status?: { observedGeneration?: number };
}

interface Reconciled {
  readonly cluster: string;
  readonly name: string;
  readonly atMs: number;
}

describe('a fleet of real API servers', () => {
  let fleet: TestFleet;
  let host: KubeClient;
  let secretsNamespace: string;
  const direct = new Map<string, KubeClient>();
  const reconciled: Reconciled[] = [];
  let manager: Manager;
  const stop = new AbortController();
  let running: Promise<void>;

  before(async () => {
    fleet = await TestFleet.start({ members: ['east', 'west'], memberCrds: [WIDGET_CRD] });
    host = await KubeClient.fromKubeconfig({ kubeconfig: fleet.host.kubeconfig });
    secretsNamespace = await fleet.host.createNamespace('fleet');
    for (const m of fleet.members) direct.set(m.name, await m.directClient());
    manager = new Manager({
      client: host,
      metricsPort: 0,
      healthPort: await freePort(),
      console: { port: 0 },
      fleet: { provider: kubeconfigSecrets({ client: host, namespace: secretsNamespace }) },
    });
    const events = manager.memberEventRecorder('widget-fleet');
    manager
      .fleetController('widget-status')
      .for<Widget>(WIDGET)
      .complete(async (request: FleetRequest, ctx: FleetReconcileContext<Widget>) => {
        reconciled.push({ cluster: request.cluster, name: request.name, atMs: Date.now() });
        const w = await ctx.get();
        if (!w || w.status?.observedGeneration === w.metadata.generation) return;
        await ctx.cluster.apiClient.update(
          { ...w, status: { observedGeneration: w.metadata.generation } },
          { subresource: 'status', signal: ctx.signal },
        );
        events.in(ctx.cluster).event(w, 'Normal', 'Observed', `generation ${w.metadata.generation}`);
      });
    running = manager.start(stop.signal);
    await eventually(
      'manager ready',
      async () => (await fetch(`http://127.0.0.1:${manager.endpoints.healthPort}/readyz`)).ok,
    );
  });

  after(async () => {
    stop.abort();
    await running;
    await host?.close();
    await fleet?.stop();
  });

  async function createWidget(cluster: string, name: string): Promise<void> {
    await direct.get(cluster)!.create({ ...WIDGET, metadata: { name, namespace: NAMESPACE }, spec: { size: 1 } });
  }

  async function observed(cluster: string, name: string): Promise<boolean> {
    const w = await direct.get(cluster)!.get<Widget>(WIDGET, name, { namespace: NAMESPACE });
    return w?.status?.observedGeneration === w?.metadata.generation;
  }

  test('a member joins when its kubeconfig Secret is created, and its objects are reconciled in it', async () => {
    await createWidget('east', 'w-1');
    await createWidget('west', 'w-1');
    const t0 = Date.now();
    await fleet.registerMembers({ namespace: secretsNamespace, members: ['east'] });
    await eventually('east/w-1 reconciled', () => reconciled.some((r) => r.cluster === 'east' && r.name === 'w-1'), {
      timeoutMs: JOIN_BOUND_MS,
    });
    const joinMs = reconciled.find((r) => r.cluster === 'east')!.atMs - t0;
    console.log(`fleet: Secret created → first reconcile of the member: ${joinMs} ms`);
    await eventually('east/w-1 status written in east', () => observed('east', 'w-1'));
    // west has no Secret yet: never engaged, never reconciled, its Widget untouched.
    assert.equal(manager.fleet!.cluster('west'), undefined);
    assert.ok(!reconciled.some((r) => r.cluster === 'west'));
    assert.equal(await observed('west', 'w-1'), false);

    await fleet.registerMembers({ namespace: secretsNamespace, members: ['west'] });
    await eventually('west/w-1 status written in west', () => observed('west', 'w-1'), { timeoutMs: JOIN_BOUND_MS });
    assert.deepEqual(
      manager
        .fleet!.clusters()
        .map((c) => c.name)
        .sort(),
      ['east', 'west'],
    );
    // The console lists both members and their informers, and shows no credential of theirs.
    const state = await eventually('the console shows both members synced', async () => {
      const body = await (await fetch(`${manager.endpoints.consoleUrl!}api/state`)).text();
      const s = JSON.parse(body) as {
        clusters: { name: string; synced: boolean; objects: number }[];
        informers: { name: string }[];
      };
      return s.clusters.length === 2 && s.clusters.every((c) => c.synced) ? { s, body } : undefined;
    });
    assert.deepEqual(
      state.s.clusters.map((c) => [c.name, c.objects]),
      [
        ['east', 1],
        ['west', 1],
      ],
    );
    assert.ok(state.s.informers.some((i) => i.name.startsWith('east/')));
    // Events go to the member the Widget lives in, and the console names the cluster.
    await eventually('the Event about east/w-1 is in east', async () =>
      (await direct.get('east')!.list(EVENT, { namespace: NAMESPACE })).items.some(
        (e) => e.involvedObject?.name === 'w-1' && e.reason === 'Observed',
      ),
    );
    // The operator records west's Event after its status write returns through west's proxy; the
    // test's direct read can see that write first, so the console is asked until both are there.
    const consoleClusters = await eventually('the console shows Observed events from both members', async () => {
      const { events } = JSON.parse(await (await fetch(`${manager.endpoints.consoleUrl!}api/state`)).text()) as {
        events: { cluster?: string; reason: string }[];
      };
      const clusters = [...new Set(events.filter((e) => e.reason === 'Observed').map((e) => e.cluster))].sort();
      return clusters.length === 2 ? clusters : undefined;
    });
    assert.deepEqual(consoleClusters, ['east', 'west']);
    for (const member of fleet.members)
      for (const { user } of member.kubeconfig.users)
        if (typeof user.token === 'string')
          assert.ok(!state.body.includes(user.token), `no token of ${member.name} in the console`);
  });

  test('one member cut off: the other converges, /readyz stays green (readiness: host)', async () => {
    fleet.member('west').cutOff();
    try {
      await createWidget('east', 'w-2');
      await createWidget('west', 'w-2'); // straight to west's API server: the operator cannot see it yet
      await eventually('east/w-2 converged while west is cut off', () => observed('east', 'w-2'), {
        timeoutMs: 10_000,
      });
      assert.ok(
        (await fetch(`http://127.0.0.1:${manager.endpoints.healthPort}/readyz`)).ok,
        '/readyz depends on the host only',
      );
    } finally {
      fleet.member('west').heal();
    }
    const healedAt = Date.now();
    await eventually('west/w-2 converged after the heal', () => observed('west', 'w-2'), { timeoutMs: 60_000 });
    console.log(`fleet: cut-off member converged ${Date.now() - healedAt} ms after the heal`);
  });

  test('a member whose Secret is deleted leaves: no reconcile for it after, its series gone', async () => {
    const secret = fleet.member('east').secretManifest({ namespace: secretsNamespace }).metadata.name;
    await host.delete({ apiVersion: 'v1', kind: 'Secret' }, secret, { namespace: secretsNamespace });
    await eventually('east left', () => manager.fleet!.cluster('east') === undefined);
    const leftAt = Date.now();
    await createWidget('east', 'w-3');
    await createWidget('west', 'w-3');
    await eventually('west/w-3 converged', () => observed('west', 'w-3'));
    await delay(1_000);
    assert.deepEqual(
      reconciled.filter((r) => r.cluster === 'east' && r.atMs >= leftAt),
      [],
      'no reconcile of a member after it left',
    );
    assert.equal(await observed('east', 'w-3'), false);
    const metrics = await manager.registry.metrics();
    assert.ok(!/cluster="east"/.test(metrics), 'no metric series of the member that left');
    assert.match(metrics, /cluster="west"/);
  });
});
