import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyOwned } from './apply-owned.js';
import { isConflict } from '../client/api-error.js';
import { FakeClient, isWrite } from '../testing/fake-client/index.js';
import { immediateClock } from './testing/immediate-clock.js';
import { isResourceVersionConflict, retryOnConflict } from './retry-on-conflict.js';
import { SPEC_HASH_ANNOTATION, specHash, specHashMatches, withSpecHash } from './spec-hash.js';

const desired = () => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd', namespace: 'ns', labels: { app: 'd' } },
  spec: { replicas: 2, template: { spec: { containers: [{ name: 'c', image: 'img:1' }] } } },
});

test('the spec hash is sha256 hex and does not depend on key order', () => {
  const a = desired();
  const b = {
    spec: { template: { spec: { containers: [{ image: 'img:1', name: 'c' }] } }, replicas: 2 },
    metadata: { labels: { app: 'd' }, namespace: 'ns', name: 'd' },
    kind: 'Deployment',
    apiVersion: 'apps/v1',
  };
  assert.match(specHash(a), /^[0-9a-f]{64}$/);
  assert.equal(specHash(a), specHash(b));
});

test('the spec hash changes with the spec, labels and annotations, not with server-set fields or status', () => {
  const base = specHash(desired());
  assert.notEqual(specHash({ ...desired(), spec: { ...desired().spec, replicas: 3 } }), base);
  assert.notEqual(specHash({ ...desired(), metadata: { ...desired().metadata, labels: { app: 'e' } } }), base);
  const read = {
    ...desired(),
    metadata: { ...desired().metadata, resourceVersion: '9', uid: 'u', generation: 4 },
    status: { ready: 1 },
  };
  assert.equal(specHash(read), base);
});

test('withSpecHash stores the hash in our annotation without changing the hash', () => {
  const obj = withSpecHash(desired());
  assert.equal(
    (obj.metadata as { annotations?: Record<string, string> }).annotations?.[SPEC_HASH_ANNOTATION],
    specHash(desired()),
  );
  assert.equal(specHash(obj), specHash(desired()));
  assert.equal((desired() as { metadata: { annotations?: unknown } }).metadata.annotations, undefined);
});

test('specHashMatches tells whether the object read already carries the desired hash', () => {
  const current = { ...withSpecHash(desired()), status: { x: 1 } };
  assert.ok(specHashMatches(current, desired()));
  assert.ok(!specHashMatches(current, { ...desired(), spec: { ...desired().spec, replicas: 5 } }));
  assert.ok(!specHashMatches(desired(), desired()));
  assert.ok(!specHashMatches(undefined, desired()));
});

test('applyOwned sends a server-side apply with our field manager, force, and the hash annotation', async () => {
  const fake = new FakeClient();
  const res = await applyOwned(
    fake,
    { ...desired(), metadata: { ...desired().metadata, resourceVersion: '5', managedFields: [] }, status: { s: 1 } },
    { fieldManager: 'db-operator' },
  );
  assert.equal(res.operation, 'applied');
  const req = fake.requests[0]!;
  assert.deepEqual([req.verb, req.patchType], ['patch', 'apply']);
  const body = req.body as { metadata: Record<string, unknown>; status?: unknown };
  assert.equal(body.metadata.resourceVersion, undefined);
  assert.equal(body.metadata.managedFields, undefined);
  assert.equal(body.status, undefined);
  assert.equal((body.metadata.annotations as Record<string, string>)[SPEC_HASH_ANNOTATION], specHash(desired()));
  const managers = (res.object.metadata as { managedFields?: { manager?: string }[] }).managedFields?.map(
    (m) => m.manager,
  );
  assert.deepEqual(managers, ['db-operator']);
});

test('applyOwned sends nothing when the current object carries the desired hash', async () => {
  const fake = new FakeClient();
  const { object: current } = await applyOwned(fake, desired(), { fieldManager: 'db-operator' });
  fake.clearRequests();
  const res = await applyOwned(fake, desired(), { fieldManager: 'db-operator', current });
  assert.equal(res.operation, 'unchanged');
  assert.equal(fake.requests.length, 0);
  const changed = await applyOwned(
    fake,
    { ...desired(), spec: { ...desired().spec, replicas: 9 } },
    { fieldManager: 'db-operator', current, force: false },
  );
  assert.equal(changed.operation, 'applied');
  assert.equal(fake.countRequests(isWrite), 1);
  assert.equal((changed.object as { spec: { replicas: number } }).spec.replicas, 9);
});

test('an apply ownership conflict without force is a 409 that retryOnConflict does not retry', async () => {
  const fake = new FakeClient();
  await fake.apply({ ...desired(), spec: { ...desired().spec, replicas: 7 } }, { fieldManager: 'kubectl-edit' });
  let calls = 0;
  const err = await retryOnConflict(
    async () => {
      calls++;
      return applyOwned(fake, desired(), { fieldManager: 'db-operator', force: false });
    },
    { clock: immediateClock },
  ).catch((e: unknown) => e);
  assert.ok(isConflict(err));
  assert.ok(!isResourceVersionConflict(err));
  assert.equal(calls, 1);
  const forced = await applyOwned(fake, desired(), { fieldManager: 'db-operator' });
  assert.equal((forced.object as { spec: { replicas: number } }).spec.replicas, 2);
});
