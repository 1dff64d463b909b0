import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { AbortedError, InvalidOptionError } from '../core/errors.js';
import { ApiError, isGone } from './api-error.js';
import { StaticTokenCredential } from './credentials.js';
import { NoKindMatchError, isNoKindMatch } from './discovery.js';
import { KubeClient } from './kube-client.js';
import { KubeconfigError } from './kubeconfig.js';
import { makeTlsConfig } from './tls-config.js';
import { WatchDecodeError, type WatchEvent } from './watch-decoder.js';
import { FakeApiServer, sendJson, sendStatus, type RecordedRequest } from './testing/fake-api-server.js';

let server: FakeApiServer;
let client: KubeClient;
let routes: ((req: RecordedRequest, res: ServerResponse) => boolean)[];
let widgetsServed = false;

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;

const coreV1 = {
  kind: 'APIResourceList',
  groupVersion: 'v1',
  resources: [
    {
      name: 'configmaps',
      namespaced: true,
      kind: 'ConfigMap',
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    { name: 'namespaces', namespaced: false, kind: 'Namespace', verbs: ['get', 'list'] },
    { name: 'namespaces/status', namespaced: false, kind: 'Namespace', verbs: ['get', 'patch', 'update'] },
  ],
};

before(async () => {
  server = await FakeApiServer.start();
  server.handle((req, res) => {
    if (req.url === '/api/v1') return sendJson(res, 200, coreV1);
    if (req.url === '/apis/example.com/v1') {
      if (!widgetsServed) return sendStatus(res, 404, 'NotFound', 'the server could not find the requested resource');
      return sendJson(res, 200, {
        kind: 'APIResourceList',
        groupVersion: 'example.com/v1',
        resources: [
          { name: 'widgets', namespaced: true, kind: 'Widget', verbs: ['get'] },
          { name: 'widgets/status', namespaced: true, kind: 'Widget', verbs: ['get'] },
          { name: 'widgets/scale', namespaced: true, kind: 'Scale', verbs: ['get'] },
        ],
      });
    }
    for (const r of routes) if (r(req, res)) return;
    sendStatus(res, 404, 'NotFound', `no route for ${req.method} ${req.url}`);
  });
});
after(async () => {
  await server.close();
});
beforeEach(async () => {
  await client?.close();
  routes = [];
  widgetsServed = false;
  server.requests.length = 0;
  client = new KubeClient(
    {
      server: server.url,
      tls: makeTlsConfig({ rejectUnauthorized: true }),
      credential: new StaticTokenCredential('t'),
      namespace: 'ctx-ns',
    },
    { backoff: { maxAttempts: 1 } },
  );
});

function route(
  method: string,
  url: RegExp | string,
  answer: (req: RecordedRequest, res: ServerResponse) => void,
): void {
  routes.push((req, res) => {
    if (req.method !== method || !(typeof url === 'string' ? req.url === url : url.test(req.url))) return false;
    answer(req, res);
    return true;
  });
}

const requestsTo = (prefix: string): RecordedRequest[] => server.requests.filter((r) => r.url.startsWith(prefix));

test('discovery maps a kind to its plural, scope and subresources, and caches the group-version', async () => {
  route('GET', '/api/v1/namespaces/a/configmaps/x', (_r, res) =>
    sendJson(res, 200, { ...CM, metadata: { name: 'x' } }),
  );
  route('GET', '/api/v1/namespaces/a/configmaps/y', (_r, res) =>
    sendJson(res, 200, { ...CM, metadata: { name: 'y' } }),
  );
  await client.get(CM, 'x', { namespace: 'a' });
  await client.get(CM, 'y', { namespace: 'a' });
  assert.equal(requestsTo('/api/v1').filter((r) => r.url === '/api/v1').length, 1, 'one discovery fetch');
  const ns = await client.mapper.mapping({ apiVersion: 'v1', kind: 'Namespace' });
  assert.equal(ns.namespaced, false);
  assert.deepEqual([...ns.subresources], ['status']);
});

test('a kind installed after the client started is found by refreshing discovery on the miss', async () => {
  await assert.rejects(
    client.mapper.mapping(WIDGET),
    (e: unknown) => e instanceof NoKindMatchError && isNoKindMatch(e),
  );
  widgetsServed = true;
  const m = await client.mapper.mapping(WIDGET);
  assert.equal(m.resource, 'widgets');
  assert.deepEqual([...m.subresources].sort(), ['scale', 'status']);
  await assert.rejects(client.mapper.mapping({ apiVersion: 'v1', kind: 'Nope' }), NoKindMatchError);
});

test('single-object calls on a namespaced kind need a namespace; cluster-scoped paths have none', async () => {
  await assert.rejects(
    client.get(CM, 'x'),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'namespace',
  );
  route('GET', '/api/v1/namespaces/kube-system', (_r, res) => sendJson(res, 200, { kind: 'Namespace' }));
  await client.get({ apiVersion: 'v1', kind: 'Namespace' }, 'kube-system');
});

test('list pages carry apiVersion and kind on every item, and the list resourceVersion and continue token', async () => {
  route('GET', /^\/api\/v1\/namespaces\/a\/configmaps\?/, (req, res) => {
    const q = new URL(req.url, 'http://x').searchParams;
    assert.equal(q.get('labelSelector'), 'app=x');
    assert.equal(q.get('fieldSelector'), 'metadata.name!=z');
    assert.equal(q.get('limit'), '2');
    assert.equal(q.get('resourceVersion'), '0');
    assert.equal(q.get('resourceVersionMatch'), 'NotOlderThan');
    sendJson(res, 200, {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '42', continue: 'tok' },
      items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }],
    });
  });
  const page = await client.listPage<ConfigMap>(CM, {
    namespace: 'a',
    labelSelector: 'app=x',
    fieldSelector: 'metadata.name!=z',
    limit: 2,
    resourceVersion: '0',
    resourceVersionMatch: 'NotOlderThan',
  });
  assert.equal(page.resourceVersion, '42');
  assert.equal(page.continue, 'tok');
  assert.deepEqual(
    page.items.map((i) => [i.apiVersion, i.kind, i.metadata?.name]),
    [
      ['v1', 'ConfigMap', 'a'],
      ['v1', 'ConfigMap', 'b'],
    ],
  );
});

