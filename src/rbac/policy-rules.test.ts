import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kinds } from '../client/kinds.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { PermissionRequirement } from './permission.js';
import { placeRules } from './policy-rules.js';
import { UnknownResourceError } from './resolve-resource.js';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget', plural: 'widgets', scope: 'Namespaced' } as const;
const GADGET = { apiVersion: 'example.com/v1alpha1', kind: 'Gadget', plural: 'gadgets', scope: 'Cluster' } as const;
const need = (
  resource: PermissionRequirement['resource'],
  verbs: PermissionRequirement['verbs'],
  extra: Partial<PermissionRequirement> = {},
): PermissionRequirement => ({ resource, verbs, reason: 'test', ...extra });

describe('placeRules merges requirements into minimal, deterministic rules', () => {
  test('one rule per resource, verbs in canonical order, rules sorted by group then resource', () => {
    const { cluster, namespaced } = placeRules([
      need(kinds.StatefulSet, ['patch', 'create']),
      need(WIDGET, ['watch', 'list']),
      need(kinds.Secret, ['create']),
      need(kinds.StatefulSet, ['watch', 'list', 'create']),
      need(kinds.ConfigMap, ['list', 'watch']),
      need(WIDGET, ['patch'], { subresource: 'status' }),
    ]);
    assert.deepEqual(cluster, [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['list', 'watch', 'create', 'patch'] },
      { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['list', 'watch'] },
      { apiGroups: ['example.com'], resources: ['widgets/status'], verbs: ['patch'] },
    ]);
    assert.equal(namespaced.size, 0);
  });

  test('the order requirements arrive in does not change the output', () => {
    const reqs = [
      need(kinds.Pod, ['get']),
      need(WIDGET, ['list']),
      need(kinds.Lease, ['update'], { namespace: 'ops', resourceNames: ['b', 'a'] }),
      need(kinds.Service, ['delete']),
    ];
    const forward = placeRules(reqs, { namespaces: ['x', 'y'] });
    const backward = placeRules([...reqs].reverse(), { namespaces: ['y', 'x'] });
    assert.deepEqual(backward, forward);
    assert.deepEqual([...forward.namespaced.keys()], ['ops', 'x', 'y']);
  });

  test('a namespaced manager gets a Role per namespace; cluster-scoped resources stay in the ClusterRole', () => {
    const { cluster, namespaced } = placeRules(
      [need(WIDGET, ['list', 'watch']), need(GADGET, ['get']), need(kinds.Namespace, ['list'])],
      { namespaces: ['team-b', 'team-a'] },
    );
    assert.deepEqual(cluster, [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] },
      { apiGroups: ['example.com'], resources: ['gadgets'], verbs: ['get'] },
    ]);
    assert.deepEqual(
      [...namespaced.entries()],
      [
        ['team-a', [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['list', 'watch'] }]],
        ['team-b', [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['list', 'watch'] }]],
      ],
    );
  });

  test('a pinned requirement goes to its namespace only, and verbs restricted by name get their own rule', () => {
    const { cluster, namespaced } = placeRules([
      need(kinds.Lease, ['create'], { namespace: 'ops' }),
      need(kinds.Lease, ['get', 'update'], { namespace: 'ops', resourceNames: ['leader'] }),
      need(kinds.Lease, ['get'], { namespace: 'ops', resourceNames: ['other'] }),
    ]);
    assert.deepEqual(cluster, []);
    assert.deepEqual(namespaced.get('ops'), [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['leader'], verbs: ['update'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['leader', 'other'], verbs: ['get'] },
    ]);
  });

  test('a grant already given more widely is dropped: by name under every-object, namespaced under cluster-wide', () => {
    const { cluster, namespaced } = placeRules([
      need(kinds.Lease, ['get', 'list', 'watch']),
      need(kinds.Lease, ['get', 'update'], { namespace: 'ops', resourceNames: ['leader'] }),
      need(kinds.Lease, ['create'], { namespace: 'ops' }),
      need(kinds.Lease, ['list'], { namespace: 'ops' }),
      need(kinds.ConfigMap, ['get'], { resourceNames: ['a'] }),
      need(kinds.ConfigMap, ['get']),
    ]);
    assert.deepEqual(cluster, [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] },
    ]);
    assert.deepEqual(namespaced.get('ops'), [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['leader'], verbs: ['update'] },
    ]);
  });

  test('bad requirements are refused with a message naming the kind, the problem and who asked', () => {
    assert.throws(
      () => placeRules([need(kinds.Secret, [])]),
      (e: unknown) => e instanceof InvalidArgumentError && /Secret \(test\): no verbs/.test(e.message),
    );
    assert.throws(() => placeRules([need(kinds.Secret, ['escalate' as 'get'])]), /unknown verb "escalate"/);
    assert.throws(
      () => placeRules([need(kinds.Secret, ['create'], { resourceNames: ['s'] })]),
      /cannot restrict create by resource name/,
    );
    assert.throws(() => placeRules([need(WIDGET, ['patch'], { subresource: 'Status/x' })]), /subresource "Status\/x"/);
    assert.throws(() => placeRules([need(kinds.Secret, ['get'], { namespace: '' })]), /empty namespace/);
  });

  test('a kind with no plural of its own and none in the built-in table is an UnknownResourceError naming it', () => {
    assert.throws(
      () => placeRules([need({ apiVersion: 'example.com/v1', kind: 'Database' }, ['list'])]),
      (e: unknown) =>
        e instanceof UnknownResourceError &&
        e.code === 'ERR_UNKNOWN_RESOURCE' &&
        /kind Database in example\.com\/v1.*defineCustomKind/.test(e.message),
    );
  });
});
