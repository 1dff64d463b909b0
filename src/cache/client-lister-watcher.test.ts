import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ListWatchClient } from '../client/contracts.js';
import { clientListerWatcher, clientListerWatcherFactory } from './client-lister-watcher.js';

function recordingClient() {
  const calls: { method: string; type: unknown; opts: unknown }[] = [];
  const client = {
    listPage: (type: unknown, opts: unknown) => {
      calls.push({ method: 'listPage', type, opts });
      return Promise.resolve({ items: [], resourceVersion: '9' });
    },
    watch: (type: unknown, opts: unknown) => {
      calls.push({ method: 'watch', type, opts });
      return (async function* () {})();
    },
  } as unknown as ListWatchClient;
  return { client, calls };
}

test('the client adapter scopes list and watch to the spec namespace and selectors, passing the watcher options through', async () => {
  const { client, calls } = recordingClient();
  const lw = clientListerWatcher(client, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: 'prod',
    labelSelector: 'app=db',
    fieldSelector: 'metadata.name=x',
  });
  const signal = new AbortController().signal;
  await lw.list({ limit: 500, resourceVersion: '0', signal });
  for await (const _ of lw.watch({ resourceVersion: '9', allowWatchBookmarks: true, timeoutSeconds: 300, signal }))
    break;
  assert.deepEqual(calls, [
    {
      method: 'listPage',
      type: { apiVersion: 'apps/v1', kind: 'Deployment' },
      opts: {
        namespace: 'prod',
        labelSelector: 'app=db',
        fieldSelector: 'metadata.name=x',
        limit: 500,
        resourceVersion: '0',
        signal,
      },
    },
    {
      method: 'watch',
      type: { apiVersion: 'apps/v1', kind: 'Deployment' },
      opts: {
        namespace: 'prod',
        labelSelector: 'app=db',
        fieldSelector: 'metadata.name=x',
        resourceVersion: '9',
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
        signal,
      },
    },
  ]);
});

test('a cluster-wide spec sends no namespace or selectors', async () => {
  const { client, calls } = recordingClient();
  await clientListerWatcherFactory(client)({ apiVersion: 'v1', kind: 'Node' }).list({ limit: 1 });
  assert.deepEqual(calls[0]?.opts, { limit: 1 });
});

test('a metadata-only spec asks the client for PartialObjectMetadata and caches no data even from a client that sends whole objects', async () => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'n', labels: { a: 'b' } },
    data: { password: 'aHVudGVyMg==' },
  };
  const calls: { method: string; opts: unknown }[] = [];
  const client = {
    listPage: (_type: unknown, opts: unknown) => {
      calls.push({ method: 'listPage', opts });
      return Promise.resolve({ items: [secret], resourceVersion: '9' });
    },
    watch: (_type: unknown, opts: unknown) => {
      calls.push({ method: 'watch', opts });
      return (async function* () {
        yield { type: 'MODIFIED', object: secret };
        yield { type: 'BOOKMARK', object: { metadata: { resourceVersion: '10' } } };
      })();
    },
  } as unknown as ListWatchClient;
  const lw = clientListerWatcher(client, { apiVersion: 'v1', kind: 'Secret', metadataOnly: true });
  const page = await lw.list({ limit: 5 });
  const events = [];
  for await (const e of lw.watch({ resourceVersion: '9' })) events.push(e);
  assert.deepEqual(
    calls.map((c) => (c.opts as { metadataOnly?: boolean }).metadataOnly),
    [true, true],
  );
  const expected = { apiVersion: 'v1', kind: 'Secret', metadata: secret.metadata };
  assert.deepEqual(page.items, [expected]);
  assert.deepEqual(events, [
    { type: 'MODIFIED', object: expected },
    { type: 'BOOKMARK', object: { metadata: { resourceVersion: '10' } } },
  ]);
});
