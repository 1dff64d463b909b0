import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { KubeObject } from '../core/object-key.js';
import { hasFinalizer } from './finalizers.js';
import { isControlledBy, setControllerReference } from './owner-references.js';
import { specHash, withSpecHash } from './spec-hash.js';

// Compiling this file is most of the test: the helpers take `kubernetes-types` objects, core's
// `KubeObject` and plain custom-resource interfaces without casts.
interface Widget {
  apiVersion: 'example.com/v1';
  kind: 'Widget';
  metadata: { name: string; namespace: string; uid: string; finalizers?: string[] };
  spec: { size: number };
}

test('kubernetes-types objects, KubeObject and custom interfaces are accepted as they are', () => {
  const owner: Widget = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'ns', uid: 'u1', finalizers: ['example.com/x'] },
    spec: { size: 1 },
  };
  const cm: ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'ns' },
    data: { a: '1' },
  };
  const deploy: Deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' } };
  const generic: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } };
  assert.ok(hasFinalizer(owner, 'example.com/x'));
  assert.ok(isControlledBy(setControllerReference(owner, cm), owner));
  assert.ok(isControlledBy(setControllerReference(owner, deploy), owner));
  assert.ok(isControlledBy(setControllerReference(owner, generic), owner));
  const hashed: ConfigMap = withSpecHash(cm);
  assert.equal(specHash(hashed), specHash(cm));
});
