import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isNotFound } from '../client/api-error.js';
import { FakeClock } from '../core/fake-clock.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { Manager } from './manager.js';

const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace' } as const;
const CLUSTER_ROLE = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' } as const;
const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

async function running(manager: Manager, run: () => Promise<void>): Promise<void> {
  const stop = new AbortController();
  const started = manager.start(stop.signal);
  try {
    await run();
  } finally {
    stop.abort();
    await started;
  }
}

// Regression: the manager never passed isNamespaced to its InformerCache, so with `namespaces` set a
// cluster-scoped read through manager.client threw NamespaceNotCachedError.
test('a Manager with namespaces reads a Namespace and a ClusterRole through manager.client', async () => {
  const fake = new FakeClient({
    objects: [
      { ...NAMESPACE, metadata: { name: 'team-a' } },
      { ...CLUSTER_ROLE, metadata: { name: 'reader' }, rules: [] },
      { ...CONFIG_MAP, metadata: { name: 'in-a', namespace: 'team-a' } },
      { ...CONFIG_MAP, metadata: { name: 'in-b', namespace: 'team-b' } },
    ],
  });
  const manager = new Manager({
    client: fake,
    clock: new FakeClock(0),
    metricsPort: 0,
    healthPort: 0,
    namespaces: ['team-a'],
  });
  await running(manager, async () => {
    assert.equal((await manager.client.get(NAMESPACE, 'team-a')).metadata?.name, 'team-a');
    assert.equal((await manager.client.get(CLUSTER_ROLE, 'reader')).metadata?.name, 'reader');
    assert.deepEqual(
      (await manager.client.list(CLUSTER_ROLE)).items.map((r) => r.metadata?.name),
      ['reader'],
    );
    await assert.rejects(manager.client.get(CLUSTER_ROLE, 'absent'), (e: unknown) => isNotFound(e));
    // Cluster-scoped kinds are watched cluster-wide (one informer), namespaced ones per namespace.
    assert.equal(manager.cache.informersFor(CLUSTER_ROLE).length, 1);
    assert.deepEqual(
      (await manager.client.list(CONFIG_MAP)).items.map((c) => c.metadata?.name),
      ['in-a'],
    );
  });
});

test('the scope comes from the RestMapper option when one is given, not from the client', async () => {
  const fake = new FakeClient({ objects: [{ ...NAMESPACE, metadata: { name: 'team-a' } }] });
  const asked: string[] = [];
  const manager = new Manager({
    client: fake,
    clock: new FakeClock(0),
    metricsPort: 0,
    healthPort: 0,
    namespaces: ['team-a'],
    restMapper: {
      cached: (t) => (asked.includes(t.kind) ? fake.mapper.cached(t) : undefined),
      mapping: (t, signal) => {
        asked.push(t.kind);
        return fake.mapper.mapping(t, signal);
      },
    },
  });
  await running(manager, async () => {
    assert.equal((await manager.client.get(NAMESPACE, 'team-a')).metadata?.name, 'team-a');
    assert.equal((await manager.client.get(NAMESPACE, 'team-a')).metadata?.name, 'team-a');
    assert.deepEqual(asked, ['Namespace'], 'mapped once, before the first cache read');
  });
});
