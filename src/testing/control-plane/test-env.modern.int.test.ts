import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../../client/kube-client.js';
import { isNoKindMatch } from '../../client/discovery.js';
import { isForbidden } from '../../client/api-error.js';
import { SharedInformer } from '../../cache/informer.js';
import { clientListerWatcher } from '../../cache/client-lister-watcher.js';
import type { KubeObject } from '../../core/object-key.js';
import { TestEnv, TestEnvError } from './test-env.js';
import { eventually } from './eventually.js';
import { WIDGET_CRD } from '../conformance/client-conformance.js';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;

describe('TestEnv on the Kubernetes 1.36 CRD-only API server', () => {
  let env: TestEnv;
  let startMs = 0;

  before(async () => {
    const t0 = performance.now();
    env = await TestEnv.start({ server: 'modern', crds: [WIDGET_CRD] });
    startMs = performance.now() - t0;
  });
  after(async () => {
    await env?.stop();
  });

  test('it is a 1.36 server on its own port with the usual kubeconfig surface (admin token, CA), serving the CRD', async () => {
    console.log(
      `modern TestEnv start (etcd 3.5 + 1.20 auth delegate + 1.36 server + 1 CRD): ${Math.round(startMs)} ms`,
    );
    assert.equal(env.serverKind, 'modern');
    const version = await env.request<{ gitVersion: string; minor: string }>('GET', '/version');
    assert.match(version.body.gitVersion, /^v1\.36\./);
    assert.notEqual(env.authDelegate?.server, env.server);
    const client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
    try {
      const created = await client.create<KubeObject & { spec: { size: number } }>({
        ...WIDGET,
        metadata: { name: 'w', namespace: 'anywhere' },
        spec: { size: 2 },
      });
      assert.equal(created.metadata?.generation, 1);
      const groups = await env.request<{ groups: { name: string }[] }>('GET', '/apis');
      assert.ok(
        groups.body.groups.some((g) => g.name === 'example.com'),
        'root discovery lists the CRD group',
      );
    } finally {
      await client.close();
    }
  });

  test('asking for a core kind is a clear error: the server does not serve v1', async () => {
    const client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
    try {
      await assert.rejects(
        client.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'x', { namespace: 'default' }),
        (e: unknown) => {
          assert.ok(isNoKindMatch(e), String(e));
          assert.match((e as Error).message, /ConfigMap in v1: the server does not serve this group-version/);
          return true;
        },
      );
    } finally {
      await client.close();
    }
    await assert.rejects(
      TestEnv.start({ server: 'modern', controllerManager: true }),
      (e: unknown) => e instanceof TestEnvError && /serves custom resources only/.test(e.message),
    );
  });

  test('users are authenticated and authorized by the delegate: forbidden until RBAC on the delegate grants them', async () => {
    const user = await env.userKubeconfig({ user: 'reader' });
    const client = await KubeClient.fromKubeconfig({ kubeconfig: user.kubeconfig });
    const admin = await KubeClient.fromKubeconfig({ path: env.authDelegate!.kubeconfigPath });
    try {
      await assert.rejects(client.list(WIDGET, { namespace: 'anywhere' }), isForbidden);
      await admin.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'widget-reader' },
        rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }],
      });
      await admin.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'widget-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widget-reader' },
        subjects: [{ kind: 'User', name: 'reader', apiGroup: 'rbac.authorization.k8s.io' }],
      });
      // The RBAC cache of the delegate needs a moment; the modern server caches no denial.
      const listed = await eventually('the grant to reach the modern server', async () => {
        try {
          return await client.list(WIDGET, { namespace: 'anywhere' });
        } catch (err) {
          if (isForbidden(err)) return undefined;
          throw err;
        }
      });
      assert.deepEqual(
        listed.items.map((i) => i.metadata?.name),
        ['w'],
      );
      await assert.rejects(client.delete(WIDGET, 'w', { namespace: 'anywhere' }), isForbidden, 'get/list/watch only');
    } finally {
      await client.close();
      await admin.close();
    }
  });

  test('restartApiServer restarts the modern server; the data stays', async () => {
    await env.restartApiServer();
    const got = await env.request<{ spec: { size: number } }>(
      'GET',
      '/apis/example.com/v1/namespaces/anywhere/widgets/w',
    );
    assert.equal(got.status, 200);
    assert.equal(got.body.spec.size, 2);
  });
});

