import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { Registry } from 'prom-client';
import { ignoreNotFound, isConflict } from '../client/api-error.js';
import type { Client } from '../client/client.js';
import { KubeClient } from '../client/kube-client.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { applyOwned } from './apply-owned.js';
import { getCondition, setCondition } from './conditions.js';
import { createOrPatch } from './create-or-patch.js';
import { handleFinalizer } from './finalizer-flow.js';
import {
  conflictCount,
  createNamespace,
  gizmo,
  GIZMO,
  GIZMO_CRD,
  requestCounts,
  SERVERS,
  serverLabel,
  writeCount,
  type Gizmo,
} from './testing/int-env.js';
import { setControllerReference } from './owner-references.js';
import { isResourceVersionConflict, retryOnConflict } from './retry-on-conflict.js';
import { SPEC_HASH_ANNOTATION } from './spec-hash.js';
import { patchStatus, updateStatus } from './status.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

// Messages are never empty here: the local kube-apiserver v1.20.2 is built with go1.19, which
// rejects "" in any custom resource string field as null (kubernetes/kubernetes#99804).

for (const server of SERVERS)
  describe(`status, conditions and idempotent writes against ${serverLabel(server)}`, () => {
    let env: TestEnv;
    let client: KubeClient;
    let registry: Registry;

    before(async () => {
      env = await TestEnv.start({ server, crds: [GIZMO_CRD] });
      registry = new Registry();
      client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath, registry });
    });
    after(async () => {
      await client?.close();
      await env?.stop();
    });

    test('status goes through /status: generation does not move, observedGeneration records the generation acted on', async () => {
      const ns = await createNamespace(client, 'st');
      const obj = await client.create(gizmo(ns, 'g'));
      assert.equal(obj.metadata.generation, 1);
      const { object } = await patchStatus(client, obj, { message: 'ready' });
      assert.equal(object.metadata.generation, 1);
      assert.deepEqual(object.status, { message: 'ready', observedGeneration: 1 });
      // A spec change bumps generation; status now lags until the reconciler writes it again.
      const changed = await client.patch<Gizmo>(GIZMO, 'g', { spec: { size: 2 } }, { type: 'merge', namespace: ns });
      assert.equal(changed.metadata.generation, 2);
      assert.equal(changed.status?.observedGeneration, 1);
      const { object: again } = await updateStatus(client, changed, { message: 'resized' });
      assert.deepEqual(again.status, { message: 'resized', observedGeneration: 2 });
      assert.equal(again.metadata.generation, 2);
      // A spec field in a status write is ignored by the server.
      const sneaky = await client.patch<Gizmo>(
        GIZMO,
        'g',
        { spec: { size: 9 }, status: { message: 'x' } },
        { type: 'merge', namespace: ns, subresource: 'status' },
      );
      assert.equal(sneaky.spec.size, 2);
    });

    test('a status patch carrying a stale resourceVersion fails with 409 rather than overwriting', async () => {
      const ns = await createNamespace(client, 'st');
      const obj = await client.create(gizmo(ns, 'g'));
      await patchStatus(client, obj, { message: 'first' });
      await assert.rejects(patchStatus(client, obj, { message: 'second' }), isConflict);
      await assert.rejects(updateStatus(client, obj, { message: 'second' }), isConflict);
    });

    test('conditions written by the helpers pass the API server validation of metav1.Condition', async () => {
      const ns = await createNamespace(client, 'st');
      const obj = await client.create(gizmo(ns, 'g'));
      const conditions = setCondition([], {
        type: 'Ready',
        status: 'False',
        reason: 'Provisioning',
        message: 'waiting for volume',
        observedGeneration: 1,
      });
      const { object } = await patchStatus(client, obj, { conditions });
      assert.deepEqual(object.status?.conditions, conditions);
      // The server stores lastTransitionTime exactly as written (second precision): setting the same
      // condition again compares equal and writes nothing.
      const before = await writeCount(registry);
      const same = setCondition(object.status?.conditions, {
        type: 'Ready',
        status: 'False',
        reason: 'Provisioning',
        message: 'waiting for volume',
        observedGeneration: 1,
      });
      const res = await patchStatus(client, object, { ...object.status, conditions: same });
      assert.equal(res.changed, false);
      assert.equal(await writeCount(registry), before);
    });

    test('concurrent status writers each setting a different condition lose nothing', async () => {
      const ns = await createNamespace(client, 'st');
      const start = await client.create(gizmo(ns, 'race'));
      const types = ['Ready', 'Synced', 'BackedUp', 'Monitored', 'Secured'];
      const conflictsBefore = await conflictCount(registry);
      await Promise.all(
        types.map((type) =>
          retryOnConflict(
            async (attempt) => {
              // Everyone starts from the same read, so all but one conflict on the first try.
              const cur = attempt === 1 ? start : await client.get<Gizmo>(GIZMO, 'race', { namespace: ns });
              const conditions = setCondition(cur.status?.conditions, {
                type,
                status: 'True',
                reason: 'Done',
                message: `${type} done`,
                observedGeneration: cur.metadata.generation,
              });
              return patchStatus(client, cur, { ...cur.status, conditions });
            },
            { backoff: { maxAttempts: 20 } },
          ),
        ),
      );
      const final = await client.get<Gizmo>(GIZMO, 'race', { namespace: ns });
      assert.deepEqual(final.status?.conditions?.map((c) => c.type).sort(), [...types].sort());
      const conflicts = (await conflictCount(registry)) - conflictsBefore;
      assert.ok(conflicts >= types.length - 1, `expected real races, saw ${conflicts} conflicts`);
    });

    test(
      'createOrPatch against a concurrent writer: 409, then retryOnConflict re-reads and keeps both changes',
      { skip: server === 'modern' && 'the Kubernetes 1.36 CRD-only API server serves no ConfigMaps' },
      async () => {
        const ns = await createNamespace(client, 'st');
        await client.create<ConfigMap>({ ...CM, metadata: { name: 'cm', namespace: ns }, data: { a: '0' } });
        let interfered = false;
        const mutate = async (cm: ConfigMap): Promise<void> => {
          if (!interfered) {
            interfered = true;
            await client.patch(CM, 'cm', { data: { theirs: 'y' } }, { type: 'merge', namespace: ns });
          }
          cm.data = { ...cm.data, a: '1' };
        };
        const key: ConfigMap = { ...CM, metadata: { name: 'cm', namespace: ns } };
        await assert.rejects(createOrPatch(client, key, mutate), isConflict);
        interfered = false;
        const res = await retryOnConflict(() => createOrPatch(client, key, mutate));
        assert.equal(res.operation, 'updated');
        const got = await client.get<ConfigMap>(CM, 'cm', { namespace: ns });
        assert.deepEqual(got.data, { a: '1', theirs: 'y' });
      },
    );

    test(
      'a reconcile that finds everything as it wants it makes zero writes',
      { skip: server === 'modern' && 'the Kubernetes 1.36 CRD-only API server serves no ConfigMaps' },
      async () => {
        const ns = await createNamespace(client, 'st');
        await client.create(gizmo(ns, 'app', { size: 3, color: 'blue' }));
        const reconcile = (c: Client) => async (): Promise<string[]> => {
          const ops: string[] = [];
          let obj = await c.get<Gizmo>(GIZMO, 'app', { namespace: ns });
          const step = await handleFinalizer(c, obj, { name: 'gizmos.example.com/cleanup', cleanup: async () => {} });
          if (step.kind === 'stop') return ops;
          obj = step.object;
          const owner = obj;
          const cfg = await createOrPatch(
            c,
            { ...CM, metadata: { name: 'app-config', namespace: ns } } as ConfigMap,
            (cm) => {
              cm.data = { ...cm.data, size: String(owner.spec.size) };
              setControllerReference(owner, cm);
            },
          );
          ops.push(`config:${cfg.operation}`);
          const desired: ConfigMap = setControllerReference(owner, {
            ...CM,
            metadata: { name: 'app-palette', namespace: ns },
            data: { color: owner.spec.color ?? 'none' },
          });
          const current = await ignoreNotFound(c.get<ConfigMap>(CM, 'app-palette', { namespace: ns }));
          const applied = await applyOwned(c, desired, { fieldManager: 'gizmo-controller', current });
          ops.push(`palette:${applied.operation}`);
          const conditions = setCondition(obj.status?.conditions, {
            type: 'Ready',
            status: 'True',
            reason: 'Reconciled',
            message: 'all good',
            observedGeneration: obj.metadata.generation,
          });
          const st = await patchStatus(c, obj, { ...obj.status, conditions });
          ops.push(`status:${st.changed ? 'written' : 'unchanged'}`);
          return ops;
        };

        const first = await reconcile(client)();
        assert.deepEqual(first, ['config:created', 'palette:applied', 'status:written']);
        const palette = await client.get<ConfigMap>(CM, 'app-palette', { namespace: ns });
        assert.ok(palette.metadata?.annotations?.[SPEC_HASH_ANNOTATION]);
        const rvBefore = (await client.get<Gizmo>(GIZMO, 'app', { namespace: ns })).metadata.resourceVersion;

        const writesBefore = await writeCount(registry);
        const countsBefore = await requestCounts(registry);
        const second = await reconcile(client)();
        const third = await reconcile(client)();
        assert.deepEqual(second, ['config:unchanged', 'palette:unchanged', 'status:unchanged']);
        assert.deepEqual(third, second);
        assert.equal(await writeCount(registry), writesBefore, 'a no-op reconcile must not send a single write');
        const countsAfter = await requestCounts(registry);
        assert.equal((countsAfter.GET ?? 0) - (countsBefore.GET ?? 0), 6, 'three reads per reconcile, nothing else');
        assert.equal((await client.get<Gizmo>(GIZMO, 'app', { namespace: ns })).metadata.resourceVersion, rvBefore);

        // A spec change is picked up: exactly the writes it needs.
        await client.patch(GIZMO, 'app', { spec: { color: 'red' } }, { type: 'merge', namespace: ns });
        const afterChange = await reconcile(client)();
        assert.deepEqual(afterChange, ['config:unchanged', 'palette:applied', 'status:written']);
        const app = await client.get<Gizmo>(GIZMO, 'app', { namespace: ns });
        assert.equal(getCondition(app.status?.conditions, 'Ready')?.observedGeneration, 2);
        assert.equal(app.status?.observedGeneration, 2);
      },
    );

    test(
      'applyOwned takes over fields another manager applied (force), and without force the server reports the conflict',
      { skip: server === 'modern' && 'the Kubernetes 1.36 CRD-only API server serves no ConfigMaps' },
      async () => {
        const ns = await createNamespace(client, 'st');
        const theirs: ConfigMap = { ...CM, metadata: { name: 'shared', namespace: ns }, data: { color: 'green' } };
        await client.apply(theirs, { fieldManager: 'kubectl-edit' });
        const ours: ConfigMap = { ...CM, metadata: { name: 'shared', namespace: ns }, data: { color: 'blue' } };
        const refused = await applyOwned(client, ours, { fieldManager: 'gizmo-controller', force: false }).catch(
          (e: unknown) => e,
        );
        // A field-ownership conflict is also a 409 Conflict: retryOnConflict cannot fix it, force can.
        assert.ok(isConflict(refused), String(refused));
        assert.ok(
          !isResourceVersionConflict(refused),
          `retryOnConflict leaves an ownership conflict alone: ${JSON.stringify((refused as { details?: unknown }).details)}`,
        );
        const { object } = await applyOwned(client, ours, { fieldManager: 'gizmo-controller' });
        assert.equal(object.data?.color, 'blue');
        const managers =
          (object.metadata as { managedFields?: { manager?: string; fieldsV1?: unknown }[] }).managedFields ?? [];
        const owner = managers.find((m) => JSON.stringify(m.fieldsV1).includes('f:color'));
        assert.equal(owner?.manager, 'gizmo-controller');
      },
    );
  });
