import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kinds } from '../client/kinds.js';
import { InvalidOptionError } from '../core/errors.js';
import { LeaderElector } from '../leader-election/leader-elector.js';
import { Manager } from '../manager/manager.js';
import { offlineClient, OfflineClientError } from './offline-client.js';
import { rbacManifests } from './rbac-manifests.js';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget', plural: 'widgets', scope: 'Namespaced' } as const;
const SA = { name: 'widget-operator', namespace: 'widget-system' };

/** A manager as an operator would build it, around a client that never connects. */
function widgetOperator(
  options: { namespaces?: string[]; leaderElection?: boolean; secureMetrics?: boolean } = {},
): Manager {
  const client = offlineClient();
  const manager = new Manager({
    client,
    ...(options.namespaces ? { namespaces: options.namespaces } : {}),
    ...(options.secureMetrics ? { secureMetrics: {} } : {}),
    ...(options.leaderElection
      ? { leaderElection: new LeaderElector({ client, name: 'widget-operator', namespace: 'widget-system' }) }
      : {}),
  });
  manager.eventRecorder('widget-operator');
  manager
    .controller('widget')
    .for(WIDGET)
    .owns(kinds.ConfigMap)
    .watches(kinds.Node, () => [])
    .writes(kinds.ConfigMap, ['create', 'patch'])
    .writes(WIDGET, ['patch'])
    .writes(WIDGET, ['patch'], { subresource: 'status' })
    .complete(async () => undefined);
  return manager;
}

describe('manager.permissions() collects what the manager and its controllers declare', () => {
  test("for/owns/watches give list and watch, writes add their verbs, owned writes add the owner's finalizers", () => {
    const reasons = widgetOperator()
      .permissions()
      .map((p) => `${p.resource.kind}${p.subresource ? `/${p.subresource}` : ''} ${p.verbs.join(',')} <- ${p.reason}`);
    assert.deepEqual(reasons, [
      'Event create,patch <- event recorder widget-operator',
      'Widget list,watch <- controller widget: for Widget',
      'ConfigMap list,watch <- controller widget: owns ConfigMap',
      'Node list,watch <- controller widget: watches Node',
      'ConfigMap create,patch <- controller widget: writes ConfigMap',
      'Widget patch <- controller widget: writes Widget',
      'Widget/status patch <- controller widget: writes Widget/status',
      'Widget/finalizers update <- controller widget: blocking ownerReferences to Widget on ConfigMap',
    ]);
  });

  test('a controller that only reads what it owns needs no finalizers rule; a builder never completed declares nothing', () => {
    const manager = new Manager({ client: offlineClient() });
    manager
      .controller('reader')
      .for(WIDGET)
      .owns(kinds.Secret)
      .complete(async () => undefined);
    manager.controller('abandoned').for(kinds.Pod).writes(kinds.Pod, ['delete']);
    assert.deepEqual(
      manager.permissions().map((p) => `${p.resource.kind}${p.subresource ? `/${p.subresource}` : ''}`),
      ['Widget', 'Secret'],
    );
  });

  test('leader election adds its Lease (create; get and update by name) in its namespace; secure metrics add the reviews', () => {
    const extra = widgetOperator({ leaderElection: true, secureMetrics: true })
      .permissions()
      .filter((p) => /leader election|secure metrics/.test(p.reason));
    assert.deepEqual(
      extra.map((p) => ({ kind: p.resource.kind, verbs: p.verbs, namespace: p.namespace, names: p.resourceNames })),
      [
        { kind: 'TokenReview', verbs: ['create'], namespace: undefined, names: undefined },
        { kind: 'SubjectAccessReview', verbs: ['create'], namespace: undefined, names: undefined },
        { kind: 'Lease', verbs: ['create'], namespace: 'widget-system', names: undefined },
        { kind: 'Lease', verbs: ['get', 'update'], namespace: 'widget-system', names: ['widget-operator'] },
      ],
    );
  });

  test('writes() refuses what is not a write, naming the controller', () => {
    const builder = new Manager({ client: offlineClient() }).controller('w').for(WIDGET);
    assert.throws(
      () => builder.writes(WIDGET, []),
      (e: unknown) => e instanceof InvalidOptionError && /controller w: no verbs for Widget/.test(e.message),
    );
    assert.throws(() => builder.writes(WIDGET, ['get' as 'create']), /controller w: get on Widget is not a write verb/);
    assert.throws(() => builder.writes(WIDGET, ['patch'], { subresource: '' }), /subresource ""/);
  });
});

