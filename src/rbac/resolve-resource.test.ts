import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kinds } from '../client/kinds.js';
import { resolveResource } from './resolve-resource.js';

test('every kinds.* descriptor resolves to a resource without an API server', () => {
  for (const [name, type] of Object.entries(kinds)) assert.doesNotThrow(() => resolveResource(type), name);
  assert.deepEqual(resolveResource(kinds.StatefulSet), { group: 'apps', resource: 'statefulsets', namespaced: true });
  assert.deepEqual(resolveResource(kinds.Namespace), { group: '', resource: 'namespaces', namespaced: false });
});

test('a kind carrying plural and scope (as defineCustomKind makes them) names its own resource, whatever the table says', () => {
  const database = { apiVersion: 'example.com/v1', kind: 'Database', plural: 'databases', scope: 'Namespaced' };
  const overridden = { apiVersion: 'v1', kind: 'Secret', plural: 'clustersecrets', scope: 'Cluster' };
  assert.deepEqual(resolveResource(database), { group: 'example.com', resource: 'databases', namespaced: true });
  assert.deepEqual(resolveResource(overridden), { group: '', resource: 'clustersecrets', namespaced: false });
});
