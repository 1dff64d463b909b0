import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { setCondition, type Condition } from './conditions.js';
import { MemoryClient } from './memory-client.test-support.js';
import { desiredStatus, patchStatus, updateStatus } from './status.js';

interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string; generation?: number };
  spec: { size: number };
  status?: { observedGeneration?: number; message?: string; phase?: string; conditions?: Condition[] };
}

const widget = (status?: Widget['status']): Widget => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns', generation: 4 },
  spec: { size: 1 },
  ...(status ? { status } : {}),
});

test('patchStatus writes through /status with the generation acted on and the resourceVersion read', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget());
  const { changed, object } = await patchStatus(mem.client, obj, { message: 'ok' });
  assert.ok(changed);
  assert.deepEqual(object.status, { message: 'ok', observedGeneration: 4 });
  assert.deepEqual(mem.writes(), [
    {
      verb: 'patchStatus',
      name: 'w',
      body: { metadata: { resourceVersion: obj.metadata.resourceVersion }, status: { message: 'ok', observedGeneration: 4 } },
      options: { type: 'merge', namespace: 'ns', signal: undefined, fieldManager: undefined },
    },
  ]);
});

test('a status equal to the current one sends nothing (no empty PATCH)', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget({ observedGeneration: 4, message: 'ok' }));
  const res = await patchStatus(mem.client, obj, { message: 'ok' });
  assert.equal(res.changed, false);
  assert.equal(res.object, obj);
  const res2 = await updateStatus(mem.client, obj, { message: 'ok' });
  assert.equal(res2.changed, false);
  assert.equal(mem.calls.length, 0);
});

test('a status that only differs in observedGeneration is written (a new generation was acted on)', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget({ observedGeneration: 3, message: 'ok' }));
  const res = await patchStatus(mem.client, obj, { message: 'ok' });
  assert.ok(res.changed);
  assert.deepEqual(mem.writes()[0]!.body, { metadata: { resourceVersion: obj.metadata.resourceVersion }, status: { observedGeneration: 4 } });
});

test('observedGeneration can be given explicitly, or left out', () => {
  const obj = widget();
  assert.deepEqual(desiredStatus(obj, { message: 'x' }, { observedGeneration: 2 }), { message: 'x', observedGeneration: 2 });
  assert.deepEqual(desiredStatus(obj, { message: 'x' }, { setObservedGeneration: false }), { message: 'x' });
});

test('members missing from the desired status are removed (null in the merge patch)', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget({ observedGeneration: 4, message: 'old', phase: 'Running' }));
  await patchStatus(mem.client, obj, { phase: 'Running' });
  assert.deepEqual((mem.writes()[0]!.body as { status: unknown }).status, { message: null });
  assert.deepEqual(mem.peek('Widget', 'ns', 'w')?.status, { observedGeneration: 4, phase: 'Running' });
});

test('a status write after someone else wrote fails with 409 instead of overwriting', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget());
  mem.mutate('Widget', 'ns', 'w', (o) => (o.status = { message: 'theirs' }));
  await assert.rejects(patchStatus(mem.client, obj, { message: 'ours' }), { status: 409 });
  await assert.rejects(updateStatus(mem.client, obj, { message: 'ours' }), { status: 409 });
});

test('updateStatus PUTs the object as read with the new status', async () => {
  const mem = new MemoryClient();
  const obj = mem.seed(widget());
  const clock = new FakeClock();
  const conditions = setCondition([], { type: 'Ready', status: 'True', reason: 'Ok', observedGeneration: 4 }, { clock });
  const res = await updateStatus(mem.client, obj, { conditions });
  assert.ok(res.changed);
  const body = mem.writes()[0]!.body as Widget;
  assert.equal(body.metadata.resourceVersion, obj.metadata.resourceVersion);
  assert.deepEqual(body.status, { conditions, observedGeneration: 4 });
  assert.deepEqual(body.spec, obj.spec);
});

test('status writes need the object as read (with a resourceVersion)', async () => {
  const mem = new MemoryClient();
  await assert.rejects(patchStatus(mem.client, widget(), { message: 'x' }), /resourceVersion/);
  assert.equal(mem.calls.length, 0);
});
