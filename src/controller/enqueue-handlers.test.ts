import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tombstone } from '../cache/tombstone.js';
import type { KubeObject } from '../core/object-key.js';
import { enqueueHandler, mapToControllingOwner, mapToSelf } from './enqueue-handlers.js';
import { generationChanged } from './predicates.js';

function sink() {
  const keys: string[] = [];
  return { keys, add: (k: string) => keys.push(k) };
}

const owned = (owner: string, apiVersion = 'example.com/v1', controller = true): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: `${owner}-config`,
    namespace: 'ns',
    ownerReferences: [{ apiVersion, kind: 'Database', name: owner, uid: 'u', controller }],
  },
});

test('an owned object enqueues its controlling owner, whatever the owner version', () => {
  const s = sink();
  const h = enqueueHandler(s, mapToControllingOwner({ apiVersion: 'example.com/v2', kind: 'Database' }));
  h.add!(owned('db1'));
  assert.deepEqual(s.keys, ['ns/db1']);
});

test('a non-controller owner reference, or another kind, enqueues nothing', () => {
  const s = sink();
  const h = enqueueHandler(s, mapToControllingOwner({ apiVersion: 'example.com/v1', kind: 'Database' }));
  h.add!(owned('db1', 'example.com/v1', false));
  h.add!(owned('db2', 'other.com/v1'));
  assert.deepEqual(s.keys, []);
});

test('an update that changes the owner enqueues both the new and the old owner', () => {
  const s = sink();
  const h = enqueueHandler(s, mapToControllingOwner({ apiVersion: 'example.com/v1', kind: 'Database' }));
  h.update!(owned('old'), owned('new'));
  assert.deepEqual(s.keys.sort(), ['ns/new', 'ns/old']);
});

test('a delete found by a relist (tombstone) is mapped from the last known state', () => {
  const s = sink();
  const h = enqueueHandler(s, mapToSelf);
  h.delete!(tombstone('ns/x', { metadata: { name: 'x', namespace: 'ns' } } as KubeObject));
  assert.deepEqual(s.keys, ['ns/x']);
});

test('predicates filter events before mapping', () => {
  const s = sink();
  const h = enqueueHandler<KubeObject>(s, mapToSelf, [generationChanged]);
  const a: KubeObject = { metadata: { name: 'x', generation: 1, resourceVersion: '1' } };
  h.update!(a, { metadata: { name: 'x', generation: 1, resourceVersion: '2' } });
  assert.deepEqual(s.keys, []);
  h.update!(a, { metadata: { name: 'x', generation: 2, resourceVersion: '3' } });
  assert.deepEqual(s.keys, ['x']);
});
