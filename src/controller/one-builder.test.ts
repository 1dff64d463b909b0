import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { Registry } from 'prom-client';
import { kinds } from '../client/kinds.js';
import { whenAborted } from '../core/abort.js';
import { FakeClock } from '../core/fake-clock.js';
import { silentLogger } from '../core/logger.js';
import type { ClusterEvents, ClusterProvider } from '../fleet/cluster-provider.js';
import { Manager } from '../manager/manager.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import type { ControllerDeclaration } from './controller-declaration.js';
import type { ObjectReconcileContext, ReconcileRequest } from './reconciler.js';

const CM = kinds.ConfigMap;
const configMap = (name: string, value: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns' },
  data: { value },
});

/** Engages one member at start. */
const oneMember = (name: string, client: FakeClient): ClusterProvider => ({
  description: 'one member',
  async start(signal: AbortSignal, events: ClusterEvents) {
    events.engage({ name, revision: '1', connect: () => Promise.resolve(client) });
    await whenAborted(signal);
  },
});

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`never happened: ${what}`);
}

interface Seen {
  readonly request: ReconcileRequest;
  readonly contextKeys: readonly string[];
  readonly cluster: string;
  readonly fromGet: string | undefined;
  readonly fromClusterClient: string | undefined;
}

test('one reconciler registered for the host and for a fleet gets the same context shape, each with its own cluster', async () => {
  const host = new FakeClient({ objects: [configMap('a', 'host')] });
  const east = new FakeClient({ objects: [configMap('a', 'east')] });
  const manager = new Manager({
    client: host,
    clock: new FakeClock(0),
    metricsPort: 0,
    healthPort: 0,
    logger: silentLogger,
    registry: new Registry(),
    fleet: { provider: oneMember('east', east) },
  });
  const seen: Seen[] = [];
  // Written once, for `ReconcileRequest`: a fleet controller's `FleetRequest` is one too.
  const reconcile = async (request: ReconcileRequest, ctx: ObjectReconcileContext<ConfigMap>): Promise<void> => {
    const viaClient = await ctx.cluster.client.get(CM, request.name, { namespace: 'ns', signal: ctx.signal });
    seen.push({
      request,
      contextKeys: Object.keys(ctx).sort(),
      cluster: ctx.cluster.name,
      fromGet: (await ctx.get())?.data?.['value'],
      fromClusterClient: viaClient.data?.['value'],
    });
  };
  // The watches and writes, declared once for both.
  const declare = <B extends ControllerDeclaration>(builder: B): B =>
    builder.writes(CM, ['patch']).withOptions({ needLeaderElection: false });
  declare(manager.controller('host-configmaps').for(CM)).complete(reconcile);
  declare(manager.fleetController('member-configmaps').for(CM)).complete(reconcile);

  const stop = new AbortController();
  const done = manager.start(stop.signal);
  try {
    await until('both clusters reconciled', () => seen.length >= 2);
  } finally {
    stop.abort();
    await done;
  }
  const byCluster = new Map(seen.map((s) => [s.cluster, s]));
  const [fromHost, fromEast] = [byCluster.get(''), byCluster.get('east')];
  assert.ok(fromHost && fromEast, JSON.stringify(seen));
  assert.deepEqual(fromHost.contextKeys, fromEast.contextKeys, 'one context type');
  assert.deepEqual(fromHost.contextKeys, ['cluster', 'get', 'log', 'reconcileID', 'signal']);
  assert.deepEqual(fromHost.request, { namespace: 'ns', name: 'a' }, 'a host request names no cluster');
  assert.deepEqual(fromEast.request, { cluster: 'east', namespace: 'ns', name: 'a' });
  assert.deepEqual([fromHost.fromGet, fromHost.fromClusterClient], ['host', 'host']);
  assert.deepEqual([fromEast.fromGet, fromEast.fromClusterClient], ['east', 'east']);
  assert.ok(
    manager.permissions().some((p) => p.reason.includes('host-configmaps')) &&
      manager.memberPermissions().some((p) => p.reason.includes('member-configmaps')),
    'the host controller declares host permissions, the fleet controller member permissions',
  );
});

test('a fleet controller refuses what only a host controller has, and a host controller the per-cluster cap', () => {
  const manager = new Manager({
    client: new FakeClient(),
    clock: new FakeClock(0),
    metricsPort: 0,
    healthPort: 0,
    logger: silentLogger,
    registry: new Registry(),
    fleet: { provider: oneMember('east', new FakeClient()) },
  });
  const keys = (async function* () {})();
  assert.throws(
    () =>
      manager
        .fleetController('f')
        .for(CM)
        .reconcileOn(keys)
        .complete(async () => {}),
    /reconcileOn.*names no member cluster/,
  );
  assert.throws(
    () =>
      manager
        .controller('h')
        .for(CM)
        .withOptions({ maxConcurrentReconcilesPerCluster: 1 })
        .complete(async () => {}),
    /maxConcurrentReconcilesPerCluster.*fleet controllers only/,
  );
});
