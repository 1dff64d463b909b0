import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { StaticTokenCredential } from './credentials.js';
import { FakeApiServer, sendJson } from './testing/fake-api-server.js';
import { KubeClient } from './kube-client.js';
import { METADATA_ONLY_ACCEPT, toPartialObjectMetadata } from './partial-object-metadata.js';
import { makeTlsConfig } from './tls-config.js';

let server: FakeApiServer;
before(async () => {
  server = await FakeApiServer.start();
});
after(async () => {
  await server.close();
});

const DISCOVERY = {
  kind: 'APIResourceList',
  groupVersion: 'v1',
  resources: [{ name: 'secrets', namespaced: true, kind: 'Secret', verbs: ['list', 'watch'] }],
};
const secret = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'n' },
  data: { password: 'aHVudGVyMg==' },
});

test('metadataOnly sends the PartialObjectMetadata Accept headers on every page and the watch; whole objects from a server that cannot convert are cut down', async () => {
  server.requests.length = 0;
  server.handle((req, res) => {
    if (req.url === '/api/v1') return sendJson(res, 200, DISCOVERY);
    if (req.url.includes('watch=true')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ type: 'ADDED', object: secret('w') }) + '\n');
    }
    // Answers as a server without the conversion would: the plain JSON fallback, whole objects.
    if (!req.url.includes('continue='))
      return sendJson(res, 200, {
        kind: 'SecretList',
        metadata: { resourceVersion: '5', continue: 'p2' },
        items: [secret('a')],
      });
    return sendJson(res, 200, { kind: 'SecretList', metadata: { resourceVersion: '5' }, items: [secret('b')] });
  });
  const client = new KubeClient({
    server: server.url,
    tls: makeTlsConfig({ rejectUnauthorized: true }),
    credential: new StaticTokenCredential('t'),
    namespace: 'n',
  });
  const type = { apiVersion: 'v1', kind: 'Secret' };
  const list = await client.list(type, { namespace: 'n', limit: 1, metadataOnly: true });
  const watched = [];
  for await (const e of client.watch(type, { namespace: 'n', metadataOnly: true })) watched.push(e.object);
  const cut = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'n' } });
  assert.deepEqual(list.items, [cut('a'), cut('b')]);
  assert.deepEqual(watched, [cut('w')]);
  const accepts = server.requests.filter((r) => r.url !== '/api/v1').map((r) => r.headers.accept);
  assert.deepEqual(accepts, [METADATA_ONLY_ACCEPT.list, METADATA_ONLY_ACCEPT.list, METADATA_ONLY_ACCEPT.watch]);
  server.requests.length = 0;
  await client.list(type, { namespace: 'n', limit: 1 });
  assert.equal(
    server.requests.filter((r) => r.url !== '/api/v1')[0]?.headers.accept,
    'application/json',
    'without the option: plain JSON',
  );
  await client.close();
});

test('toPartialObjectMetadata keeps an object already in shape and passes non-objects through for the cache to judge', () => {
  const type = { apiVersion: 'v1', kind: 'Secret' };
  const shaped = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } };
  assert.equal(toPartialObjectMetadata(shaped, type), shaped);
  assert.deepEqual(
    toPartialObjectMetadata(
      { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'x' } },
      type,
    ),
    shaped,
  );
  assert.equal(toPartialObjectMetadata(null, type), null);
  assert.equal(toPartialObjectMetadata('s', type), 's');
});