test('list() pages through continue tokens, keeps selectors, and returns the first page resourceVersion', async () => {
  route('GET', /^\/api\/v1\/configmaps\?/, (req, res) => {
    const cont = new URL(req.url, 'http://x').searchParams.get('continue');
    if (!cont)
      return sendJson(res, 200, {
        metadata: { resourceVersion: '10', continue: 'p2' },
        items: [{ metadata: { name: 'a' } }],
      });
    if (cont === 'p2')
      return sendJson(res, 200, {
        metadata: { resourceVersion: '10', continue: 'p3' },
        items: [{ metadata: { name: 'b' } }],
      });
    sendJson(res, 200, { metadata: { resourceVersion: '10' }, items: [{ metadata: { name: 'c' } }] });
  });
  const all = await client.list<ConfigMap>(CM, {
    limit: 1,
    resourceVersion: '7',
    resourceVersionMatch: 'NotOlderThan',
    labelSelector: 'a=b',
  });
  const queries = requestsTo('/api/v1/configmaps?').map((r) =>
    Object.fromEntries(new URL(r.url, 'http://x').searchParams),
  );
  assert.deepEqual(
    queries,
    [
      { labelSelector: 'a=b', limit: '1', resourceVersion: '7', resourceVersionMatch: 'NotOlderThan' },
      { labelSelector: 'a=b', limit: '1', continue: 'p2' },
      { labelSelector: 'a=b', limit: '1', continue: 'p3' },
    ],
    'continued pages carry the selector but not resourceVersion(Match), which the server refuses next to continue',
  );
  assert.deepEqual(
    all.items.map((i) => i.metadata?.name),
    ['a', 'b', 'c'],
  );
  assert.equal(all.resourceVersion, '10');
});

