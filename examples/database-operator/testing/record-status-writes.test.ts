import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isConflict, patchStatus } from 'operator-runtime';
import { FakeClient } from 'operator-runtime/testing/fake-client';
import { readManifests } from 'operator-runtime/testing';
import { DATABASE, type Database } from '../src/database.js';
import { recordStatusWrites, type StatusWrite } from './record-status-writes.js';

test('a Database status write that lands is recorded with the resourceVersion it was conditioned on and the one it produced', async () => {
  const fake = new FakeClient({ crds: await readManifests(new URL('../config/crd.yaml', import.meta.url)) });
  const writes: StatusWrite[] = [];
  const client = recordStatusWrites(fake, (w) => writes.push(w));
  const spec: Database['spec'] = { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' };
  await client.create({
    apiVersion: DATABASE.apiVersion,
    kind: DATABASE.kind,
    metadata: { name: 'a', namespace: 'ns' },
    spec,
  });
  const db = await client.get(DATABASE, 'a', { namespace: 'ns' });
  await client.patch(DATABASE, 'a', { metadata: { labels: { x: 'y' } } }, { namespace: 'ns', type: 'merge' });
  const current = await client.get(DATABASE, 'a', { namespace: 'ns' });
  const { object } = await patchStatus(client, current, { phase: 'Provisioning' });
  assert.deepEqual(writes, [
    { key: 'ns/a', read: current.metadata.resourceVersion, written: object.metadata.resourceVersion },
  ]);
  assert.notEqual(current.metadata.resourceVersion, db.metadata.resourceVersion);
  await assert.rejects(patchStatus(client, db, { phase: 'Ready' }), (err) => isConflict(err));
  assert.equal(writes.length, 1, 'a write refused with 409 is not recorded');
});
