import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isConflict } from '../client/api-error.js';
import { FakeClock } from '../core/fake-clock.js';
import { conflictFor, everyNth, FakeClient, isStatusWrite, isWrite } from '../testing/fake-client/index.js';
import { getCondition, setCondition } from './conditions.js';
import { gizmo, GIZMO, GIZMO_CRD, type Gizmo } from './testing/gizmo.js';
import { immediateClock } from './testing/immediate-clock.js';
import { retryOnConflict } from './retry-on-conflict.js';
import { desiredStatus, patchStatus, updateStatus } from './status.js';

async function setup(status?: Gizmo['status']): Promise<{ fake: FakeClient; obj: Gizmo }> {
  const fake = new FakeClient({ crds: [GIZMO_CRD] });
  await fake.create(gizmo('ns', 'g'));
  // Two spec changes, so generation (3) and resourceVersion are not trivially 1.
  await fake.patch<Gizmo>(GIZMO, 'g', { spec: { size: 2 } }, { type: 'merge', namespace: 'ns' });
  let obj = await fake.patch<Gizmo>(GIZMO, 'g', { spec: { size: 3 } }, { type: 'merge', namespace: 'ns' });
  if (status) obj = await fake.patchStatus<Gizmo>(GIZMO, 'g', { status }, { namespace: 'ns' });
  fake.clearRequests();
  return { fake, obj };
}

test('patchStatus writes through /status with the generation acted on and the resourceVersion read', async () => {
  const { fake, obj } = await setup();
  assert.equal(obj.metadata.generation, 3);
  const { changed, object } = await patchStatus(fake, obj, { message: 'ok' });
  assert.ok(changed);
  assert.deepEqual(object.status, { message: 'ok', observedGeneration: 3 });
  assert.equal(object.metadata.generation, 3, 'a status write never bumps generation');
  assert.deepEqual(
    fake.requests.map((r) => [r.verb, r.subresource, r.patchType, r.body]),
    [
      [
        'patch',
        'status',
        'merge',
        {
          metadata: { resourceVersion: obj.metadata.resourceVersion },
          status: { message: 'ok', observedGeneration: 3 },
        },
      ],
    ],
  );
});

test('a status equal to the current one sends nothing (no empty PATCH)', async () => {
  const { fake, obj } = await setup({ observedGeneration: 3, message: 'ok' });
  const res = await patchStatus(fake, obj, { message: 'ok' });
  assert.equal(res.changed, false);
  assert.equal(res.object, obj);
  assert.equal((await updateStatus(fake, obj, { message: 'ok' })).changed, false);
  assert.equal(fake.requests.length, 0);
});

test('a status that only differs in observedGeneration is written (a new generation was acted on)', async () => {
  const { fake, obj } = await setup({ observedGeneration: 2, message: 'ok' });
  assert.ok((await patchStatus(fake, obj, { message: 'ok' })).changed);
  assert.deepEqual(fake.requests[0]!.body, {
    metadata: { resourceVersion: obj.metadata.resourceVersion },
    status: { observedGeneration: 3 },
  });
});

test('observedGeneration can be given explicitly, or left out', () => {
  const obj = { ...gizmo('ns', 'g'), metadata: { name: 'g', generation: 5 } };
  assert.deepEqual(desiredStatus(obj, { message: 'x' }), { message: 'x', observedGeneration: 5 });
  assert.deepEqual(desiredStatus(obj, { message: 'x' }, { observedGeneration: 2 }), {
    message: 'x',
    observedGeneration: 2,
  });
  assert.deepEqual(desiredStatus(obj, { message: 'x' }, { setObservedGeneration: false }), { message: 'x' });
});

test('members missing from the desired status are removed (null in the merge patch)', async () => {
  const { fake, obj } = await setup({ observedGeneration: 3, message: 'old' });
  const { object } = await patchStatus(fake, obj, {});
  assert.deepEqual(fake.requests[0]!.body, {
    metadata: { resourceVersion: obj.metadata.resourceVersion },
    status: { message: null },
  });
  assert.deepEqual(object.status, { observedGeneration: 3 });
});

test('a status write after someone else wrote fails with 409 instead of overwriting', async () => {
  const { fake, obj } = await setup();
  await patchStatus(fake, obj, { message: 'theirs' });
  await assert.rejects(patchStatus(fake, obj, { message: 'ours' }), isConflict);
  await assert.rejects(updateStatus(fake, obj, { message: 'ours' }), isConflict);
});

test('updateStatus PUTs /status with the object as read and the new status', async () => {
  const { fake, obj } = await setup();
  const conditions = setCondition(
    [],
    { type: 'Ready', status: 'True', reason: 'Ok', message: 'fine', observedGeneration: 3 },
    { clock: new FakeClock() },
  );
  const res = await updateStatus(fake, obj, { conditions });
  assert.ok(res.changed);
  assert.deepEqual(res.object.status, { conditions, observedGeneration: 3 });
  const req = fake.requests[0]!;
  assert.deepEqual([req.verb, req.subresource], ['update', 'status']);
  assert.equal((req.body as Gizmo).metadata.resourceVersion, obj.metadata.resourceVersion);
});

test('status writes need the object as read (with a resourceVersion)', async () => {
  const { fake } = await setup();
  await assert.rejects(patchStatus(fake, gizmo('ns', 'g'), { message: 'x' }), /resourceVersion/);
  assert.equal(fake.requests.length, 0);
});

test('concurrent writers of different conditions lose none, with every 3rd status write failing 409', async () => {
  const { fake, obj: start } = await setup();
  fake.intercept(everyNth(3, isStatusWrite, conflictFor));
  const clock = new FakeClock();
  const types = ['Ready', 'Synced', 'BackedUp', 'Monitored'];
  await Promise.all(
    types.map((type) =>
      retryOnConflict(
        async (attempt) => {
          const cur = attempt === 1 ? start : await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
          const conditions = setCondition(
            cur.status?.conditions,
            { type, status: 'True', reason: 'Done', observedGeneration: cur.metadata.generation },
            { clock },
          );
          return patchStatus(fake, cur, { ...cur.status, conditions });
        },
        { clock: immediateClock, backoff: { maxAttempts: 20 } },
      ),
    ),
  );
  const final = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.deepEqual(final.status?.conditions?.map((c) => c.type).sort(), [...types].sort());
  assert.equal(getCondition(final.status?.conditions, 'Ready')?.observedGeneration, 3);
  assert.equal(final.metadata.generation, 3);
  assert.ok(fake.countRequests(isWrite) > types.length, 'conflicts forced retries');
});
