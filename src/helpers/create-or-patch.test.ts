import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrPatch } from './create-or-patch.js';
import { immediateClock, MemoryClient } from './memory-client.test-support.js';
import { retryOnConflict } from './retry-on-conflict.js';

interface ConfigMap {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}
const key = (): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' } });
const setData = (obj: ConfigMap): void => {
  obj.data = { ...obj.data, a: '1' };
  obj.metadata.labels = { ...obj.metadata.labels, app: 'x' };
};

test('an absent object is created with mutate applied', async () => {
  const mem = new MemoryClient();
  const res = await createOrPatch(mem.client, key(), setData);
  assert.equal(res.operation, 'created');
  assert.deepEqual(res.object.data, { a: '1' });
  assert.deepEqual(mem.calls.map((c) => c.verb), ['get', 'create']);
});

test('an object already as mutate wants it is unchanged: zero writes', async () => {
  const mem = new MemoryClient();
  mem.seed({ ...key(), metadata: { ...key().metadata, labels: { app: 'x' } }, data: { a: '1' } });
  const res = await createOrPatch(mem.client, key(), setData);
  assert.equal(res.operation, 'unchanged');
  assert.deepEqual(mem.writes(), []);
});

test('a change is sent as a merge patch of the difference carrying the resourceVersion read', async () => {
  const mem = new MemoryClient();
  const seeded = mem.seed({ ...key(), data: { a: '0', other: 'kept' } });
  const res = await createOrPatch(mem.client, key(), setData);
  assert.equal(res.operation, 'updated');
  assert.deepEqual(mem.writes().map((c) => c.body), [{ data: { a: '1' }, metadata: { labels: { app: 'x' }, resourceVersion: seeded.metadata.resourceVersion } }]);
  assert.deepEqual(res.object.data, { a: '1', other: 'kept' });
});

test('a concurrent change between read and patch yields 409, and retryOnConflict re-reads and wins', async () => {
  const mem = new MemoryClient();
  mem.seed({ ...key(), data: { a: '0' } });
  let interfered = false;
  mem.beforeWrite = (c) => {
    if (c.verb === 'patch' && !interfered) {
      interfered = true;
      mem.mutate('ConfigMap', 'ns', 'cm', (o) => ((o as ConfigMap).data = { a: '0', theirs: 'y' }));
    }
  };
  await assert.rejects(createOrPatch(mem.client, key(), setData), { status: 409 });
  interfered = false;
  const res = await retryOnConflict(() => createOrPatch(mem.client, key(), setData), { clock: immediateClock });
  assert.equal(res.operation, 'updated');
  assert.deepEqual(mem.peek('ConfigMap', 'ns', 'cm')?.data, { a: '1', theirs: 'y' });
});

test('a status change goes to /status in its own patch', async () => {
  const mem = new MemoryClient();
  mem.seed({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' }, spec: { size: 1 } });
  const res = await createOrPatch(mem.client, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' } }, (o) => {
    (o as { status?: unknown }).status = { message: 'hi' };
  });
  assert.equal(res.operation, 'updated');
  assert.deepEqual(mem.writes().map((c) => c.verb), ['patchStatus']);
});

test('mutate may not change the object it was given the key of', async () => {
  const mem = new MemoryClient();
  await assert.rejects(createOrPatch(mem.client, key(), (o) => void (o.metadata.name = 'other')), { code: 'ERR_INVALID_OPTION' });
  assert.deepEqual(mem.writes(), []);
});
