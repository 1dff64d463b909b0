import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import type { ConfigMap, Namespace } from 'kubernetes-types/core/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import {
  ApiError,
  ignoreNotFound,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
} from './api-error.js';
import { isNoKindMatch } from './discovery.js';
import { KubeClient } from './kube-client.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const DEPLOY = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;
const GIZMO = { apiVersion: 'test.operator-runtime.dev/v1', kind: 'Gizmo' } as const;

interface Gizmo {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    generation?: number;
    uid?: string;
    labels?: Record<string, string>;
  };
  spec?: { size: number; replicas?: number; tags?: string[] };
  status?: { observedGeneration?: number; replicas?: number; message?: string };
}

function crd(plural: string, kind: string): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.test.operator-runtime.dev` },
    spec: {
      group: 'test.operator-runtime.dev',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
          },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['size'],
                  properties: {
                    size: { type: 'integer', minimum: 1, maximum: 10 },
                    replicas: { type: 'integer' },
                    tags: { type: 'array', items: { type: 'string' } },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    observedGeneration: { type: 'integer' },
                    replicas: { type: 'integer' },
                    message: { type: 'string' },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

function deployment(namespace: string, name: string): Deployment {
  return {
    ...DEPLOY,
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            { name: 'app', image: 'registry.local/app:1', env: [{ name: 'A', value: '1' }] },
            { name: 'sidecar', image: 'registry.local/side:1' },
          ],
        },
      },
    },
  };
}

async function eventually<T>(what: string, fn: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`timed out: ${what}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('KubeClient against a real API server', () => {
  let env: TestEnv;
  let client: KubeClient;
  let nsCount = 0;

  async function namespace(): Promise<string> {
    const name = `t${++nsCount}`;
    await client.create<Namespace>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    return name;
  }

  before(async () => {
    env = await TestEnv.start({ crds: [crd('gizmos', 'Gizmo')] });
    client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });

  test('a ConfigMap goes through create, get, list by label, update with its resourceVersion, and delete', async () => {
    const ns = await namespace();
    const created = await client.create<ConfigMap>({
      ...CM,
      metadata: { name: 'a', namespace: ns, labels: { app: 'x' } },
      data: { k: '1' },
    });
    await client.create<ConfigMap>({ ...CM, metadata: { name: 'b', namespace: ns, labels: { app: 'y' } } });
    assert.ok(created.metadata?.resourceVersion);
    const got = await client.get<ConfigMap>(CM, 'a', { namespace: ns });
    assert.equal(got.data?.k, '1');
    const listed = await client.list<ConfigMap>(CM, { namespace: ns, labelSelector: 'app=x' });
    assert.deepEqual(
      listed.items.map((i) => [i.apiVersion, i.kind, i.metadata?.name]),
      [['v1', 'ConfigMap', 'a']],
    );
    const byField = await client.list<ConfigMap>(CM, { namespace: ns, fieldSelector: 'metadata.name=b' });
    assert.deepEqual(
      byField.items.map((i) => i.metadata?.name),
      ['b'],
    );
    const updated = await client.update<ConfigMap>({ ...got, data: { k: '2' } });
    assert.equal(updated.data?.k, '2');
    assert.notEqual(updated.metadata?.resourceVersion, got.metadata?.resourceVersion);
    await client.delete(CM, 'a', { namespace: ns });
    assert.equal(await ignoreNotFound(client.get(CM, 'a', { namespace: ns })), undefined);
    await assert.rejects(client.create<ConfigMap>({ ...CM, metadata: { name: 'b', namespace: ns } }), isAlreadyExists);
  });

  test('an update carrying a stale resourceVersion fails with 409 Conflict', async () => {
    const ns = await namespace();
    const first = await client.create<ConfigMap>({ ...CM, metadata: { name: 'c', namespace: ns }, data: { v: '1' } });
    await client.update<ConfigMap>({ ...first, data: { v: '2' } });
    await assert.rejects(
      client.update<ConfigMap>({ ...first, data: { v: '3' } }),
      (e: unknown) => e instanceof ApiError && e.status === 409 && isConflict(e),
    );
    await assert.rejects(
      client.delete(CM, 'c', { namespace: ns, preconditions: { resourceVersion: first.metadata!.resourceVersion! } }),
      isConflict,
    );
    await assert.rejects(client.delete(CM, 'c', { namespace: ns, preconditions: { uid: 'not-the-uid' } }), isConflict);
    const gizmo = await client.create<Gizmo>({ ...GIZMO, metadata: { name: 'g', namespace: ns }, spec: { size: 1 } });
    await client.update<Gizmo>({ ...gizmo, spec: { size: 2 } });
    await assert.rejects(client.update<Gizmo>({ ...gizmo, spec: { size: 3 } }), isConflict);
  });

  test('invalid input fails with 422 and names the offending fields', async () => {
    const ns = await namespace();
    await assert.rejects(
      client.create<Gizmo>({ ...GIZMO, metadata: { name: 'bad', namespace: ns }, spec: { size: 99 } }),
      (e: unknown) => {
        assert.ok(e instanceof ApiError && isInvalid(e) && e.status === 422);
        assert.equal(e.details?.kind, 'Gizmo');
        assert.ok(
          e.details?.causes?.some((c) => c.field === 'spec.size'),
          JSON.stringify(e.details),
        );
        return true;
      },
    );
    await assert.rejects(
      client.create<ConfigMap>({ ...CM, metadata: { name: 'Not_A_Name', namespace: ns } }),
      (e: unknown) => {
        assert.ok(isInvalid(e));
        assert.ok((e as ApiError).details?.causes?.some((c) => c.field === 'metadata.name'));
        return true;
      },
    );
  });

  test('a client built from the kubeconfig object (not the file) reaches the same server', async () => {
    const fromObject = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    try {
      assert.equal(fromObject.defaultNamespace, client.defaultNamespace);
      assert.ok((await fromObject.list(CM, { namespace: 'kube-system' })).resourceVersion);
    } finally {
      await fromObject.close();
    }
  });

  test('TLS is verified: without the cluster CA the client refuses the API server certificate', async () => {
    const kc = structuredClone(env.kubeconfig) as { clusters: { cluster: Record<string, unknown> }[] };
    for (const c of kc.clusters) {
      delete c.cluster['certificate-authority-data'];
      delete c.cluster['certificate-authority'];
    }
    const unverified = await KubeClient.fromKubeconfig({ kubeconfig: kc, backoff: { maxAttempts: 1 } });
    try {
      await assert.rejects(unverified.list(CM, { namespace: 'default' }), (e: unknown) => {
        assert.equal((e as { code?: string }).code, 'ERR_TRANSPORT');
        assert.ok(!String((e as Error).message).includes(env.adminToken));
        return true;
      });
    } finally {
      await unverified.close();
    }
  });

  test('a missing object is a 404 NotFound', async () => {
    await assert.rejects(
      client.get(CM, 'nope', { namespace: 'default' }),
      (e: unknown) => e instanceof ApiError && isNotFound(e) && e.details?.name === 'nope',
    );
    await assert.rejects(client.delete(GIZMO, 'nope', { namespace: 'default' }), isNotFound);
  });

  test('a least-privilege user gets 403 until RBAC grants exactly what it needs', async () => {
    const ns = await namespace();
    await client.create<ConfigMap>({ ...CM, metadata: { name: 'readable', namespace: ns } });
    const alice = await env.userKubeconfig({ user: 'alice' });
    const asAlice = await KubeClient.fromKubeconfig({ path: alice.path });
    try {
      await assert.rejects(
        asAlice.get(CM, 'readable', { namespace: ns }),
        (e: unknown) => e instanceof ApiError && isForbidden(e) && e.reason === 'Forbidden',
      );
      await client.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'cm-reader', namespace: ns },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
      });
      await client.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'alice-reads', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
      });
      const got = await eventually('RBAC grant to take effect', () =>
        asAlice.get<ConfigMap>(CM, 'readable', { namespace: ns }),
      );
      assert.equal(got.metadata?.name, 'readable');
      await assert.rejects(asAlice.list(CM, { namespace: ns }), isForbidden, 'get was granted, list was not');
      await assert.rejects(asAlice.create<ConfigMap>({ ...CM, metadata: { name: 'w', namespace: ns } }), isForbidden);
    } finally {
      await asAlice.close();
    }
  });

  test('a Deployment: status through /status without a generation bump, and scale read and set', async () => {
    const ns = await namespace();
    const d = await client.create(deployment(ns, 'web'));
    const withStatus = await client.updateStatus<Deployment>({
      ...d,
      status: { observedGeneration: d.metadata!.generation, replicas: 1, readyReplicas: 1 },
    });
    assert.equal(withStatus.status?.readyReplicas, 1);
    assert.equal(withStatus.metadata?.generation, d.metadata?.generation, 'status writes never bump generation');
    const patched = await client.patchStatus<Deployment>(
      DEPLOY,
      'web',
      { status: { availableReplicas: 1 } },
      { namespace: ns },
    );
    assert.equal(patched.status?.availableReplicas, 1);
    assert.equal(patched.status?.readyReplicas, 1, 'a merge patch keeps the other status fields');
    const scale = await client.getScale(DEPLOY, 'web', { namespace: ns });
    assert.equal(scale.spec?.replicas, 1);
    assert.equal(scale.kind, 'Scale');
    await client.scale(DEPLOY, 'web', 3, { namespace: ns });
    const after = await client.get<Deployment>(DEPLOY, 'web', { namespace: ns });
    assert.equal(after.spec?.replicas, 3);
  });

  test('a Deployment takes JSON patch (with test ops), merge, strategic-merge patches and server-side apply', async () => {
    const ns = await namespace();
    const d = await client.create(deployment(ns, 'api'));
    const json = await client.patch<Deployment>(
      DEPLOY,
      'api',
      [
        { op: 'test', path: '/metadata/resourceVersion', value: d.metadata!.resourceVersion },
        { op: 'replace', path: '/spec/replicas', value: 2 },
      ],
      { type: 'json', namespace: ns },
    );
    assert.equal(json.spec?.replicas, 2);
    await assert.rejects(
      client.patch(
        DEPLOY,
        'api',
        [{ op: 'test', path: '/metadata/resourceVersion', value: d.metadata!.resourceVersion }],
        { type: 'json', namespace: ns },
      ),
      (e: unknown) => e instanceof ApiError && e.status >= 400 && e.status < 500,
      'a failing test op rejects the whole patch',
    );
    const merged = await client.patch<Deployment>(
      DEPLOY,
      'api',
      { metadata: { labels: { tier: 'backend' } } },
      { type: 'merge', namespace: ns },
    );
    assert.equal(merged.metadata?.labels?.tier, 'backend');
    // Strategic merge merges containers by name: the sidecar survives a patch naming only `app`.
    const smp = await client.patch<Deployment>(
      DEPLOY,
      'api',
      { spec: { template: { spec: { containers: [{ name: 'app', image: 'registry.local/app:2' }] } } } },
      { type: 'strategic', namespace: ns },
    );
    assert.deepEqual(
      smp.spec?.template.spec?.containers.map((c) => [c.name, c.image]),
      [
        ['app', 'registry.local/app:2'],
        ['sidecar', 'registry.local/side:1'],
      ],
    );
    const applied = await client.apply<Deployment>(
      {
        ...DEPLOY,
        metadata: { name: 'api', namespace: ns, annotations: { owner: 'op' } },
        spec: { replicas: 4, selector: { matchLabels: { app: 'api' } }, template: d.spec!.template },
      },
      { fieldManager: 'op-a', force: true },
    );
    assert.equal(applied.spec?.replicas, 4);
    assert.equal(applied.metadata?.annotations?.owner, 'op');
    assert.ok(applied.metadata?.managedFields?.some((f) => f.manager === 'op-a' && f.operation === 'Apply'));
    // Another manager setting a field op-a owns conflicts, unless it forces.
    const other = {
      ...DEPLOY,
      metadata: { name: 'api', namespace: ns },
      spec: { replicas: 5, selector: { matchLabels: { app: 'api' } }, template: d.spec!.template },
    };
    await assert.rejects(client.apply<Deployment>(other, { fieldManager: 'op-b' }), (e: unknown) => isConflict(e));
    assert.equal((await client.apply<Deployment>(other, { fieldManager: 'op-b', force: true })).spec?.replicas, 5);
  });

  test('regression: an int64 beyond 2^53 survives a write, get, list, a read-modify-write and a watch exactly (JSON.parse rounded 9007199254740993 to …992)', async () => {
    const ns = await namespace();
    const big = 9007199254740993n;
    type BigGizmo = Omit<Gizmo, 'status'> & { status?: { observedGeneration?: bigint; message?: string } };
    const created = await client.create<BigGizmo>({
      ...GIZMO,
      metadata: { name: 'big', namespace: ns },
      spec: { size: 2 },
    });
    const written = await client.updateStatus<BigGizmo>({
      ...created,
      status: { observedGeneration: big, message: 'a' },
    });
    assert.equal(written.status?.observedGeneration, big);
    const got = await client.get<BigGizmo>(GIZMO, 'big', { namespace: ns });
    assert.equal(got.status?.observedGeneration, big);
    await client.updateStatus<BigGizmo>({ ...got, status: { ...got.status, message: 'b' } });
    const after = await client.get<BigGizmo>(GIZMO, 'big', { namespace: ns });
    assert.deepEqual(
      [after.status?.message, after.status?.observedGeneration],
      ['b', big],
      'the write-back stored the exact value',
    );
    const { items } = await client.list<BigGizmo>(GIZMO, { namespace: ns });
    assert.equal(items[0]?.status?.observedGeneration, big);
    for await (const e of client.watch<BigGizmo>(GIZMO, { namespace: ns, resourceVersion: '0' })) {
      assert.equal((e.object as BigGizmo).status?.observedGeneration, big);
      break;
    }
  });

  test('a custom resource: CRUD, status, scale, JSON/merge patches and apply; strategic merge is refused', async () => {
    const ns = await namespace();
    const g = await client.create<Gizmo>({
      ...GIZMO,
      metadata: { name: 'g1', namespace: ns },
      spec: { size: 2, replicas: 1, tags: ['a'] },
    });
    assert.equal(g.metadata?.generation, 1);
    const st = await client.updateStatus<Gizmo>({
      ...g,
      status: { observedGeneration: 1, replicas: 1, message: 'ok' },
    });
    assert.equal(st.status?.message, 'ok');
    assert.equal(st.metadata?.generation, 1);
    const upd = await client.update<Gizmo>({ ...st, spec: { size: 3, replicas: 1, tags: ['a'] } });
    assert.equal(upd.metadata?.generation, 2);
    assert.equal(upd.status?.message, 'ok', 'a main-resource update does not touch status');
    const scale = await client.getScale(GIZMO, 'g1', { namespace: ns });
    assert.deepEqual([scale.spec?.replicas, scale.status?.replicas], [1, 1]);
    await client.scale(GIZMO, 'g1', 4, { namespace: ns });
    assert.equal((await client.get<Gizmo>(GIZMO, 'g1', { namespace: ns })).spec?.replicas, 4);
    const jp = await client.patch<Gizmo>(GIZMO, 'g1', [{ op: 'add', path: '/spec/tags/-', value: 'b' }], {
      type: 'json',
      namespace: ns,
    });
    assert.deepEqual(jp.spec?.tags, ['a', 'b']);
    const mp = await client.patch<Gizmo>(GIZMO, 'g1', { spec: { size: 5 } }, { type: 'merge', namespace: ns });
    assert.equal(mp.spec?.size, 5);
    await assert.rejects(
      client.patch(GIZMO, 'g1', { spec: { size: 6 } }, { type: 'strategic', namespace: ns }),
      (e: unknown) => e instanceof ApiError && e.status === 415,
    );
    const applied = await client.apply<Gizmo>(
      { ...GIZMO, metadata: { name: 'g1', namespace: ns }, spec: { size: 7 } },
      { fieldManager: 'op', force: true },
    );
    assert.equal(applied.spec?.size, 7);
    const statusApplied = await client.applyStatus<Gizmo>(
      { ...GIZMO, metadata: { name: 'g1', namespace: ns }, status: { message: 'applied' } },
      { fieldManager: 'op', force: true },
    );
    assert.equal(statusApplied.status?.message, 'applied');
    await client.delete(GIZMO, 'g1', { namespace: ns, propagationPolicy: 'Background', gracePeriodSeconds: 0 });
    await assert.rejects(client.get(GIZMO, 'g1', { namespace: ns }), isNotFound);
  });

  test('dryRun validates and answers without persisting', async () => {
    const ns = await namespace();
    const dry = await client.create<ConfigMap>({ ...CM, metadata: { name: 'dry', namespace: ns } }, { dryRun: true });
    assert.equal(dry.metadata?.name, 'dry');
    await assert.rejects(client.get(CM, 'dry', { namespace: ns }), isNotFound);
    await assert.rejects(
      client.create<Gizmo>({ ...GIZMO, metadata: { name: 'dry', namespace: ns }, spec: { size: 0 } }, { dryRun: true }),
      isInvalid,
    );
  });

  test('a CRD created after the client started is usable without restarting the client', async () => {
    const ns = await namespace();
    const DOO = { apiVersion: 'test.operator-runtime.dev/v1', kind: 'Doohickey' } as const;
    // The group-version is already cached (Gizmo), so this is the "refresh on a miss" path.
    await assert.rejects(client.list(DOO, { namespace: ns }), isNoKindMatch);
    await client.create(crd('doohickeys', 'Doohickey'));
    await eventually('CRD established', async () => {
      const c = await client.get<CustomResourceDefinition>(
        { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
        'doohickeys.test.operator-runtime.dev',
      );
      if (!c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True'))
        throw new Error('not yet');
    });
    const created = await eventually('Doohickey served', () =>
      client.create<Gizmo>({ ...DOO, metadata: { name: 'd1', namespace: ns }, spec: { size: 1 } }),
    );
    assert.equal(created.kind, 'Doohickey');
    assert.equal((await client.list(DOO, { namespace: ns })).items.length, 1);
  });

  test('a paged list returns every object once, and an expired continue token restarts it cleanly', async () => {
    const ns = await namespace();
    for (let i = 0; i < 23; i++)
      await client.create<ConfigMap>({ ...CM, metadata: { name: `p${String(i).padStart(2, '0')}`, namespace: ns } });
    const all = await client.list<ConfigMap>(CM, { namespace: ns, limit: 5 });
    assert.equal(all.items.length, 23);
    // A consistent read no older than a known resourceVersion, paged: later pages must not repeat it.
    const notOlder = await client.list<ConfigMap>(CM, {
      namespace: ns,
      limit: 5,
      resourceVersion: all.resourceVersion,
      resourceVersionMatch: 'NotOlderThan',
    });
    assert.equal(notOlder.items.length, 23);
    assert.equal(new Set(all.items.map((i) => i.metadata?.name)).size, 23);

    const pages: { restarted: boolean; names: string[] }[] = [];
    for await (const page of client.listPages<ConfigMap>(CM, { namespace: ns, limit: 10 })) {
      pages.push({ restarted: page.restarted, names: page.items.map((i) => i.metadata!.name!) });
      if (pages.length === 1) {
        // Move etcd on and compact: the first page's snapshot is gone, so its continue token expires.
        await client.create<ConfigMap>({ ...CM, metadata: { name: 'late', namespace: ns } });
        await env.compact();
        await assert.rejects(
          client.listPage(CM, {
            namespace: ns,
            limit: 10,
            continue: undefined,
            resourceVersion: page.resourceVersion,
            resourceVersionMatch: 'Exact',
          }),
          isGone,
        );
      }
    }
    assert.equal(pages[0]!.restarted, false);
    assert.equal(pages[1]!.restarted, true, 'the list started over after the 410');
    const afterRestart = pages.slice(1).flatMap((p) => p.names);
    assert.equal(afterRestart.length, 24);
    assert.ok(afterRestart.includes('late'));
  });

  test('with allowH2 the client negotiates HTTP/2 and still gets, lists and watches', async () => {
    const ns = await namespace();
    // Subscribed after the admin client's last call: from here on only the HTTP/2 client connects.
    const alpn: string[] = [];
    const onConnect = (msg: unknown): void =>
      void alpn.push(String((msg as { socket?: { alpnProtocol?: unknown } }).socket?.alpnProtocol));
    diagnostics.subscribe('undici:client:connected', onConnect);
    const h2 = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath, allowH2: true });
    try {
      const { resourceVersion } = await h2.list(CM, { namespace: ns });
      const ac = new AbortController();
      const seen: string[] = [];
      // Settles as a value at once, so the rejection is never briefly unhandled.
      const ended = (async () => {
        for await (const e of h2.watch<ConfigMap>(CM, { namespace: ns, resourceVersion, signal: ac.signal })) {
          seen.push(`${e.type} ${e.object.metadata?.name}`);
          ac.abort();
        }
      })().then(
        () => undefined,
        (e: unknown) => e,
      );
      await h2.create<ConfigMap>({ ...CM, metadata: { name: 'over-h2', namespace: ns } });
      assert.equal((await h2.get<ConfigMap>(CM, 'over-h2', { namespace: ns })).metadata?.name, 'over-h2');
      assert.equal(((await ended) as { code?: string }).code, 'ERR_ABORTED');
      assert.deepEqual(seen, ['ADDED over-h2']);
      assert.ok(alpn.length > 0 && alpn.every((p) => p === 'h2'), `negotiated: ${alpn.join(', ')}`);
    } finally {
      diagnostics.unsubscribe('undici:client:connected', onConnect);
      await h2.close();
    }
  });
});
