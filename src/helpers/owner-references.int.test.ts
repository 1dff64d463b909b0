import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { ignoreNotFound } from '../client/api-error.js';
import { KubeClient } from '../client/kube-client.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { createOrPatch } from './create-or-patch.js';
import { createNamespace, eventually, gizmo, GIZMO, GIZMO_CRD, type Gizmo } from './testing/int-env.js';
import { getControllerOf, isControlledBy, setControllerReference } from './owner-references.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

describe('owner references and the real garbage collector', () => {
  let env: TestEnv;
  let client: KubeClient;

  before(async () => {
    env = await TestEnv.start({ crds: [GIZMO_CRD], controllerManager: true });
    client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });

  async function ownedConfigMap(owner: Gizmo | ConfigMap, name: string): Promise<ConfigMap> {
    const res = await createOrPatch(
      client,
      { ...CM, metadata: { name, namespace: owner.metadata?.namespace } } as ConfigMap,
      (cm) => {
        cm.data = { owner: owner.metadata?.name ?? '' };
        setControllerReference(owner, cm);
      },
    );
    assert.equal(res.operation, 'created');
    return res.object;
  }

  const gone = (ns: string, name: string) => async (): Promise<void> => {
    if ((await ignoreNotFound(client.get(CM, name, { namespace: ns }))) !== undefined)
      throw new Error(`${name} still there`);
  };

  test('deleting the owner makes the garbage collector delete what it controls', async () => {
    const ns = await createNamespace(client, 'gc');
    const owner = await client.create(gizmo(ns, 'owner'));
    const child = await ownedConfigMap(owner, 'child');
    assert.ok(isControlledBy(child, owner));
    assert.deepEqual(getControllerOf(child), {
      apiVersion: GIZMO.apiVersion,
      kind: 'Gizmo',
      name: 'owner',
      uid: owner.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    });
    await client.delete(GIZMO, 'owner', { namespace: ns });
    // Usually immediate (the GC checks an owner it has not seen with a live read); at worst it waits
    // for its watch on the new CRD, started at its next discovery resync (30 s).
    await eventually('child garbage-collected', gone(ns, 'child'), 90_000);
  });

  // The owners below are ConfigMaps: foreground deletion and orphaning need the GC to watch the
  // owner's kind, and for a CRD created moments ago that starts only at its next discovery resync.
  test('foreground deletion waits for the child (blockOwnerDeletion) before the owner goes', async () => {
    const ns = await createNamespace(client, 'gc');
    const owner = await client.create<ConfigMap>({ ...CM, metadata: { name: 'parent', namespace: ns } });
    await ownedConfigMap(owner, 'child');
    await client.delete(CM, 'parent', { namespace: ns, propagationPolicy: 'Foreground' });
    const deleting = await ignoreNotFound(client.get<ConfigMap>(CM, 'parent', { namespace: ns }));
    // Either still waiting for its child, or already done with it; never gone before the child.
    if (deleting) assert.ok(deleting.metadata?.finalizers?.includes('foregroundDeletion'));
    await eventually('child deleted', gone(ns, 'child'));
    await eventually('owner deleted', gone(ns, 'parent'));
  });

  test('orphaning keeps the child and drops its owner reference', async () => {
    const ns = await createNamespace(client, 'gc');
    const owner = await client.create<ConfigMap>({ ...CM, metadata: { name: 'parent', namespace: ns } });
    await ownedConfigMap(owner, 'child');
    await client.delete(CM, 'parent', { namespace: ns, propagationPolicy: 'Orphan' });
    const orphan = await eventually('owner reference removed', async () => {
      const cm = await client.get<ConfigMap>(CM, 'child', { namespace: ns });
      if (cm.metadata?.ownerReferences?.length) throw new Error('still owned');
      return cm;
    });
    assert.equal(getControllerOf(orphan), undefined);
  });

  test('a cross-namespace owner reference (which setControllerReference refuses) makes the GC delete a child whose owner lives', async () => {
    const nsA = await createNamespace(client, 'gc');
    const nsB = await createNamespace(client, 'gc');
    const owner = await client.create(gizmo(nsA, 'owner'));
    assert.throws(() => setControllerReference(owner, { ...CM, metadata: { name: 'stray', namespace: nsB } }), {
      code: 'ERR_CROSS_NAMESPACE_OWNER',
    });
    // Written by hand, as a careless controller would: the GC looks for the owner in the child's
    // namespace, does not find it, and deletes the child.
    await client.create<ConfigMap>({
      ...CM,
      metadata: {
        name: 'stray',
        namespace: nsB,
        ownerReferences: [
          { apiVersion: GIZMO.apiVersion, kind: 'Gizmo', name: 'owner', uid: owner.metadata.uid!, controller: true },
        ],
      },
    });
    await eventually('stray child deleted by the GC', gone(nsB, 'stray'));
    assert.ok(await client.get(GIZMO, 'owner', { namespace: nsA }));
  });
});
