/**
 * `ownerReferencesPermissionEnforcement: true` runs kube-apiserver's OwnerReferencesPermissionEnforcement
 * admission plugin, as OpenShift does: a user may set `blockOwnerDeletion` on an ownerReference
 * only with `update` on the owner's `<kind>/finalizers`. Without the option the same write passes,
 * which is how an RBAC test can pass locally and the operator fail on such a cluster.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { ApiError } from '../../client/api-error.js';
import { KubeClient } from '../../client/kube-client.js';
import { customResourceDefinition } from '../../crd/custom-resource-definition.js';
import { defineCustomKind } from '../../crd/custom-kind.js';
import { TestEnv } from './test-env.js';

const GROUP = 'ownerrefs.test.operator-runtime.dev';
const GADGET = defineCustomKind({
  group: GROUP,
  names: { kind: 'Gadget', plural: 'gadgets' },
  scope: 'Namespaced',
  versions: [{ name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ size: Type.Integer() }) } }],
});

/** In a fresh namespace of `env`: a Gadget, and a user who may create ConfigMaps and read Gadgets (plus `extraRules`). */
async function scenario(
  env: TestEnv,
  extraRules: object[] = [],
): Promise<{ namespace: string; owner: { name: string; uid: string }; client: KubeClient }> {
  const namespace = await env.createNamespace('ownerrefs');
  const created = await env.request<{ metadata: { name: string; uid: string } }>(
    'POST',
    `/apis/${GROUP}/v1/namespaces/${namespace}/gadgets`,
    { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'owner' }, spec: { size: 1 } },
  );
  assert.equal(created.status, 201);
  const rbac = (path: string, body: object) =>
    env.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/${path}`, body);
  assert.equal(
    (
      await rbac('roles', {
        metadata: { name: 'writer' },
        rules: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get'] },
          { apiGroups: [GROUP], resources: ['gadgets'], verbs: ['get', 'list', 'watch'] },
          ...extraRules,
        ],
      })
    ).status,
    201,
  );
  assert.equal(
    (
      await rbac('rolebindings', {
        metadata: { name: 'writer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'writer' },
        subjects: [{ kind: 'User', name: 'writer', apiGroup: 'rbac.authorization.k8s.io' }],
      })
    ).status,
    201,
  );
  const { kubeconfig } = await env.userKubeconfig({ user: 'writer' });
  return { namespace, owner: created.body.metadata, client: await KubeClient.fromKubeconfig({ kubeconfig }) };
}

/** What setControllerReference writes: a controller reference that blocks the owner's deletion. */
function ownedConfigMap(namespace: string, owner: { name: string; uid: string }) {
  return {
    apiVersion: 'v1' as const,
    kind: 'ConfigMap' as const,
    metadata: {
      name: 'owned',
      namespace,
      ownerReferences: [
        {
          apiVersion: `${GROUP}/v1`,
          kind: 'Gadget',
          name: owner.name,
          uid: owner.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
  };
}

const FINALIZERS_RULE = { apiGroups: [GROUP], resources: ['gadgets/finalizers'], verbs: ['update'] };

describe('TestEnv ownerReferencesPermissionEnforcement', { timeout: 180_000 }, () => {
  let enforcing: TestEnv;
  let lenient: TestEnv;
  const clients: KubeClient[] = [];

  before(async () => {
    [enforcing, lenient] = await Promise.all([
      TestEnv.start({ crds: [customResourceDefinition(GADGET)], ownerReferencesPermissionEnforcement: true }),
      TestEnv.start({ crds: [customResourceDefinition(GADGET)] }),
    ]);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await Promise.all([enforcing?.stop(), lenient?.stop()]);
  });

  test('with it on, a blockOwnerDeletion reference without the <kind>/finalizers rule is refused by the server', async () => {
    const { namespace, owner, client } = await scenario(enforcing);
    clients.push(client);
    await assert.rejects(client.create(ownedConfigMap(namespace, owner)), (error: unknown) => {
      assert.ok(error instanceof ApiError, String(error));
      assert.ok(error.status === 403 || error.status === 422, `status ${error.status}`);
      assert.match(
        error.message,
        /cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on/,
      );
      return true;
    });
  });

  test('with it on and the <kind>/finalizers rule, the same write is allowed', async () => {
    const { namespace, owner, client } = await scenario(enforcing, [FINALIZERS_RULE]);
    clients.push(client);
    const created = await client.create(ownedConfigMap(namespace, owner));
    assert.equal(created.metadata?.ownerReferences?.[0]?.blockOwnerDeletion, true);
  });

  test('without it (the default), the write passes without the rule: the gap the option closes', async () => {
    const { namespace, owner, client } = await scenario(lenient);
    clients.push(client);
    await client.create(ownedConfigMap(namespace, owner));
  });

  test("server: 'modern' refuses the option (its API server has no such plugin)", async () => {
    await assert.rejects(
      TestEnv.start({ server: 'modern', ownerReferencesPermissionEnforcement: true }),
      /ownerReferencesPermissionEnforcement is an admission plugin of kube-apiserver, which server: 'modern' does not run/,
    );
  });
});