describe('rbacManifests', () => {
  test('a cluster-wide manager: one ClusterRole and its binding, a Role for the Lease, a metrics-reader role', () => {
    const objects = rbacManifests(widgetOperator({ leaderElection: true, secureMetrics: true }), {
      name: 'widget-operator',
      serviceAccount: SA,
    });
    assert.deepEqual(
      objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`),
      [
        'ClusterRole /widget-operator',
        'ClusterRoleBinding /widget-operator',
        'Role widget-system/widget-operator',
        'RoleBinding widget-system/widget-operator',
        'ClusterRole /widget-operator-metrics-reader',
      ],
    );
    const [clusterRole, binding, role, roleBinding, reader] = objects.map((o): Record<string, unknown> => ({ ...o }));
    assert.ok(clusterRole && binding && role && roleBinding && reader);
    assert.deepEqual(clusterRole.rules, [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch', 'create', 'patch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      // The event recorder writes events.k8s.io/v1 (core/v1 is only its fallback).
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
      { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['list', 'watch', 'patch'] },
      { apiGroups: ['example.com'], resources: ['widgets/finalizers'], verbs: ['update'] },
      { apiGroups: ['example.com'], resources: ['widgets/status'], verbs: ['patch'] },
    ]);
    assert.deepEqual(binding.roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'widget-operator',
    });
    assert.deepEqual(binding.subjects, [
      { kind: 'ServiceAccount', name: 'widget-operator', namespace: 'widget-system' },
    ]);
    assert.deepEqual(role.rules, [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['widget-operator'],
        verbs: ['get', 'update'],
      },
    ]);
    assert.deepEqual(roleBinding.roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'widget-operator',
    });
    assert.deepEqual(reader.rules, [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  });

  test("a namespaced manager: a Role per namespace (the Lease joins its namespace's Role), cluster-scoped Nodes in the ClusterRole", () => {
    const manager = widgetOperator({ namespaces: ['team-b', 'widget-system'], leaderElection: true });
    const objects = rbacManifests(manager, {
      name: 'widget-operator',
      serviceAccount: SA,
      labels: { 'app.kubernetes.io/name': 'widget-operator' },
    });
    assert.deepEqual(
      objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`),
      [
        'ClusterRole /widget-operator',
        'ClusterRoleBinding /widget-operator',
        'Role team-b/widget-operator',
        'RoleBinding team-b/widget-operator',
        'Role widget-system/widget-operator',
        'RoleBinding widget-system/widget-operator',
      ],
    );
    assert.ok(
      objects.every(
        (o) =>
          (o.metadata as { labels?: Record<string, string> }).labels?.['app.kubernetes.io/name'] === 'widget-operator',
      ),
    );
    const rulesOf = (i: number) =>
      (objects[i] as { rules: { resources: string[] }[] }).rules.map((r) => r.resources.join());
    assert.deepEqual(rulesOf(0), ['nodes']);
    assert.deepEqual(rulesOf(2), ['configmaps', 'events', 'widgets', 'widgets/finalizers', 'widgets/status']);
    assert.deepEqual(rulesOf(4), [
      'configmaps',
      'leases',
      'leases',
      'events',
      'widgets',
      'widgets/finalizers',
      'widgets/status',
    ]);
  });

  test('names are checked before anything is generated', () => {
    const manager = widgetOperator();
    assert.throws(
      () => rbacManifests(manager, { name: 'Widget_Operator', serviceAccount: SA }),
      (e: unknown) =>
        e instanceof InvalidOptionError &&
        /invalid option name: "Widget_Operator" is not a DNS subdomain/.test(e.message),
    );
    assert.throws(
      () => rbacManifests(manager, { name: 'w', serviceAccount: { name: 'w', namespace: 'a.b' } }),
      /serviceAccount\.namespace: "a\.b" is not a DNS label/,
    );
  });
});

describe('offlineClient', () => {
  test('building a manager makes no request; any call is an OfflineClientError', async () => {
    const client = offlineClient();
    await assert.rejects(
      client.get(kinds.Pod, 'p'),
      (e: unknown) =>
        e instanceof OfflineClientError &&
        e.code === 'ERR_OFFLINE_CLIENT' &&
        /get: this client never connects/.test(e.message),
    );
    await assert.rejects(
      client.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }),
      /create: this client never connects/,
    );
    await assert.rejects(client.mapper.mapping(kinds.Pod), /mapping/);
    await assert.rejects(async () => {
      for await (const _ of client.listPages(kinds.Pod)) assert.fail('no page');
    }, /listPages/);
    await assert.rejects(async () => {
      for await (const _ of client.watch(kinds.Pod)) assert.fail('no event');
    }, /watch/);
    assert.equal(client.mapper.cached(kinds.Pod), undefined);
  });
});
