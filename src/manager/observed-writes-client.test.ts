import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../client/contracts.js';
import type { ObjectWrite } from '../console/reconcile-writes.js';
import { observedWritesClient, writeDiff } from './observed-writes-client.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
const SECRET = { apiVersion: 'v1', kind: 'Secret' };

test('a write is reported as the fields it changed, against the cached object; plan mode adds dryRun', async () => {
  const before = { ...CM, metadata: { name: 'a', namespace: 'ns', resourceVersion: '1' }, data: { x: '1', y: '2' } };
  const sent: unknown[] = [];
  const inner = {
    patch: async (_t: unknown, _n: string, _p: unknown, opts: unknown) => {
      sent.push(opts);
      return { ...before, metadata: { ...before.metadata, resourceVersion: '2' }, data: { x: '1', y: '3' } };
    },
    delete: async () => {
      throw Object.assign(new Error('forbidden: token=abc123'), { code: 'ERR_API' });
    },
  } as unknown as Client;
  const writes: ObjectWrite[] = [];
  const client = observedWritesClient(inner, { dryRun: true, onWrite: (w) => writes.push(w), before: () => before });
  await client.patch(CM, 'a', { data: { y: '3' } }, { namespace: 'ns', type: 'merge' });
  assert.deepEqual(sent, [{ namespace: 'ns', type: 'merge', dryRun: true }]);
  assert.deepEqual(writes[0], {
    verb: 'patch',
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'ns',
    name: 'a',
    dryRun: true,
    diff: { data: { y: '3' } },
  });
  await assert.rejects(client.delete(CM, 'a', { namespace: 'ns' }));
  assert.equal(writes[1]!.diff, null);
  assert.match(writes[1]!.error!, /\[Redacted\]/);
  assert.ok(!writes[1]!.error!.includes('abc123'));
});

test("a Secret's data and stringData values are redacted, its keys kept; a JSON patch's values too", () => {
  const created = {
    ...SECRET,
    metadata: { name: 's', uid: 'u', resourceVersion: '1' },
    data: { password: 'c2VjcmV0' },
    stringData: { token: 't' },
  };
  assert.deepEqual(writeDiff(SECRET, 'create', undefined, created, created), {
    ...SECRET,
    metadata: { name: 's' },
    data: { password: '[Redacted]' },
    stringData: { token: '[Redacted]' },
  });
  assert.deepEqual(
    writeDiff(SECRET, 'patch', undefined, undefined, [{ op: 'replace', path: '/data/password', value: 'eA==' }]),
    [{ op: 'replace', path: '/data/password', value: '[Redacted]' }],
  );
  // A ConfigMap is not redacted.
  assert.deepEqual(writeDiff(CM, 'patch', { data: { a: '1' } }, { data: { a: '2' } }, {}), { data: { a: '2' } });
});
