import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/api-error.js';
import { addFinalizer, hasFinalizer, removeFinalizer, validateFinalizerName } from './finalizers.js';
import type { ObjectLike } from './object-like.js';
import { immediateClock, MemoryClient } from './memory-client.test-support.js';

const retry = { clock: immediateClock };

const W = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const widget = (finalizers?: string[]): ObjectLike & { spec: { size: number } } => ({ ...W, metadata: { name: 'w', namespace: 'ns', ...(finalizers ? { finalizers } : {}) }, spec: { size: 1 } });

test('finalizer names must be domain-qualified', () => {
  for (const bad of ['backup', '/backup', 'example/backup', 'Example.com/backup', 'example.com/', 'example.com/-x', `example.com/${'a'.repeat(64)}`]) {
    assert.throws(() => validateFinalizerName(bad), { code: 'ERR_INVALID_FINALIZER_NAME' }, bad);
  }
  for (const good of ['example.com/backup', 'db.example.com/cleanup-volume', 'a.b/C_d.e']) assert.doesNotThrow(() => validateFinalizerName(good));
});

test('addFinalizer refuses an unqualified name before any request', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget());
  await assert.rejects(addFinalizer(mem.client, obj, 'backup'), { code: 'ERR_INVALID_FINALIZER_NAME' });
  assert.equal(mem.calls.length, 0);
});

test('addFinalizer appends one string, keeps the others, and sends the resourceVersion it read', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget(['other.io/keep']));
  const out = await addFinalizer(mem.client, obj, 'example.com/backup');
  assert.deepEqual(out.metadata?.finalizers, ['other.io/keep', 'example.com/backup']);
  assert.deepEqual(mem.writes().map((c) => c.body), [{ metadata: { resourceVersion: obj.metadata?.resourceVersion, finalizers: ['other.io/keep', 'example.com/backup'] } }]);
  assert.ok(hasFinalizer(out, 'example.com/backup'));
});

test('addFinalizer on an object that already has it sends nothing', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget(['example.com/backup']));
  const out = await addFinalizer(mem.client, obj, 'example.com/backup');
  assert.equal(out, obj);
  assert.equal(mem.calls.length, 0);
});

test('a conflicting concurrent finalizer edit is not clobbered: the helper re-reads and re-applies', async () => {
  const mem = new MemoryClient();
  const stale = mem.seed(widget());
  // Another controller adds its finalizer after we read.
  mem.mutate('Widget', 'ns', 'w', (o) => (o.metadata!.finalizers = ['other.io/theirs']));
  const out = await addFinalizer(mem.client, stale, 'example.com/ours', { retry });
  assert.deepEqual(out.metadata?.finalizers, ['other.io/theirs', 'example.com/ours']);
  assert.deepEqual(mem.calls.map((c) => c.verb), ['patch', 'get', 'patch']);
});

test('removeFinalizer removes only ours', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget(['a.io/x', 'example.com/ours', 'b.io/y']));
  const out = await removeFinalizer(mem.client, obj, 'example.com/ours');
  assert.deepEqual(out?.metadata?.finalizers, ['a.io/x', 'b.io/y']);
});

test('removeFinalizer without ours present sends nothing', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget(['a.io/x']));
  await removeFinalizer(mem.client, obj, 'example.com/ours');
  assert.equal(mem.calls.length, 0);
});

test('removeFinalizer returns undefined once the object is gone', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget(['example.com/ours']));
  // Deleted by the server between our read and our write: the patch answers 404.
  mem.beforeWrite = (c) => {
    if (c.verb === 'patch') {
      mem.beforeWrite = undefined;
      throw new ApiError({ status: 404, reason: 'NotFound', message: 'gone' });
    }
  };
  assert.equal(await removeFinalizer(mem.client, obj, 'example.com/ours'), undefined);
});

test('an object without a resourceVersion is read first, so the write still has a precondition', async () => {
  const mem = new MemoryClient();
  mem.seed(widget());
  await addFinalizer(mem.client, widget(), 'example.com/ours');
  assert.deepEqual(mem.calls.map((c) => c.verb), ['get', 'patch']);
  assert.ok((mem.writes()[0]!.body as { metadata: { resourceVersion?: string } }).metadata.resourceVersion);
});
