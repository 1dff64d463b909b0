import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../../client/kube-client.js';
import { ApiError } from '../../client/api-error.js';
import type { Logger } from '../../core/logger.js';
import type { KubeObject } from '../../core/object-key.js';
import { TestEnv } from './test-env.js';

/**
 * A CRD with CEL rules: a cross-field rule on `spec` and a transition rule (`oldSelf`) that makes
 * `spec.storageClass` immutable once set.
 */
const GIZMO_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gizmos.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [
                  { rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
                ],
                properties: {
                  replicas: { type: 'integer' },
                  maxReplicas: { type: 'integer' },
                  storageClass: {
                    type: 'string',
                    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'storageClass is immutable' }],
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};
const GIZMO = { apiVersion: 'example.com/v1', kind: 'Gizmo' } as const;
type Gizmo = KubeObject & { spec: { replicas: number; maxReplicas: number; storageClass?: string; bogus?: number } };

function invalidWith(message: string, field: string): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof ApiError && e.status === 422 && e.reason === 'Invalid', String(e));
    assert.ok(e.message.includes(message), e.message);
    assert.deepEqual(
      e.details?.causes?.map((c) => c.field),
      [field],
    );
    return true;
  };
}

describe('validation on the Kubernetes 1.36 CRD-only API server', () => {
  let env: TestEnv;
  let client: KubeClient;
  const warnLines: Record<string, unknown>[] = [];
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (obj) => void warnLines.push(obj),
    error: () => {},
    child: () => logger,
  };

  before(async () => {
    env = await TestEnv.start({ server: 'modern', crds: [GIZMO_CRD] });
    client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath, logger });
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });

  test('a CEL rule rejects an invalid object with the server’s message', async () => {
    await assert.rejects(
      client.create<Gizmo>({
        ...GIZMO,
        metadata: { name: 'too-many', namespace: 'cel' },
        spec: { replicas: 5, maxReplicas: 3 },
      }),
      invalidWith(
        'Gizmo.example.com "too-many" is invalid: spec: Invalid value: replicas must not exceed maxReplicas',
        'spec',
      ),
    );
  });

  test('a transition rule (oldSelf) rejects changing an immutable field, on update and on patch', async () => {
    const created = await client.create<Gizmo>({
      ...GIZMO,
      metadata: { name: 'g', namespace: 'cel' },
      spec: { replicas: 1, maxReplicas: 3, storageClass: 'fast' },
    });
    const message =
      'Gizmo.example.com "g" is invalid: spec.storageClass: Invalid value: "slow": storageClass is immutable';
    await assert.rejects(
      client.update<Gizmo>({ ...created, spec: { ...created.spec, storageClass: 'slow' } }),
      invalidWith(message, 'spec.storageClass'),
    );
    await assert.rejects(
      client.patch(GIZMO, 'g', { spec: { storageClass: 'slow' } }, { type: 'merge', namespace: 'cel' }),
      invalidWith(message, 'spec.storageClass'),
    );
    const scaled = await client.patch<Gizmo>(
      GIZMO,
      'g',
      { spec: { replicas: 2 } },
      { type: 'merge', namespace: 'cel' },
    );
    assert.equal(scaled.spec.replicas, 2, 'a change the rules allow goes through');
  });

  test("fieldValidation: 'Warn' surfaces the server's Warning headers to the caller and in the client's log", async () => {
    warnLines.length = 0;
    const warnings: string[] = [];
    const created = await client.create<Gizmo>(
      { ...GIZMO, metadata: { name: 'warned', namespace: 'cel' }, spec: { replicas: 1, maxReplicas: 1, bogus: 7 } },
      { fieldValidation: 'Warn', onWarnings: (w) => warnings.push(...w) },
    );
    assert.deepEqual(warnings, ['unknown field "spec.bogus"']);
    assert.equal(created.spec.bogus, undefined, 'pruned');
    assert.equal(warnLines.length, 1);
    assert.match(JSON.stringify(warnLines[0]), /unknown field/);
  });
});

test('Kubernetes 1.20 ignores CEL rules (x-kubernetes-validations arrived in 1.25): the same invalid object is stored', async () => {
  const env = await TestEnv.start({ crds: [GIZMO_CRD] });
  try {
    const res = await env.request('POST', '/apis/example.com/v1/namespaces/default/gizmos', {
      ...GIZMO,
      metadata: { name: 'too-many' },
      spec: { replicas: 5, maxReplicas: 3 },
    });
    assert.equal(res.status, 201);
  } finally {
    await env.stop();
  }
});
