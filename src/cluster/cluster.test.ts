import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { silentLogger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { Cluster } from './cluster.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
const configMap = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', labels },
});

function cluster(apiClient: FakeClient, options: { informerNamePrefix?: string } = {}): Cluster {
  return new Cluster({
    apiClient,
    clock: new FakeClock(0),
    logger: silentLogger,
    registry: createMetricsRegistry(),
    ...options,
  });
}

test('a cluster reads through its own cache and sees its own writes at once', async () => {
  const c = cluster(new FakeClient({ objects: [configMap('a')] }));
  const stop = new AbortController();
  const running = c.start(stop.signal);
  try {
    assert.equal((await c.client.get<KubeObject>(CM, 'a', { namespace: 'ns' })).metadata?.name, 'a');
    assert.equal(c.informers.list().length, 1, 'the read started the kind informer of its own factory');
    await c.waitForSync(stop.signal);
    assert.ok(c.hasSynced() && c.healthy(3));
    await c.client.create(configMap('b'));
    const listed = await c.client.list<KubeObject>(CM, { namespace: 'ns' });
    assert.deepEqual(listed.items.map((o) => o.metadata?.name).sort(), ['a', 'b'], 'read-your-own-writes');
  } finally {
    stop.abort();
    await running;
  }
});

test("a cache view narrows a kind's selector over the cluster's factory and leaves the cluster's cache as it is", () => {
  const c = cluster(new FakeClient(), { informerNamePrefix: 'east/' });
  c.cache.informersFor(CM);
  const view = c.cacheView({ labelSelectorsByKind: [{ ...CM, labelSelector: 'app=web' }] });
  assert.notEqual(view, c.cache);
  view.informersFor(CM);
  assert.equal(c.cacheView({}), c.cache, 'nothing to narrow: the cluster cache itself');
  const names = c.informers.list().map((i) => i.name);
  assert.equal(names.length, 2, 'one factory holds both informers');
  assert.ok(
    names.every((n) => n.startsWith('east/')),
    names.join(', '),
  );
});

test('stopping a cluster closes the API client it was given when the client can be closed', async () => {
  let closed = 0;
  const apiClient = new (class extends FakeClient {
    close(): Promise<void> {
      closed++;
      return Promise.resolve();
    }
  })();
  await cluster(apiClient).stop();
  assert.equal(closed, 1);
});
