import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { StaticTokenCredential } from './credentials.js';
import { KubeClient } from './kube-client.js';
import { makeTlsConfig } from './tls-config.js';
import { FakeApiServer, sendJson, sendStatus } from './testing/fake-api-server.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const SELECTOR = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";

let server: FakeApiServer;
let client: KubeClient;

before(async () => {
  server = await FakeApiServer.start();
  server.handle((req, res) => {
    if (req.url === '/api/v1') {
      return sendJson(res, 200, {
        kind: 'APIResourceList',
        groupVersion: 'v1',
        resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['list', 'watch'] }],
      });
    }
    const url = new URL(req.url, 'http://x');
    if (url.pathname !== '/api/v1/configmaps') return sendStatus(res, 404, 'NotFound', `no route for ${req.url}`);
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'w', resourceVersion: '11' } } }) + '\n');
      return;
    }
    const cont = url.searchParams.get('continue');
    // As KEP-5866 specifies (the 1.36.4 build leaves it out of custom resource lists): the applied selector, echoed.
    const selector = url.searchParams.get('shardSelector');
    const shardInfo = selector ? { shardInfo: { selector } } : {};
    if (!cont)
      return sendJson(res, 200, {
        metadata: { resourceVersion: '10', continue: 'p2', ...shardInfo },
        items: [{ metadata: { name: 'a' } }],
      });
    sendJson(res, 200, { metadata: { resourceVersion: '10', ...shardInfo }, items: [{ metadata: { name: 'b' } }] });
  });
  client = new KubeClient(
    {
      server: server.url,
      tls: makeTlsConfig({ rejectUnauthorized: true }),
      credential: new StaticTokenCredential('t'),
      namespace: 'default',
    },
    { backoff: { maxAttempts: 1 } },
  );
});
after(async () => {
  await client.close();
  await server.close();
});

const queries = (): Record<string, string>[] =>
  server.requests
    .filter((r) => r.url.startsWith('/api/v1/configmaps?'))
    .map((r) => Object.fromEntries(new URL(r.url, 'http://x').searchParams));

test('shardSelector is sent on every page of a paged list (the continue token does not carry it) and on watch; shardInfo is read back', async () => {
  server.requests.length = 0;
  const pages = [];
  for await (const page of client.listPages(CM, {
    limit: 1,
    shardSelector: SELECTOR,
    resourceVersion: '0',
    resourceVersionMatch: 'NotOlderThan',
  }))
    pages.push(page);
  assert.deepEqual(
    pages.map((p) => p.shardInfo),
    [{ selector: SELECTOR }, { selector: SELECTOR }],
  );
  for await (const _ of client.watch(CM, {
    shardSelector: SELECTOR,
    sendInitialEvents: true,
    resourceVersionMatch: 'NotOlderThan',
    allowWatchBookmarks: true,
  }))
    break;
  assert.deepEqual(queries(), [
    { shardSelector: SELECTOR, limit: '1', resourceVersion: '0', resourceVersionMatch: 'NotOlderThan' },
    { shardSelector: SELECTOR, limit: '1', continue: 'p2' },
    {
      watch: 'true',
      shardSelector: SELECTOR,
      allowWatchBookmarks: 'true',
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
    },
  ]);
});

test('without a shardSelector nothing is sent, and a list without shardInfo has none', async () => {
  server.requests.length = 0;
  const page = await client.listPage(CM, { limit: 1 });
  assert.equal(page.shardInfo, undefined);
  assert.deepEqual(queries(), [{ limit: '1' }]);
});
