import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpRequestError } from 'operator-runtime/helpers';
import { BackupServiceError, describeBackupFailure, resolveBackupEndpoint } from './backup-endpoints.js';
import type { Database } from './database.js';

const policy = { defaultEndpoint: 'http://backup.ops.svc:8080', allowedEndpoints: ['https://vault.example.com'] };
const db = (endpoint?: string): Database => ({
  apiVersion: 'example.com/v1',
  kind: 'Database',
  metadata: { name: 'd', namespace: 'tenant', uid: 'u', generation: 1, resourceVersion: '1' },
  spec: {
    engine: 'postgres',
    version: '16',
    replicas: 1,
    storage: '1Gi',
    ...(endpoint !== undefined ? { backup: { endpoint } } : {}),
  },
});

test("a Database without an endpoint uses the operator's own backup service", () => {
  assert.deepEqual(resolveBackupEndpoint(db(), policy), { allowed: true, endpoint: 'http://backup.ops.svc:8080' });
});

test('an endpoint on the allow-list (same origin, any path) is allowed', () => {
  assert.deepEqual(resolveBackupEndpoint(db('https://vault.example.com/some/path'), policy), {
    allowed: true,
    endpoint: 'https://vault.example.com/some/path',
  });
  assert.equal(resolveBackupEndpoint(db('http://backup.ops.svc:8080'), policy).allowed, true);
});

test('server-side request forgery: any endpoint outside the allow-list is refused, without echoing it', () => {
  for (const hostile of [
    'http://169.254.169.254/latest/meta-data',
    'http://kubernetes.default.svc',
    'http://backup.ops.svc:8081', // another port is another service
    'https://vault.example.com.evil.test',
    'http://vault.example.com', // another scheme
    'https://user:hunter2@vault.example.com', // credentials sent on the tenant's behalf
    'not a url',
  ]) {
    const r = resolveBackupEndpoint(db(hostile), policy);
    assert.equal(r.allowed, false, hostile);
    assert.ok(!r.allowed && !r.message.includes(hostile) && !r.message.includes('hunter2'));
  }
});

test("a failure is described for tenants by codes only, never the service's words", () => {
  assert.equal(describeBackupFailure(new BackupServiceError(500)), 'backup service answered HTTP 500');
  const http = new HttpRequestError({
    reason: 'retriesExhausted',
    method: 'POST',
    url: 'http://backup.ops.svc:8080/backups',
    attempts: [
      { attempt: 1, status: 503, durationMs: 1 },
      { attempt: 2, error: 'ECONNRESET', durationMs: 1 },
    ],
  });
  const described = describeBackupFailure(http);
  assert.equal(described, 'backup request failed (retriesExhausted) after 2 attempt(s), last: ECONNRESET');
  assert.doesNotMatch(described, /backup\.ops\.svc/, 'no internal URL');
  assert.equal(describeBackupFailure(new Error('secret internal detail')), 'backup request failed');
});
