import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ignoreNotFound, isInvalid } from '../client/api-error.js';
import { KubeClient } from '../client/kube-client.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { handleFinalizer } from './finalizer-flow.js';
import { addFinalizer, removeFinalizer } from './finalizers.js';
import {
  conflictCount,
  createNamespace,
  gizmo,
  GIZMO,
  GIZMO_CRD,
  SERVERS,
  serverLabel,
  writeCount,
  type Gizmo,
} from './testing/int-env.js';

for (const server of SERVERS)
  describe(`finalizers against ${serverLabel(server)}`, () => {
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

    test('a merge patch carrying a stale resourceVersion is refused with 409 (the precondition the helpers rely on)', async () => {
      const ns = await createNamespace(client, 'fin');
      const first = await client.create(gizmo(ns, 'g'));
      await client.patch(GIZMO, 'g', { metadata: { labels: { touched: 'yes' } } }, { type: 'merge', namespace: ns });
      await assert.rejects(
        client.patch(
          GIZMO,
          'g',
          { metadata: { resourceVersion: first.metadata.resourceVersion, finalizers: ['example.com/x'] } },
          { type: 'merge', namespace: ns },
        ),
        (err: { status?: number }) => err.status === 409,
      );
    });

    test('two controllers adding different finalizers at the same time both keep theirs', async () => {
      const ns = await createNamespace(client, 'fin');
      const created = await client.create(gizmo(ns, 'race'));
      // Both start from the same read, so at least one of them must hit a conflict and re-read.
      const names = Array.from({ length: 6 }, (_, i) => `ctrl${i}.example.com/cleanup`);
      const conflictsBefore = await conflictCount(registry);
      await Promise.all(
        names.map((n) => addFinalizer(client, created, n, { retry: { backoff: { maxAttempts: 20 } } })),
      );
      const final = await client.get<Gizmo>(GIZMO, 'race', { namespace: ns });
      assert.deepEqual([...(final.metadata.finalizers ?? [])].sort(), [...names].sort());
      const conflicts = (await conflictCount(registry)) - conflictsBefore;
      assert.ok(conflicts >= 5, `six writers from one read: at least five must conflict, saw ${conflicts}`);
    });

    test('two controllers removing different finalizers at the same time leave the third', async () => {
      const ns = await createNamespace(client, 'fin');
      const obj = await client.create({
        ...gizmo(ns, 'rm'),
        metadata: { name: 'rm', namespace: ns, finalizers: ['a.example.com/x', 'b.example.com/y', 'c.example.com/z'] },
      });
      await Promise.all([
        removeFinalizer(client, obj, 'a.example.com/x'),
        removeFinalizer(client, obj, 'b.example.com/y'),
      ]);
      const final = await client.get<Gizmo>(GIZMO, 'rm', { namespace: ns });
      assert.deepEqual(final.metadata.finalizers, ['c.example.com/z']);
      await removeFinalizer(client, final, 'c.example.com/z');
    });

    test('the finalizer flow: finalizer on create, cleanup on delete, object gone after; the other finalizer untouched until its owner removes it', async () => {
      const ns = await createNamespace(client, 'fin');
      const FIN = 'backup.example.com/before-delete';
      let obj = await client.create(gizmo(ns, 'flow'));
      const cleanups: string[] = [];
      const cleanup = async (o: Gizmo): Promise<void> => void cleanups.push(o.metadata.resourceVersion ?? '');

      const step1 = await handleFinalizer(client, obj, { name: FIN, cleanup });
      assert.equal(step1.kind, 'continue');
      obj = step1.kind === 'continue' ? step1.object : obj;
      assert.deepEqual(obj.metadata.finalizers, [FIN]);
      obj = await addFinalizer(client, obj, 'other.example.com/keep');

      const before = await writeCount(registry);
      const step2 = await handleFinalizer(client, obj, { name: FIN, cleanup });
      assert.equal(step2.kind, 'continue');
      assert.equal(await writeCount(registry), before, 'a second reconcile of a live object must not write');

      await client.delete(GIZMO, 'flow', { namespace: ns });
      const deleting = await client.get<Gizmo>(GIZMO, 'flow', { namespace: ns });
      assert.ok(deleting.metadata.deletionTimestamp);
      // A deleting object takes no new finalizer: the API server says so, and the flow never tries.
      await assert.rejects(addFinalizer(client, deleting, 'late.example.com/x'), isInvalid);

      const step3 = await handleFinalizer(client, deleting, { name: FIN, cleanup });
      assert.equal(step3.kind === 'stop' && step3.reason, 'finalized');
      assert.equal(cleanups.length, 1);
      const still = await client.get<Gizmo>(GIZMO, 'flow', { namespace: ns });
      assert.deepEqual(still.metadata.finalizers, ['other.example.com/keep']);

      const step4 = await handleFinalizer(client, still, { name: FIN, cleanup });
      assert.equal(step4.kind === 'stop' && step4.reason, 'notOurs');
      assert.equal(cleanups.length, 1);

      const last = await removeFinalizer(client, still, 'other.example.com/keep');
      assert.deepEqual(last?.metadata.finalizers ?? [], []);
      assert.equal(await ignoreNotFound(client.get(GIZMO, 'flow', { namespace: ns })), undefined);
    });

    test('a failing cleanup keeps the finalizer, so the object is not deleted', async () => {
      const ns = await createNamespace(client, 'fin');
      const FIN = 'backup.example.com/before-delete';
      const obj = await addFinalizer(client, await client.create(gizmo(ns, 'fail')), FIN);
      await client.delete(GIZMO, 'fail', { namespace: ns });
      const deleting = await client.get<Gizmo>(GIZMO, 'fail', { namespace: ns });
      await assert.rejects(
        handleFinalizer(client, deleting, {
          name: FIN,
          cleanup: async () => Promise.reject(new Error('backup store down')),
        }),
        /backup store down/,
      );
      const after = await client.get<Gizmo>(GIZMO, 'fail', { namespace: ns });
      assert.deepEqual(after.metadata.finalizers, [FIN]);
      assert.ok(obj.metadata.resourceVersion);
      const done = await handleFinalizer(client, after, { name: FIN, cleanup: async () => {} });
      assert.equal(done.kind === 'stop' && done.reason, 'finalized');
      assert.equal(await ignoreNotFound(client.get(GIZMO, 'fail', { namespace: ns })), undefined);
    });
  });
