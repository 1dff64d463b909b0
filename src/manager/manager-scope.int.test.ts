import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isNotFound } from '../client/api-error.js';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { Manager } from './manager.js';

const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace' } as const;
const CLUSTER_ROLE = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' } as const;
const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

// Regression: the manager never passed isNamespaced to its InformerCache, so with `namespaces` set a
// cluster-scoped read through manager.client threw NamespaceNotCachedError.
describe('a Manager restricted to namespaces, against a real API server', () => {
  let env: TestEnv;
  let client: KubeClient;
  let manager: Manager;
  const stop = new AbortController();
  let running: Promise<void>;

  before(async () => {
    env = await TestEnv.start();
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    await client.create({ ...NAMESPACE, metadata: { name: 'team-a' } });
    await client.create({ ...NAMESPACE, metadata: { name: 'team-b' } });
    await client.create({ ...CLUSTER_ROLE, metadata: { name: 'scope-test-reader' }, rules: [] });
    await client.create({ ...CONFIG_MAP, metadata: { name: 'in-a', namespace: 'team-a' } });
    await client.create({ ...CONFIG_MAP, metadata: { name: 'in-b', namespace: 'team-b' } });
    manager = new Manager({ client, namespaces: ['team-a'], metricsPort: 0, healthPort: 0 });
    running = manager.start(stop.signal);
  });

  after(async () => {
    stop.abort();
    await running;
    await client?.close();
    await env?.stop();
  });

  test('reads a Namespace and a ClusterRole through manager.client', async () => {
    assert.equal((await manager.client.get(NAMESPACE, 'team-b')).metadata?.name, 'team-b');
    assert.equal((await manager.client.get(CLUSTER_ROLE, 'scope-test-reader')).metadata?.name, 'scope-test-reader');
    await assert.rejects(manager.client.get(CLUSTER_ROLE, 'absent'), (e: unknown) => isNotFound(e));
    // Cluster-scoped kinds are one cluster-wide informer; namespaced kinds stay within `namespaces`.
    assert.equal(manager.cache.informersFor(CLUSTER_ROLE).length, 1);
    assert.deepEqual(
      (await manager.client.list(CONFIG_MAP)).items
        .map((c) => c.metadata?.name)
        .filter((n) => n !== 'kube-root-ca.crt'),
      ['in-a'],
    );
  });
});
