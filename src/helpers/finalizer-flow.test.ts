import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Result } from '../controller/result.js';
import { requeueAfter } from '../controller/result.js';
import { handleFinalizer } from './finalizer-flow.js';
import type { ObjectLike } from './object-like.js';
import { MemoryClient } from './memory-client.test-support.js';

const FIN = 'example.com/backup';
const widget = (meta: Record<string, unknown> = {}): ObjectLike & { spec: { size: number } } => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns', ...meta },
  spec: { size: 1 },
});

test('a live object gets our finalizer and the reconcile continues with the written object', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget());
  let cleaned = 0;
  const step = await handleFinalizer(mem.client, obj, { name: FIN, cleanup: async () => void cleaned++ });
  assert.equal(step.kind, 'continue');
  assert.deepEqual(step.kind === 'continue' && step.object.metadata?.finalizers, [FIN]);
  assert.equal(cleaned, 0);
});

test('a live object that already has our finalizer costs no write', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget({ finalizers: [FIN] }));
  const step = await handleFinalizer(mem.client, obj, { name: FIN, cleanup: async () => {} });
  assert.equal(step.kind, 'continue');
  assert.equal(mem.calls.length, 0);
});

test('a deleting object runs cleanup, then loses only our finalizer', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget({ finalizers: ['other.io/keep', FIN], deletionTimestamp: '2026-01-01T00:00:00Z' }));
  const seen: unknown[] = [];
  const step = await handleFinalizer(mem.client, obj, { name: FIN, cleanup: async (o) => void seen.push(o) });
  assert.equal(seen.length, 1);
  assert.deepEqual(step, { kind: 'stop', reason: 'finalized', result: { kind: 'done' }, object: mem.peek('Widget', 'ns', 'w') });
  assert.deepEqual(mem.peek('Widget', 'ns', 'w')?.metadata?.finalizers, ['other.io/keep']);
});

test('when cleanup throws, the finalizer stays and the error reaches the reconciler', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget({ finalizers: [FIN], deletionTimestamp: '2026-01-01T00:00:00Z' }));
  await assert.rejects(handleFinalizer(mem.client, obj, { name: FIN, cleanup: async () => Promise.reject(new Error('backup failed')) }), /backup failed/);
  assert.deepEqual(mem.peek('Widget', 'ns', 'w')?.metadata?.finalizers, [FIN]);
  assert.equal(mem.writes().length, 0);
});

test('when cleanup asks for a requeue, the finalizer stays and the requeue is returned', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget({ finalizers: [FIN], deletionTimestamp: '2026-01-01T00:00:00Z' }));
  const step = await handleFinalizer(mem.client, obj, { name: FIN, cleanup: async () => requeueAfter(5_000) });
  assert.equal(step.kind, 'stop');
  if (step.kind === 'stop') {
    assert.equal(step.reason, 'cleanupPending');
    // The helper's outcome is the controller's Result, structurally.
    const r: Result = step.result;
    assert.deepEqual(r, { kind: 'requeueAfter', requeueAfterMs: 5_000 });
  }
  assert.equal(mem.writes().length, 0);
});

test('a deleting object without our finalizer is left alone (no cleanup, no new finalizer)', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget({ finalizers: ['other.io/x'], deletionTimestamp: '2026-01-01T00:00:00Z' }));
  let cleaned = 0;
  const step = await handleFinalizer(mem.client, obj, { name: FIN, cleanup: async () => void cleaned++ });
  assert.equal(step.kind === 'stop' && step.reason, 'notOurs');
  assert.equal(cleaned, 0);
  assert.equal(mem.calls.length, 0);
});

test('removing the last finalizer of a deleting object lets it go', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget({ finalizers: [FIN], deletionTimestamp: '2026-01-01T00:00:00Z' }));
  const step = await handleFinalizer(mem.client, obj, { name: FIN, cleanup: async () => {} });
  assert.equal(step.kind === 'stop' && step.reason, 'finalized');
  assert.equal(mem.peek('Widget', 'ns', 'w'), undefined);
});
