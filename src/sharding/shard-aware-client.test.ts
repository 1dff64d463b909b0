import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceType } from '../client/discovery.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { shardAwareClient } from './shard-aware-client.js';

const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const SECRET = { apiVersion: 'v1', kind: 'Secret' } as const;

/** The same names in two clients with different contents, so each read tells where it was answered. */
function twoClients(): { cached: FakeClient; server: FakeClient } {
  const seed = (from: string): object[] => [
    { ...CONFIG_MAP, metadata: { name: 'c', namespace: 'default' }, data: { from } },
    { ...SECRET, metadata: { name: 's', namespace: 'default' }, stringData: { from } },
  ];
  return { cached: new FakeClient({ objects: seed('cache') }), server: new FakeClient({ objects: seed('server') }) };
}

test('reads of a sharded primary kind go to the API server; other reads and every write to the cached client', async () => {
  const { cached, server } = twoClients();
  const client = shardAwareClient(cached, server, { kinds: () => [CONFIG_MAP] });
  const cm = await client.get<{ data: { from: string } }>(CONFIG_MAP, 'c', { namespace: 'default' });
  assert.equal(cm.data.from, 'server');
  const cms = await client.list<{ data: { from: string } }>(CONFIG_MAP, { namespace: 'default' });
  assert.deepEqual(
    cms.items.map((o) => o.data.from),
    ['server'],
  );
  const secret = await client.get<{ data: { from: string } }>(SECRET, 's', { namespace: 'default' });
  assert.equal(Buffer.from(secret.data.from, 'base64').toString(), 'cache');
  await client.create({ ...CONFIG_MAP, metadata: { name: 'new', namespace: 'default' } });
  assert.equal(
    (await cached.list(CONFIG_MAP, { namespace: 'default' })).items.length,
    2,
    'the write went through the cached (delegating) client',
  );
  assert.equal((await server.list(CONFIG_MAP, { namespace: 'default' })).items.length, 1);
});

test('a kind registered as sharded after the client was built is read from the API server from then on', async () => {
  const { cached, server } = twoClients();
  const kinds: ResourceType[] = [];
  const client = shardAwareClient(cached, server, { kinds: () => kinds });
  assert.equal(
    (await client.get<{ data: { from: string } }>(CONFIG_MAP, 'c', { namespace: 'default' })).data.from,
    'cache',
  );
  kinds.push({ apiVersion: 'v1', kind: 'ConfigMap' });
  assert.equal(
    (await client.get<{ data: { from: string } }>(CONFIG_MAP, 'c', { namespace: 'default' })).data.from,
    'server',
  );
});
