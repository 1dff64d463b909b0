import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { StaticTokenCredential } from './credentials.js';
import { FakeApiServer, sendJson } from './testing/fake-api-server.js';
import { KubeClient } from './kube-client.js';
import { TransportError } from './transport.js';
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
  resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['list', 'watch'] }],
};
const configMap = (i: number) => ({
  metadata: { name: `cm-${i}`, namespace: 'n', managedFields: [{ manager: 'kubectl', operation: 'Apply' }] },
  data: { value: 'x'.repeat(1000) },
});
const client = (options: ConstructorParameters<typeof KubeClient>[1] = {}) =>
  new KubeClient(
    {
      server: server.url,
      tls: makeTlsConfig({ rejectUnauthorized: true }),
      credential: new StaticTokenCredential('t'),
      namespace: 'n',
    },
    { backoff: { maxAttempts: 1 }, ...options },
  );

/** Writes `text` in pieces of `piece` bytes, as an API server streams a large list. */
function stream(res: http.ServerResponse, text: string, piece = 4096): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += piece) res.write(bytes.subarray(at, at + piece));
  res.end();
}

function serveList(body: (req: { url: string }) => string): void {
  server.handle((req, res) => {
    if (req.url === '/api/v1') return sendJson(res, 200, DISCOVERY);
    stream(res, body(req));
  });
}

test('a list is bounded per item, not by maxResponseBytes: a 2 MB list passes a 64 KiB response limit', async () => {
  const items = Array.from({ length: 2000 }, (_, i) => configMap(i));
  serveList(() => JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '9' }, items }));
  const c = client({ maxResponseBytes: 64 * 1024 });
  const page = await c.listPage({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: 'n', resourceVersion: '0' });
  assert.equal(page.items.length, 2000);
  assert.equal(page.resourceVersion, '9');
  // Items carry apiVersion and kind (the server leaves them out of list items), as before.
  assert.deepEqual(
    { apiVersion: page.items[7]!.apiVersion, kind: page.items[7]!.kind, name: page.items[7]!.metadata?.name },
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm-7' },
  );
  await c.close();
});

test('transformItem runs on each item as it is decoded; an item it throws on is kept as decoded', async () => {
  const items = [configMap(1), configMap(2), configMap(3)];
  serveList(() => JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '9' }, items }));
  const c = client();
  const seen: string[] = [];
  const page = await c.listPage(
    { apiVersion: 'v1', kind: 'ConfigMap' },
    {
      transformItem: (item) => {
        const name = item.metadata?.name ?? '';
        seen.push(name);
        if (name === 'cm-2') throw new Error('no');
        const { managedFields: _dropped, ...metadata } = item.metadata as Record<string, unknown>;
        return { ...item, metadata } as typeof item;
      },
    },
  );
  assert.deepEqual(seen, ['cm-1', 'cm-2', 'cm-3']);
  assert.deepEqual(
    page.items.map((i) => 'managedFields' in i.metadata!),
    [false, true, false],
  );
  await c.close();
});

test('an item over maxWatchLineBytes, a list cut short and a malformed item are TransportErrors that quote none of the body', async () => {
  const secret = 'aHVudGVyMg';
  const cases: [string, RegExp][] = [
    [
      JSON.stringify({ items: [{ metadata: { name: 'big' }, data: { k: secret.repeat(1000) } }] }),
      /is not a JSON list: a list item exceeds 4096 bytes/,
    ],
    [
      `{"kind":"ConfigMapList","items":[{"metadata":{"name":"a"},"data":{"k":"${secret}"}}`,
      /ended before its closing brace/,
    ],
    [`{"items":[{"metadata":{"name":"a"},"data":{"k":${secret}}}]}`, /is not a JSON list: an item is not valid JSON/],
  ];
  for (const [body, message] of cases) {
    serveList(() => body);
    const c = client({ maxWatchLineBytes: 4096 });
    await assert.rejects(c.listPage({ apiVersion: 'v1', kind: 'ConfigMap' }), (e: unknown) => {
      assert.ok(e instanceof TransportError, String(e));
      assert.match(e.message, message);
      assert.ok(!e.message.includes(secret), e.message);
      return true;
    });
    await c.close();
  }
});