test('an expired continue token restarts the list from the first page, marked restarted, and list() keeps no stale items', async () => {
  let firstPages = 0;
  route('GET', /^\/api\/v1\/configmaps\?/, (req, res) => {
    const cont = new URL(req.url, 'http://x').searchParams.get('continue');
    if (!cont) {
      firstPages++;
      return sendJson(res, 200, {
        metadata: { resourceVersion: String(firstPages * 100), continue: `c${firstPages}` },
        items: [{ metadata: { name: `first-${firstPages}` } }],
      });
    }
    if (cont === 'c1') return sendStatus(res, 410, 'Expired', 'The provided continue parameter is too old');
    sendJson(res, 200, { metadata: { resourceVersion: '200' }, items: [{ metadata: { name: 'last' } }] });
  });
  const pages = [];
  for await (const p of client.listPages(CM, { limit: 1 }))
    pages.push([p.restarted, p.items.map((i) => i.metadata?.name)]);
  assert.deepEqual(pages, [
    [false, ['first-1']],
    [true, ['first-2']],
    [false, ['last']],
  ]);
  firstPages = 0;
  const all = await client.list(CM, { limit: 1 });
  assert.deepEqual(
    all.items.map((i) => i.metadata?.name),
    ['first-2', 'last'],
  );
  assert.equal(all.resourceVersion, '200');
});

test('a 410 on the first page is not a restart: it is thrown', async () => {
  route('GET', /^\/api\/v1\/configmaps\?/, (_r, res) =>
    sendStatus(res, 410, 'Expired', 'too old resource version: 1 (50)'),
  );
  await assert.rejects(client.list(CM, { resourceVersion: '1', resourceVersionMatch: 'Exact' }), (e: unknown) =>
    isGone(e),
  );
});

test('writes send the right verb, content type and query: create, update, patch kinds, apply, delete', async () => {
  const seen: RecordedRequest[] = [];
  route('POST', /configmaps/, (req, res) => (seen.push(req), sendJson(res, 201, JSON.parse(req.body) as object)));
  route('PUT', /configmaps/, (req, res) => (seen.push(req), sendJson(res, 200, JSON.parse(req.body) as object)));
  route('PATCH', /configmaps/, (req, res) => (seen.push(req), sendJson(res, 200, {})));
  route(
    'DELETE',
    /configmaps/,
    (req, res) => (seen.push(req), sendJson(res, 200, { kind: 'Status', status: 'Success' })),
  );
  const cm: ConfigMap = { ...CM, metadata: { name: 'x', namespace: 'a', resourceVersion: '5' }, data: { k: 'v' } };
  await client.create(cm, { dryRun: true, fieldManager: 'me', fieldValidation: 'Strict' });
  await client.update(cm);
  await client.updateStatus(cm);
  await client.patch(CM, 'x', [{ op: 'test', path: '/data/k', value: 'v' }], { type: 'json', namespace: 'a' });
  await client.patch(CM, 'x', { data: { k: null } }, { type: 'merge', namespace: 'a' });
  await client.patch(CM, 'x', { data: { k: 'w' } }, { type: 'strategic', namespace: 'a' });
  await client.apply({ ...cm, metadata: { ...cm.metadata, managedFields: [{}] } }, { fieldManager: 'op', force: true });
  await client.delete(CM, 'x', {
    namespace: 'a',
    propagationPolicy: 'Foreground',
    preconditions: { uid: 'u1', resourceVersion: '5' },
    gracePeriodSeconds: 0,
    dryRun: true,
  });
  const shape = seen.map((r) => [r.method, r.url, r.headers['content-type']]);
  assert.deepEqual(shape, [
    ['POST', '/api/v1/namespaces/a/configmaps?dryRun=All&fieldManager=me&fieldValidation=Strict', 'application/json'],
    ['PUT', '/api/v1/namespaces/a/configmaps/x', 'application/json'],
    ['PUT', '/api/v1/namespaces/a/configmaps/x/status', 'application/json'],
    ['PATCH', '/api/v1/namespaces/a/configmaps/x', 'application/json-patch+json'],
    ['PATCH', '/api/v1/namespaces/a/configmaps/x', 'application/merge-patch+json'],
    ['PATCH', '/api/v1/namespaces/a/configmaps/x', 'application/strategic-merge-patch+json'],
    ['PATCH', '/api/v1/namespaces/a/configmaps/x?fieldManager=op&force=true', 'application/apply-patch+yaml'],
    ['DELETE', '/api/v1/namespaces/a/configmaps/x', 'application/json'],
  ]);
  assert.equal(
    (JSON.parse(seen[1]!.body) as ConfigMap).metadata?.resourceVersion,
    '5',
    'update sends the resourceVersion',
  );
  assert.equal(
    (JSON.parse(seen[6]!.body) as ConfigMap).metadata?.managedFields,
    undefined,
    'apply drops managedFields',
  );
  assert.deepEqual(JSON.parse(seen[7]!.body), {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    propagationPolicy: 'Foreground',
    preconditions: { uid: 'u1', resourceVersion: '5' },
    gracePeriodSeconds: 0,
    dryRun: ['All'],
  });
});

