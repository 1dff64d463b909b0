import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockAgent } from 'undici';
import { Registry } from 'prom-client';
import { BackupClient } from './backup-client.js';
import { BackupServiceError, describeBackupFailure } from './backup-endpoints.js';
import type { Database } from './database.js';

const ORIGIN = 'http://backup.test';
const db: Database = {
  apiVersion: 'example.com/v1',
  kind: 'Database',
  metadata: { name: 'd', namespace: 'tenant', uid: 'uid-1', generation: 1, resourceVersion: '1' },
  spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
};

function setup(metricHosts?: string[]) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const registry = new Registry();
  const client = new BackupClient({ dispatcher: agent, registry, ...(metricHosts ? { metricHosts } : {}) });
  return { agent, registry, client };
}

test('a non-2xx answer throws with its status code only: the body never reaches the error', async () => {
  const { agent, client } = setup();
  agent.get(ORIGIN).intercept({ path: '/backups', method: 'POST' }).reply(403, 'internal token: s3cr3t-body');
  const err = await client.backup(ORIGIN, db, new AbortController().signal).catch((e: unknown) => e);
  assert.ok(err instanceof BackupServiceError);
  assert.equal(err.status, 403);
  assert.doesNotMatch(`${err.message} ${describeBackupFailure(err)} ${JSON.stringify(err)}`, /s3cr3t/);
});

test('a 2xx whose body is not a backup state throws without quoting it (JSON.parse would)', async () => {
  const { agent, client } = setup();
  agent.get(ORIGIN).intercept({ path: '/backups', method: 'POST' }).reply(202, 's3cr3t-not-json');
  agent
    .get(ORIGIN)
    .intercept({ path: '/backups', method: 'POST' })
    .reply(202, { id: 's3cr3t'.repeat(100), state: 'running' });
  for (let i = 0; i < 2; i++) {
    const err = await client.backup(ORIGIN, db, new AbortController().signal).catch((e: unknown) => e);
    assert.ok(err instanceof BackupServiceError && err.malformed);
    assert.doesNotMatch(describeBackupFailure(err), /s3cr3t/);
  }
});

test('a good answer is returned', async () => {
  const { agent, client } = setup();
  agent
    .get(ORIGIN)
    .intercept({ path: '/backups', method: 'POST' })
    .reply(202, { id: 'b-1', state: 'running', extra: 'ignored' });
  assert.deepEqual(await client.backup(ORIGIN, db, new AbortController().signal), { id: 'b-1', state: 'running' });
});

test('the host label only names the configured hosts', async () => {
  const { agent, client, registry } = setup(['backup.test']);
  agent.get(ORIGIN).intercept({ path: '/backups', method: 'POST' }).reply(202, { id: 'b-1', state: 'running' });
  agent
    .get('http://elsewhere.test')
    .intercept({ path: '/backups', method: 'POST' })
    .reply(202, { id: 'b-2', state: 'running' });
  await client.backup(ORIGIN, db, new AbortController().signal);
  await client.backup('http://elsewhere.test', db, new AbortController().signal);
  const text = await registry.metrics();
  assert.match(text, /host="backup\.test"/);
  assert.match(text, /host="other"/);
  assert.doesNotMatch(text, /elsewhere/);
});
