import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MetaObject } from './meta-object.js';
import {
  getControllerOf,
  isControlledBy,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from './owner-references.js';

// null: cluster-scoped (undefined would pick the default)
const owner = (name = 'db', namespace: string | null = 'ns', uid = `uid-${name}`) => ({
  apiVersion: 'example.com/v1',
  kind: 'Database',
  metadata: { name, uid, ...(namespace ? { namespace } : {}) },
});
const child = (namespace: string | null = 'ns'): MetaObject & { metadata: NonNullable<MetaObject['metadata']> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm', ...(namespace ? { namespace } : {}) },
});

test('setControllerReference adds controller=true and blockOwnerDeletion=true', () => {
  const c = setControllerReference(owner(), child());
  assert.deepEqual(c.metadata.ownerReferences, [
    {
      apiVersion: 'example.com/v1',
      kind: 'Database',
      name: 'db',
      uid: 'uid-db',
      controller: true,
      blockOwnerDeletion: true,
    },
  ]);
  assert.ok(isControlledBy(c, owner()));
  assert.equal(getControllerOf(c)?.name, 'db');
});

test('setting the same controller twice keeps one reference', () => {
  const c = setControllerReference(owner(), setControllerReference(owner(), child()));
  assert.equal(c.metadata.ownerReferences?.length, 1);
});

test('a second, different controller is refused with AlreadyOwnedError', () => {
  const c = setControllerReference(owner('a'), child());
  assert.throws(
    () => setControllerReference(owner('b'), c),
    (err: { code: string; existing: { name: string } }) =>
      err.code === 'ERR_ALREADY_OWNED' && err.existing.name === 'a',
  );
  assert.equal(c.metadata.ownerReferences?.length, 1);
});

test('a namespaced owner cannot own an object in another namespace', () => {
  assert.throws(() => setControllerReference(owner('db', 'ns'), child('other')), { code: 'ERR_CROSS_NAMESPACE_OWNER' });
  assert.throws(() => setOwnerReference(owner('db', 'ns'), child('other')), { code: 'ERR_CROSS_NAMESPACE_OWNER' });
});

test('a namespaced owner cannot own a cluster-scoped object', () => {
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant' } };
  assert.throws(() => setControllerReference(owner('db', 'ns'), ns), { code: 'ERR_CROSS_NAMESPACE_OWNER' });
});

test('a cluster-scoped owner may own namespaced and cluster-scoped objects', () => {
  assert.doesNotThrow(() => setControllerReference(owner('c', null), child('any')));
  assert.doesNotThrow(() => setControllerReference(owner('c', null), child(null)));
});

test('an owner without uid (not yet read from the server) is refused', () => {
  const o = { apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'db', namespace: 'ns' } };
  assert.throws(() => setControllerReference(o, child()), { code: 'ERR_INCOMPLETE_OBJECT' });
});

test('setOwnerReference adds a non-controlling reference and keeps the others', () => {
  const c = setControllerReference(owner('a'), child());
  setOwnerReference(owner('b'), c);
  assert.deepEqual(
    c.metadata.ownerReferences?.map((r) => [r.name, r.controller ?? false]),
    [
      ['a', true],
      ['b', false],
    ],
  );
  assert.ok(isControlledBy(c, owner('a')));
  assert.ok(!isControlledBy(c, owner('b')));
});

test('setOwnerReference on the controller keeps its controller flag', () => {
  const c = setControllerReference(owner('a'), child());
  setOwnerReference(owner('a'), c);
  assert.deepEqual(c.metadata.ownerReferences, [
    {
      apiVersion: 'example.com/v1',
      kind: 'Database',
      name: 'a',
      uid: 'uid-a',
      controller: true,
      blockOwnerDeletion: true,
    },
  ]);
});

test('isControlledBy compares uids: a recreated owner of the same name does not control the child', () => {
  const c = setControllerReference(owner('a', 'ns', 'old-uid'), child());
  assert.ok(!isControlledBy(c, owner('a', 'ns', 'new-uid')));
});

test('removeOwnerReference removes only that owner', () => {
  const c = setOwnerReference(owner('b'), setControllerReference(owner('a'), child()));
  assert.ok(removeOwnerReference(owner('a'), c));
  assert.deepEqual(
    c.metadata.ownerReferences?.map((r) => r.name),
    ['b'],
  );
  assert.ok(!removeOwnerReference(owner('zzz'), c));
});