test('an update without resourceVersion is refused unless allowUnconditional; apply needs a fieldManager', async () => {
  await assert.rejects(
    client.update({ ...CM, metadata: { name: 'x', namespace: 'a' } }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'metadata.resourceVersion',
  );
  await assert.rejects(
    client.patch(CM, 'x', {}, { type: 'apply', namespace: 'a' }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'fieldManager',
  );
  await assert.rejects(client.patch(CM, 'x', {}, { type: 'merge', force: true, namespace: 'a' }), InvalidOptionError);
});

function watchRoute(lines: (string | ((res: ServerResponse) => void))[], keepOpen = false): void {
  route('GET', /^\/api\/v1\/namespaces\/a\/configmaps\?watch=true/, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    for (const l of lines) {
      if (typeof l === 'string') res.write(l);
      else l(res);
    }
    if (!keepOpen) res.end();
  });
}

const ev = (type: string, name: string, rv: string): string =>
  JSON.stringify({ type, object: { ...CM, metadata: { name, resourceVersion: rv } } }) + '\n';

test('watch yields typed events split across chunks, sends its options, and ends when the server closes', async () => {
  const body =
    ev('ADDED', 'a', '1') +
    ev('MODIFIED', 'a', '2') +
    JSON.stringify({ type: 'BOOKMARK', object: { ...CM, metadata: { resourceVersion: '3' } } }) +
    '\n' +
    ev('DELETED', 'a', '4');
  watchRoute([body.slice(0, 17), body.slice(17, 90), body.slice(90)]);
  const events: WatchEvent<ConfigMap>[] = [];
  for await (const e of client.watch<ConfigMap>(CM, {
    namespace: 'a',
    resourceVersion: '0',
    allowWatchBookmarks: true,
    timeoutSeconds: 30,
    labelSelector: 'x=y',
  }))
    events.push(e);
  assert.deepEqual(
    events.map((e) => [e.type, e.object.metadata?.resourceVersion]),
    [
      ['ADDED', '1'],
      ['MODIFIED', '2'],
      ['BOOKMARK', '3'],
      ['DELETED', '4'],
    ],
  );
  const q = new URL(requestsTo('/api/v1/namespaces/a/configmaps?watch')[0]!.url, 'http://x').searchParams;
  assert.deepEqual(Object.fromEntries(q), {
    watch: 'true',
    labelSelector: 'x=y',
    resourceVersion: '0',
    allowWatchBookmarks: 'true',
    timeoutSeconds: '30',
  });
});

test('an ERROR event is thrown as a typed Gone ApiError after the events before it', async () => {
  watchRoute([
    ev('ADDED', 'a', '1'),
    JSON.stringify({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (9)' },
    }) + '\n',
  ]);
  const seen: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of client.watch(CM, { namespace: 'a' })) seen.push(e.type);
    })(),
    (e: unknown) => e instanceof ApiError && isGone(e),
  );
  assert.deepEqual(seen, ['ADDED']);
});

