/**
 * A sharded manager's `manager.client` on a real kube-apiserver 1.20 (label mode): a reconciler
 * reading its own primary kind through it gets the object from the API server, and the manager
 * never starts an unfiltered informer of the kind (which would hold every object again on every
 * replica, undoing the sharding).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import type { KubeObject } from '../core/object-key.js';
import { Manager } from '../manager/manager.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { readManifests } from '../testing/control-plane/manifests.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { shardLabel } from './sharding-options.js';

const crdFile = new URL('../../examples/quickstart/widget-crd.yaml', import.meta.url);
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const RING = 'widget-client';
const NAMESPACE = 'default';
const WIDGETS = 5;
const TIMINGS = { leaseDurationMs: 8_000, renewDeadlineMs: 6_000, retryPeriodMs: 1_000 };

interface Widget extends KubeObject {
  spec: { size: number };
}

let env: TestEnv;
let admin: KubeClient;
let client: KubeClient;

before(async () => {
  env = await TestEnv.start({ crds: await readManifests(crdFile) });
  admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
  client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
  await Promise.all(
    Array.from({ length: WIDGETS }, (_, i) =>
      admin.create<Widget>({ ...WIDGET, metadata: { name: `w-${i}`, namespace: NAMESPACE }, spec: { size: 1 } }),
    ),
  );
});

after(async () => {
  await client?.close();
  await admin?.close();
  await env?.stop();
});

test("a sharded manager's client reads its primary kind from the API server: no unfiltered informer of the kind starts", async () => {
  const manager = new Manager({
    client,
    metricsPort: 0,
    healthPort: 0,
    gracefulShutdownMs: 5_000,
    sharding: { ring: RING, namespace: NAMESPACE, identity: 'only', mode: 'label', ...TIMINGS },
  });
  const read = new Map<string, number>();
  manager
    .controller('widget')
    .for(WIDGET)
    .complete(async (req, ctx) => {
      // What the reference operator's reconciler does on a write conflict: re-read through manager.client.
      const fresh = await manager.client.get<Widget>(WIDGET, req.name, {
        namespace: req.namespace,
        signal: ctx.signal,
      });
      const all = await manager.client.list<Widget>(WIDGET, { namespace: req.namespace, signal: ctx.signal });
      assert.equal(all.items.length, WIDGETS, 'a list through manager.client sees every Widget, not a share');
      read.set(req.name, fresh.spec.size);
    });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await eventually('every Widget reconciled by the one member', () => read.size === WIDGETS, { timeoutMs: 60_000 });
    // Uncached: a write is seen by the next read at once, not after the watch delivers it.
    await admin.patch(WIDGET, 'w-0', { spec: { size: 7 } }, { type: 'merge', namespace: NAMESPACE });
    assert.equal((await manager.client.get<Widget>(WIDGET, 'w-0', { namespace: NAMESPACE })).spec.size, 7);
    const widgetInformers = manager.informers
      .list()
      .filter((i) => i.name.includes('Widget'))
      .map((i) => i.name);
    assert.ok(widgetInformers.length > 0, 'the controller watches its share');
    assert.deepEqual(
      widgetInformers.filter((name) => !name.includes(shardLabel(RING))),
      [],
      `every Widget informer is shard-filtered: ${JSON.stringify(widgetInformers)}`,
    );
  } finally {
    stop.abort();
    await running;
  }
});
