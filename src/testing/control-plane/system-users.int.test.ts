import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureSystemUser } from './system-users.js';

describe('ensureSystemUser', { skip: process.getuid?.() !== 0 && 'needs root' }, () => {
  test('is idempotent, also when called concurrently, and returns a system uid', async () => {
    const [a, b] = await Promise.all([ensureSystemUser('orchaos-etcd1'), ensureSystemUser('orchaos-etcd1')]);
    assert.deepEqual(a, b);
    assert.ok(a.uid > 0 && a.uid < 1000, `uid ${a.uid} is in the system range`);
    assert.deepEqual(await ensureSystemUser('orchaos-etcd1'), a);
  });
});
