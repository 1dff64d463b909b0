import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isNotFound } from '../client/api-error.js';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { Manager } from './manager.js';

const SECRET = { apiVersion: 'v1', kind: 'Secret' } as const;
const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const MANAGED = { 'app.kubernetes.io/managed-by': 'db-operator' };
const secret = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  ...SECRET,
  metadata: { name, namespace: 'ns', labels },
});

async function withManager(fake: FakeClient, run: (manager: Manager) => Promise<void>): Promise<void> {
  const manager = new Manager({
    client: fake,
    clock: new FakeClock(0),
    metricsPort: 0,
    healthPort: 0,
    bindHost: '127.0.0.1',
    labelSelectorsByKind: [{ ...SECRET, labelSelector: 'app.kubernetes.io/managed-by=db-operator' }],
  });
  // An owned kind declared through the builder uses the same filtered informer as reads do.
  manager
    .controller('db')
    .for({ apiVersion: 'v1', kind: 'ConfigMap' })
    .owns(SECRET)
    .complete(async () => {});
  // Runs once the caches have synced (runnables that every replica runs start after the sync).
  const synced = new Promise<void>((resolve) =>
    manager.add({ start: async () => resolve() }, { needLeaderElection: false }),
  );
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await synced;
    await run(manager);
  } finally {
    stop.abort();
    await running;
  }
}

test('labelSelectorsByKind: the cache holds only the selected objects of that kind, for reads and for owns()', async () => {
  const fake = new FakeClient();
  await fake.create(secret('ours', MANAGED));
  await fake.create(secret('tenant-token'));
  await fake.create(secret('other-operator', { 'app.kubernetes.io/managed-by': 'someone-else' }));
  await fake.create({ ...CONFIG_MAP, metadata: { name: 'cm', namespace: 'ns' } });
  await withManager(fake, async (manager) => {
    const secretInformers = manager.informers.list().filter((i) => i.name.includes('Secret'));
    assert.equal(secretInformers.length, 1, 'owns(Secret) and reads share one informer');
    assert.match(secretInformers[0]!.name, /labels=app\.kubernetes\.io\/managed-by=db-operator/);
    const cached = await manager.cache.list(SECRET);
    assert.deepEqual(
      cached.map((s) => s.metadata?.name),
      ['ours'],
    );
    await assert.rejects(manager.cache.get(SECRET, { namespace: 'ns', name: 'tenant-token' }), (e: unknown) =>
      isNotFound(e),
    );
    assert.equal((await manager.cache.get(SECRET, { namespace: 'ns', name: 'ours' })).metadata?.name, 'ours');
    // Other kinds are not filtered.
    assert.equal((await manager.cache.list(CONFIG_MAP)).length, 1);
  });
});

test('a malformed labelSelectorsByKind selector is refused when the manager is built, not at the first read', () => {
  assert.throws(
    () => new Manager({ client: new FakeClient(), labelSelectorsByKind: [{ ...SECRET, labelSelector: 'a in (' }] }),
    (e: unknown) => (e as { code?: string }).code !== undefined,
  );
});