test('an HTTP error on watch and a malformed line are thrown, never dropped', async () => {
  route('GET', /^\/api\/v1\/namespaces\/b\/configmaps\?watch=true/, (_r, res) =>
    sendStatus(res, 403, 'Forbidden', 'no'),
  );
  await assert.rejects(
    (async () => {
      for await (const _ of client.watch(CM, { namespace: 'b' })) assert.fail('no events');
    })(),
    (e: unknown) => e instanceof ApiError && e.status === 403,
  );
  watchRoute([ev('ADDED', 'a', '1'), '{"type":"MODIFIED","object":{\n', ev('ADDED', 'b', '3')]);
  const seen: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of client.watch<ConfigMap>(CM, { namespace: 'a' })) seen.push(e.object.metadata!.name!);
    })(),
    WatchDecodeError,
  );
  assert.deepEqual(seen, ['a']);
});

test('leaving a watch loop early closes the connection, and aborting the signal throws AbortedError', async () => {
  let closed = 0;
  watchRoute([ev('ADDED', 'a', '1'), (res) => void res.on('close', () => closed++)], true);
  for await (const _ of client.watch(CM, { namespace: 'a' })) break;
  while (closed < 1) await new Promise((r) => setImmediate(r));
  const ac = new AbortController();
  await assert.rejects(
    (async () => {
      for await (const _ of client.watch(CM, { namespace: 'a', signal: ac.signal })) ac.abort();
    })(),
    AbortedError,
  );
  while (closed < 2) await new Promise((r) => setImmediate(r));
});

test('concurrent lookups of an unknown group-version share one discovery fetch, and one caller aborting does not fail the others', async () => {
  widgetsServed = true;
  const ac = new AbortController();
  const a = client.mapper.mapping(WIDGET, ac.signal);
  const b = client.mapper.mapping(WIDGET);
  ac.abort();
  await assert.rejects(a, AbortedError);
  assert.equal((await b).resource, 'widgets');
  assert.equal(client.mapper.fetches, 1);
});

test('fromDefault resolves KUBECONFIG, then ~/.kube/config, then the in-cluster service account, else fails', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'default-'));
  const kc = (server: string): string =>
    stringify({
      'current-context': 'c',
      clusters: [{ name: 'k', cluster: { server } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [
        {
          name: 'c',
          context: { cluster: 'k', user: 'u', namespace: server.includes('env') ? 'from-env' : 'from-home' },
        },
      ],
    });
  const home = path.join(dir, 'home');
  await mkdir(path.join(home, '.kube'), { recursive: true });
  await writeFile(path.join(dir, 'env-config'), kc('https://env:1'));
  const sa = path.join(dir, 'sa');
  await mkdir(sa);
  await writeFile(path.join(sa, 'token'), 'sa-token');
  await writeFile(path.join(sa, 'ca.crt'), 'CA');
  await writeFile(path.join(sa, 'namespace'), 'from-pod');
  const pod = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };

  const opened: KubeClient[] = [];
  const open = async (env: Record<string, string>): Promise<string> => {
    const c = await KubeClient.fromDefault({ env: { HOME: home, ...env }, serviceAccountDir: sa });
    opened.push(c);
    return c.defaultNamespace;
  };
  assert.equal(await open({ KUBECONFIG: path.join(dir, 'env-config'), ...pod }), 'from-env');
  await assert.rejects(open({}), KubeconfigError, 'nothing configured');
  assert.equal(await open(pod), 'from-pod', 'no kubeconfig: the pod service account');
  await writeFile(path.join(home, '.kube', 'config'), kc('https://home:1'));
  assert.equal(await open(pod), 'from-home', '~/.kube/config wins over in-cluster');
  for (const c of opened) await c.close();
});