describe('watch-list informers against real servers', () => {
  for (const server of ['modern', 'kube-apiserver'] as const) {
    const expected = server === 'modern' ? 'watch-list' : 'list';
    test(`${server === 'modern' ? 'Kubernetes 1.36' : 'Kubernetes 1.20'}: the first sync is a ${expected}, the store holds every object and later changes arrive`, async () => {
      const env = await TestEnv.start({ server, crds: [WIDGET_CRD] });
      const client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
      const ac = new AbortController();
      try {
        for (let i = 0; i < 25; i++)
          await client.create({ ...WIDGET, metadata: { name: `w${i}`, namespace: 'default' }, spec: { size: 1 } });
        const informer = new SharedInformer(clientListerWatcher(client, { ...WIDGET, namespace: 'default' }), {
          pageSize: 10,
        });
        const running = informer.start(ac.signal);
        await informer.waitForSync(ac.signal, 30_000);
        assert.equal(informer.health().listMode, expected);
        assert.equal(informer.reader.list().length, 25);
        await client.create({ ...WIDGET, metadata: { name: 'late', namespace: 'default' }, spec: { size: 1 } });
        await eventually('the later create to reach the store', () =>
          informer.reader.list().some((o) => o.metadata?.name === 'late'),
        );
        assert.equal(informer.health().lists, 1, 'one sync, no relist');
        ac.abort();
        await running;
      } finally {
        ac.abort();
        await client.close();
        await env.stop();
      }
    });
  }
});

test('Kubernetes 1.36 with featureGates { ShardedListAndWatch: true }: shardSelector splits list and watch-list between two ranges', async () => {
  const env = await TestEnv.start({
    server: 'modern',
    crds: [WIDGET_CRD],
    featureGates: { ShardedListAndWatch: true },
  });
  try {
    const base = '/apis/example.com/v1/namespaces/ns/widgets';
    for (let i = 0; i < 20; i++) {
      const res = await env.request('POST', base, { ...WIDGET, metadata: { name: `w${i}` }, spec: { size: 1 } });
      assert.equal(res.status, 201);
    }
    const half = (from: string, to: string) =>
      encodeURIComponent(`shardRange(object.metadata.uid, '${from}', '${to}')`);
    const low = await env.request<{ items: unknown[] }>(
      'GET',
      `${base}?shardSelector=${half('0x0000000000000000', '0x8000000000000000')}`,
    );
    const high = await env.request<{ items: unknown[] }>(
      'GET',
      `${base}?shardSelector=${half('0x8000000000000000', '0x10000000000000000')}`,
    );
    assert.equal(low.status, 200, JSON.stringify(low.body));
    assert.equal(high.status, 200, JSON.stringify(high.body));
    assert.equal(
      low.body.items.length + high.body.items.length,
      20,
      `${low.body.items.length} + ${high.body.items.length}`,
    );
    assert.ok(low.body.items.length > 0 && high.body.items.length > 0, 'both shards hold some (20 random uids)');
    // A watch-list with the same selector streams just that shard, then the initial-events-end bookmark.
    const watch = await env.request<string>(
      'GET',
      `${base}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1&shardSelector=${half('0x0000000000000000', '0x8000000000000000')}`,
    );
    const events = String(watch.body)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: { annotations?: Record<string, string> } } });
    const end = events.findIndex(
      (e) => e.type === 'BOOKMARK' && e.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true',
    );
    assert.ok(end >= 0, 'the initial-events-end bookmark came');
    assert.equal(events.slice(0, end).filter((e) => e.type === 'ADDED').length, low.body.items.length);
  } finally {
    await env.stop();
  }
});
