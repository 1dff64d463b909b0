import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { isConflict } from '../client/api-error.js';
import { FakeClient, isWrite } from '../testing/fake-client/index.js';
import { createOrPatch } from './create-or-patch.js';
import { gizmo, GIZMO, GIZMO_CRD, type Gizmo } from './testing/gizmo.js';
import { immediateClock } from './testing/immediate-clock.js';
import { retryOnConflict } from './retry-on-conflict.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const key = (): ConfigMap => ({ ...CM, metadata: { name: 'cm', namespace: 'ns' } });
const setData = (obj: ConfigMap): void => {
  obj.data = { ...obj.data, a: '1' };
  obj.metadata = { ...obj.metadata, labels: { ...obj.metadata?.labels, app: 'x' } };
};

async function setup(existing?: ConfigMap): Promise<{ fake: FakeClient; seeded: ConfigMap | undefined }> {
  const fake = new FakeClient({ crds: [GIZMO_CRD] });
  const seeded = existing ? await fake.create(existing) : undefined;
  fake.clearRequests();
  return { fake, seeded };
}

test('an absent object is created with mutate applied', async () => {
  const { fake } = await setup();
  const res = await createOrPatch(fake, key(), setData);
  assert.equal(res.operation, 'created');
  assert.deepEqual(res.object.data, { a: '1' });
  assert.deepEqual(
    fake.requests.map((r) => r.verb),
    ['get', 'create'],
  );
});

test('an object already as mutate wants it is unchanged: zero writes', async () => {
  const { fake } = await setup({ ...key(), metadata: { ...key().metadata, labels: { app: 'x' } }, data: { a: '1' } });
  const res = await createOrPatch(fake, key(), setData);
  assert.equal(res.operation, 'unchanged');
  assert.equal(fake.countRequests(isWrite), 0);
});

test('a change is sent as a merge patch of the difference carrying the resourceVersion read', async () => {
  const { fake, seeded } = await setup({ ...key(), data: { a: '0', other: 'kept' } });
  const res = await createOrPatch(fake, key(), setData);
  assert.equal(res.operation, 'updated');
  assert.deepEqual(
    fake.requests.filter(isWrite).map((r) => [r.patchType, r.body]),
    [
      [
        'merge',
        { data: { a: '1' }, metadata: { labels: { app: 'x' }, resourceVersion: seeded?.metadata?.resourceVersion } },
      ],
    ],
  );
  assert.deepEqual(res.object.data, { a: '1', other: 'kept' });
});

test('a concurrent change between read and patch yields 409, and retryOnConflict re-reads and keeps both', async () => {
  const { fake } = await setup({ ...key(), data: { a: '0' } });
  let interfere = true;
  fake.intercept(async (req) => {
    if (interfere && req.verb === 'patch') {
      interfere = false;
      await fake.patch(CM, 'cm', { data: { theirs: 'y' } }, { type: 'merge', namespace: 'ns' });
    }
  });
  await assert.rejects(createOrPatch(fake, key(), setData), isConflict);
  interfere = true;
  const res = await retryOnConflict(() => createOrPatch(fake, key(), setData), { clock: immediateClock });
  assert.equal(res.operation, 'updated');
  assert.deepEqual((await fake.get<ConfigMap>(CM, 'cm', { namespace: 'ns' })).data, { a: '1', theirs: 'y' });
});

test('a status change goes to /status in its own patch, and spec changes do not touch status', async () => {
  const fake = new FakeClient({ crds: [GIZMO_CRD] });
  await fake.create(gizmo('ns', 'g'));
  fake.clearRequests();
  const res = await createOrPatch(fake, gizmo('ns', 'g'), (o) => {
    o.spec.size = 4;
    o.status = { message: 'hi' };
  });
  assert.equal(res.operation, 'updated');
  assert.deepEqual(
    fake.requests.filter(isWrite).map((r) => [r.verb, r.subresource]),
    [
      ['patch', undefined],
      ['patch', 'status'],
    ],
  );
  const got = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.equal(got.spec.size, 4);
  assert.equal(got.status?.message, 'hi');
});

test('a status set by mutate on create is written to /status right after the create', async () => {
  const fake = new FakeClient({ crds: [GIZMO_CRD] });
  const res = await createOrPatch(fake, gizmo('ns', 'new'), (o) => {
    o.status = { message: 'born' };
  });
  assert.equal(res.operation, 'created');
  assert.deepEqual(
    fake.requests.filter(isWrite).map((r) => [r.verb, r.subresource]),
    [
      ['create', undefined],
      ['patch', 'status'],
    ],
  );
  assert.equal(res.object.status?.message, 'born');
});

test('mutate may not change the object it was given the key of', async () => {
  const { fake } = await setup();
  await assert.rejects(
    createOrPatch(fake, key(), (o) => void (o.metadata!.name = 'other')),
    { code: 'ERR_INVALID_OPTION' },
  );
  assert.equal(fake.countRequests(isWrite), 0);
});
