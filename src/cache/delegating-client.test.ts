import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../client/client.js';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { createDelegatingClient } from './delegating-client.js';
import { InformerCache } from './informer-cache.js';
import { InformerFactory } from './informer-factory.js';
import { FakeListerWatcher } from './testing/fake-lister-watcher.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
const SECRET = { apiVersion: 'v1', kind: 'Secret' };
const cm = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', labels },
});

function setup() {
  const calls: string[] = [];
  // Every method records its name and answers something harmless.
  const server = new Proxy({} as Client, {
    get:
      (_t, method: string) =>
      (..._args: unknown[]) => {
        calls.push(method);
        if (method === 'listPages') return (async function* () {})();
        return Promise.resolve(
          method === 'list' ? { items: [], resourceVersion: 'server' } : { metadata: { name: 'from-server' } },
        );
      },
  });
  const clock = new FakeClock(0);
  const factory = new InformerFactory(() => new FakeListerWatcher([cm('a', { app: 'web' }), cm('b')]), { clock });
  const client = createDelegatingClient(server, new InformerCache(factory), { uncached: [SECRET] });
  const ac = new AbortController();
  const run = factory.start(ac.signal);
  const stop = async () => {
    ac.abort();
    await run;
  };
  return { calls, clock, client, stop };
}

test('the delegating client reads cached kinds from the cache and writes to the server', async () => {
  const s = setup();
  const got = s.client.get<KubeObject>(CM, 'a', { namespace: 'ns' });
  const listed = s.client.list<KubeObject>(CM, { namespace: 'ns', labelSelector: 'app=web' });
  await s.clock.advance(0);
  assert.equal((await got).metadata?.name, 'a');
  const l = await listed;
  assert.deepEqual(
    l.items.map((o) => o.metadata?.name),
    ['a'],
  );
  assert.notEqual(l.resourceVersion, '', 'a single informer lends its resourceVersion');
  await s.client.create(cm('c'));
  await s.client.patch(CM, 'a', {}, { namespace: 'ns', type: 'merge' });
  await s.client.delete(CM, 'a', { namespace: 'ns' });
  assert.deepEqual(s.calls, ['create', 'patch', 'delete']);
  await s.stop();
});

test('uncached kinds, subresources and explicit resourceVersions are read from the server', async () => {
  const s = setup();
  await s.client.get(SECRET, 'x', { namespace: 'ns' });
  await s.client.list(SECRET, {});
  await s.client.get(CM, 'a', { namespace: 'ns', subresource: 'status' });
  await s.client.get(CM, 'a', { namespace: 'ns', resourceVersion: '0' });
  await s.client.list(CM, { resourceVersion: '0' });
  for await (const _ of s.client.listPages(CM, {})) break;
  assert.deepEqual(s.calls, ['get', 'list', 'get', 'get', 'list', 'listPages']);
  await s.stop();
});
