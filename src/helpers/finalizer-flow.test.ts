import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ignoreNotFound } from '../client/api-error.js';
import type { Result } from '../controller/result.js';
import { requeueAfter } from '../controller/result.js';
import { FakeClient, isWrite } from '../testing/fake-client/index.js';
import { handleFinalizer } from './finalizer-flow.js';
import { gizmo, GIZMO, GIZMO_CRD, type Gizmo } from './testing/gizmo.js';

const FIN = 'example.com/backup';

async function setup(finalizers?: string[], deleting = false): Promise<{ fake: FakeClient; obj: Gizmo }> {
  const fake = new FakeClient({ crds: [GIZMO_CRD] });
  let obj = await fake.create<Gizmo>({
    ...gizmo('ns', 'g'),
    metadata: { name: 'g', namespace: 'ns', ...(finalizers ? { finalizers } : {}) },
  });
  if (deleting) {
    await fake.delete(GIZMO, 'g', { namespace: 'ns' });
    obj = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
    assert.ok(obj.metadata.deletionTimestamp);
  }
  fake.clearRequests();
  return { fake, obj };
}

test('a live object gets our finalizer and the reconcile continues with the written object', async () => {
  const { fake, obj } = await setup();
  let cleaned = 0;
  const step = await handleFinalizer(fake, obj, { name: FIN, cleanup: async () => void cleaned++ });
  assert.equal(step.kind, 'continue');
  assert.deepEqual(step.kind === 'continue' && step.object.metadata.finalizers, [FIN]);
  assert.equal(cleaned, 0);
});

test('a live object that already has our finalizer costs no request', async () => {
  const { fake, obj } = await setup([FIN]);
  const step = await handleFinalizer(fake, obj, { name: FIN, cleanup: async () => {} });
  assert.equal(step.kind, 'continue');
  assert.equal(fake.requests.length, 0);
});

test('a deleting object runs cleanup, then loses only our finalizer', async () => {
  const { fake, obj } = await setup(['other.io/keep', FIN], true);
  const seen: Gizmo[] = [];
  const step = await handleFinalizer(fake, obj, { name: FIN, cleanup: async (o) => void seen.push(o) });
  assert.equal(seen.length, 1);
  assert.equal(step.kind === 'stop' && step.reason, 'finalized');
  assert.deepEqual(step.kind === 'stop' && step.result, { kind: 'done' });
  const after = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.deepEqual(after.metadata.finalizers, ['other.io/keep']);
});

test('when cleanup throws, the finalizer stays and the error reaches the reconciler', async () => {
  const { fake, obj } = await setup([FIN], true);
  await assert.rejects(
    handleFinalizer(fake, obj, { name: FIN, cleanup: async () => Promise.reject(new Error('backup failed')) }),
    /backup failed/,
  );
  assert.equal(fake.countRequests(isWrite), 0);
  assert.deepEqual((await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' })).metadata.finalizers, [FIN]);
});

test('when cleanup asks for a requeue, the finalizer stays and the requeue is returned', async () => {
  const { fake, obj } = await setup([FIN], true);
  const step = await handleFinalizer(fake, obj, { name: FIN, cleanup: async () => requeueAfter(5_000) });
  assert.equal(step.kind === 'stop' && step.reason, 'cleanupPending');
  if (step.kind === 'stop') {
    // The helper's outcome is the controller's Result, structurally.
    const r: Result = step.result;
    assert.deepEqual(r, { kind: 'requeueAfter', requeueAfterMs: 5_000 });
  }
  assert.equal(fake.countRequests(isWrite), 0);
});

test('a deleting object without our finalizer is left alone (no cleanup, no new finalizer)', async () => {
  const { fake, obj } = await setup(['other.io/x'], true);
  let cleaned = 0;
  const step = await handleFinalizer(fake, obj, { name: FIN, cleanup: async () => void cleaned++ });
  assert.equal(step.kind === 'stop' && step.reason, 'notOurs');
  assert.equal(cleaned, 0);
  assert.equal(fake.requests.length, 0);
});

test('removing our last finalizer lets the object go', async () => {
  const { fake, obj } = await setup([FIN], true);
  const step = await handleFinalizer(fake, obj, { name: FIN, cleanup: async () => {} });
  assert.equal(step.kind === 'stop' && step.reason, 'finalized');
  assert.equal(await ignoreNotFound(fake.get(GIZMO, 'g', { namespace: 'ns' })), undefined);
});

test('an unqualified finalizer name is refused before anything runs', async () => {
  const { fake, obj } = await setup();
  await assert.rejects(handleFinalizer(fake, obj, { name: 'backup', cleanup: async () => {} }), {
    code: 'ERR_INVALID_FINALIZER_NAME',
  });
  assert.equal(fake.requests.length, 0);
});
