import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TestEnv } from './test-env.js';
import { eventually } from './eventually.js';

interface StatefulSet {
  status?: { readyReplicas?: number; replicas?: number };
}

describe('TestEnv pod simulation (scheduler and kubelet played by an operator-runtime controller)', () => {
  let env: TestEnv;
  const sts = '/apis/apps/v1/namespaces/default/statefulsets/web';

  before(async () => {
    env = await TestEnv.start({ controllerManager: true, simulatePods: { readyDelayMs: 200 } });
  });
  after(async () => {
    await env?.stop();
  });

  test('a StatefulSet reports its replicas ready', async () => {
    const res = await env.request('POST', '/apis/apps/v1/namespaces/default/statefulsets', {
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        serviceName: 'web',
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] },
        },
      },
    });
    assert.equal(res.status, 201);
    await eventually(
      '2 ready replicas',
      async () => (await env.request<StatefulSet>('GET', sts)).body.status?.readyReplicas === 2,
    );
    const node = await env.request<{ status: { conditions: { type: string; status: string }[] } }>(
      'GET',
      '/api/v1/nodes/operator-runtime-sim-node',
    );
    assert.ok(node.body.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'));
  });

  test('a deleted pod is recreated by the StatefulSet and becomes ready again', async () => {
    const before = await env.request<{ metadata: { uid: string } }>('GET', '/api/v1/namespaces/default/pods/web-0');
    const del = await env.request('DELETE', '/api/v1/namespaces/default/pods/web-0');
    assert.equal(del.status, 200);
    await eventually('a new web-0, ready', async () => {
      const pod = await env.request<{
        metadata: { uid: string };
        status?: { conditions?: { type: string; status: string }[] };
      }>('GET', '/api/v1/namespaces/default/pods/web-0');
      return (
        pod.status === 200 &&
        pod.body.metadata.uid !== before.body.metadata.uid &&
        pod.body.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
      );
    });
    await eventually(
      '2 ready replicas again',
      async () => (await env.request<StatefulSet>('GET', sts)).body.status?.readyReplicas === 2,
    );
  });

  test('scaling down removes the pod (the simulated kubelet finishes graceful deletion)', async () => {
    await env.request('PATCH', sts, { spec: { replicas: 1 } }, { 'content-type': 'application/merge-patch+json' });
    await eventually(
      'web-1 gone',
      async () => (await env.request('GET', '/api/v1/namespaces/default/pods/web-1')).status === 404,
    );
    await eventually(
      '1 ready replica',
      async () => (await env.request<StatefulSet>('GET', sts)).body.status?.readyReplicas === 1,
    );
  });
});
