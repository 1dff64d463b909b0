/**
 * A small operator on dependents against the real API server: a Gizmo's Secret → ConfigMap →
 * Deployment are created in order, the Gizmo's conditions follow the Deployment to ready (its
 * status set by the test: TestEnv runs no Deployment controller), and deleting the Gizmo deletes
 * them in reverse order — the ConfigMap and Secret stay while the Deployment is still terminating —
 * before its finalizer goes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { Secret } from 'kubernetes-types/core/v1.js';
import { isNotFound } from '../../client/api-error.js';
import { kind } from '../../client/kind.js';
import { kinds } from '../../client/kinds.js';
import { KubeClient } from '../../client/kube-client.js';
import { computeKstatus } from '../../core/kstatus-rules.js';
import { createLogger } from '../../logging/create-logger.js';
import { Manager } from '../../manager/manager.js';
import { TestEnv } from '../../testing/control-plane/test-env.js';
import { getCondition } from '../conditions.js';
import { handleFinalizer } from '../finalizer-flow.js';
import { createNamespace, eventually, gizmo, GIZMO as GIZMO_TYPE, GIZMO_CRD, type Gizmo } from '../testing/int-env.js';
import { dependentsOf } from './dependents.js';

const GIZMO = kind<Gizmo>(GIZMO_TYPE.apiVersion, GIZMO_TYPE.kind);
const FINALIZER = 'helpers.operator-runtime.dev/dependents';

const dependents = dependentsOf(GIZMO, { fieldManager: 'gizmo-controller', notReadyRequeueAfterMs: 500 })
  .add({
    name: 'secret',
    kind: kinds.Secret,
    write: 'create',
    desired: (g): Secret => ({
      metadata: { name: `${g.metadata.name}-secret`, namespace: g.metadata.namespace },
      stringData: { password: 'not-random-in-a-test' },
    }),
  })
  .add({
    name: 'config',
    kind: kinds.ConfigMap,
    dependsOn: ['secret'],
    desired: (g, { dependency }) => ({
      metadata: { name: `${g.metadata.name}-config`, namespace: g.metadata.namespace },
      data: { size: String(g.spec.size), secretName: dependency('secret')?.metadata?.name ?? '' },
    }),
  })
  .add({
    name: 'deployment',
    kind: kinds.Deployment,
    dependsOn: ['config'],
    desired: (g): Deployment => {
      const labels = { app: `${g.metadata.name}` };
      return {
        metadata: { name: `${g.metadata.name}-app`, namespace: g.metadata.namespace },
        spec: {
          replicas: g.spec.size,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'registry.example/app:1',
                  envFrom: [{ configMapRef: { name: `${g.metadata.name}-config` } }],
                },
              ],
            },
          },
        },
      };
    },
    readyWhen: (d) => ({
      ready: (d.status?.readyReplicas ?? 0) >= (d.spec?.replicas ?? 1),
      message: `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 1} replicas ready`,
    }),
  })
  .build();

describe('dependents of a Gizmo, reconciled by a controller against a real API server', () => {
  let env: TestEnv;
  let client: KubeClient;
  let ns: string;
  const stop = new AbortController();
  let running: Promise<void>;

  before(async () => {
    env = await TestEnv.start({ crds: [GIZMO_CRD] });
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    ns = await createNamespace(client, 'dependents');
    const manager = new Manager({ client, metricsPort: 0, healthPort: 0, logger: createLogger({ level: 'silent' }) });
    manager
      .controller('gizmo')
      .for(GIZMO)
      .owns(kinds.Secret)
      .owns(kinds.ConfigMap)
      .owns(kinds.Deployment)
      .complete(async (_request, { get, signal, log }) => {
        const current = await get();
        if (!current) return;
        const step = await handleFinalizer(manager.client, current, {
          name: FINALIZER,
          signal,
          cleanup: (g) => dependents.cleanup(manager.client, g, { signal, logger: log }),
        });
        if (step.kind === 'stop') return step.result;
        return (await dependents.reconcile(manager.client, step.object, { signal, logger: log })).result;
      });
    running = manager.start(stop.signal);
  });

  after(async () => {
    stop.abort();
    await running;
    await client?.close();
    await env?.stop();
  });

  const read = (name: string) => client.get(GIZMO, name, { namespace: ns });
  const exists = async (type: Parameters<KubeClient['get']>[0], name: string) =>
    client.get(type, name, { namespace: ns }).then(
      () => true,
      (err: unknown) => (isNotFound(err) ? false : Promise.reject(err)),
    );

  test('creates the dependents in order and reports the Deployment not ready in the Gizmo conditions', async () => {
    await client.create<Gizmo>(gizmo(ns, 'g', { size: 2 }));
    const g = await eventually('the Gizmo reports its dependents', async () => {
      const obj = await read('g');
      assert.equal(getCondition(obj.status?.conditions, 'DeploymentReady')?.reason, 'NotReady');
      return obj;
    });
    const conditions = g.status?.conditions;
    assert.equal(getCondition(conditions, 'SecretReady')?.status, 'True');
    assert.equal(getCondition(conditions, 'ConfigReady')?.status, 'True');
    assert.equal(getCondition(conditions, 'DeploymentReady')?.message, '0/2 replicas ready');
    assert.equal(computeKstatus(g).status, 'InProgress');
    const deployment = await client.get(kinds.Deployment, 'g-app', { namespace: ns });
    assert.equal(deployment.metadata?.ownerReferences?.[0]?.uid, g.metadata.uid);
    const config = await client.get(kinds.ConfigMap, 'g-config', { namespace: ns });
    assert.deepEqual(config.data, { size: '2', secretName: 'g-secret' });
  });

  test('the Gizmo turns Ready once the Deployment reports its replicas ready', async () => {
    await client.patchStatus(
      kinds.Deployment,
      'g-app',
      { status: { replicas: 2, readyReplicas: 2 } },
      { type: 'merge', namespace: ns },
    );
    const g = await eventually('the Gizmo is Ready', async () => {
      const obj = await read('g');
      assert.equal(computeKstatus(obj).status, 'Current');
      return obj;
    });
    assert.equal(getCondition(g.status?.conditions, 'DeploymentReady')?.message, '2/2 replicas ready');
    assert.equal(getCondition(g.status?.conditions, 'Ready')?.reason, 'DependentsReady');
  });

  test('deleting the Gizmo deletes the Deployment first, then the ConfigMap and Secret, then lets the Gizmo go', async () => {
    // A finalizer of someone else's holds the Deployment: what it depends on must wait for it.
    await client.patch(
      kinds.Deployment,
      'g-app',
      { metadata: { finalizers: ['example.com/hold'] } },
      { type: 'merge', namespace: ns },
    );
    await client.delete(GIZMO, 'g', { namespace: ns });
    await eventually('the Deployment is being deleted', async () => {
      const d = await client.get(kinds.Deployment, 'g-app', { namespace: ns });
      assert.ok(d.metadata?.deletionTimestamp);
    });
    // The pass that deleted it left the ConfigMap and Secret waiting, and so does the next (1 s later).
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal(await exists(kinds.ConfigMap, 'g-config'), true);
    assert.equal(await exists(kinds.Secret, 'g-secret'), true);
    assert.deepEqual((await read('g')).metadata.finalizers, [FINALIZER]);
    await client.patch(kinds.Deployment, 'g-app', { metadata: { finalizers: null } }, { type: 'merge', namespace: ns });
    await eventually('the Gizmo and its dependents are gone', async () => {
      assert.equal(await exists(GIZMO, 'g'), false);
      assert.equal(await exists(kinds.Deployment, 'g-app'), false);
      assert.equal(await exists(kinds.ConfigMap, 'g-config'), false);
      assert.equal(await exists(kinds.Secret, 'g-secret'), false);
    });
  });
});
