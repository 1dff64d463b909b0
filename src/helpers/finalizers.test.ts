import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ignoreNotFound, isInvalid } from '../client/api-error.js';
import { conflictFor, everyNth, FakeClient, isWrite } from '../testing/fake-client/index.js';
import { addFinalizer, hasFinalizer, removeFinalizer, validateFinalizerName } from './finalizers.js';
import { gizmo, GIZMO, GIZMO_CRD, type Gizmo } from './testing/gizmo.js';
import { immediateClock } from './testing/immediate-clock.js';

const retry = { clock: immediateClock };

async function setup(finalizers?: string[]): Promise<{ fake: FakeClient; obj: Gizmo }> {
  const fake = new FakeClient({ crds: [GIZMO_CRD] });
  const obj = await fake.create<Gizmo>({
    ...gizmo('ns', 'g'),
    metadata: { name: 'g', namespace: 'ns', ...(finalizers ? { finalizers } : {}) },
  });
  fake.clearRequests();
  return { fake, obj };
}

test('finalizer names must be domain-qualified', () => {
  for (const bad of [
    'backup',
    '/backup',
    'example/backup',
    'Example.com/backup',
    'example.com/',
    'example.com/-x',
    `example.com/${'a'.repeat(64)}`,
  ]) {
    assert.throws(() => validateFinalizerName(bad), { code: 'ERR_INVALID_FINALIZER_NAME' }, bad);
  }
  for (const good of ['example.com/backup', 'db.example.com/cleanup-volume', 'a.b/C_d.e'])
    assert.doesNotThrow(() => validateFinalizerName(good));
});

test('addFinalizer refuses an unqualified name before any request', async () => {
  const { fake, obj } = await setup();
  await assert.rejects(addFinalizer(fake, obj, 'backup'), { code: 'ERR_INVALID_FINALIZER_NAME' });
  assert.equal(fake.requests.length, 0);
});

test('addFinalizer appends one string, keeps the others, and sends the resourceVersion it read', async () => {
  const { fake, obj } = await setup(['other.io/keep']);
  const out = await addFinalizer(fake, obj, 'example.com/backup');
  assert.deepEqual(out.metadata.finalizers, ['other.io/keep', 'example.com/backup']);
  assert.deepEqual(
    fake.requests.map((r) => [r.verb, r.patchType, r.body]),
    [
      [
        'patch',
        'merge',
        {
          metadata: {
            resourceVersion: obj.metadata.resourceVersion,
            finalizers: ['other.io/keep', 'example.com/backup'],
          },
        },
      ],
    ],
  );
  assert.ok(hasFinalizer(out, 'example.com/backup'));
});

test('addFinalizer on an object that already has it sends nothing', async () => {
  const { fake, obj } = await setup(['example.com/backup']);
  const out = await addFinalizer(fake, obj, 'example.com/backup');
  assert.equal(out, obj);
  assert.equal(fake.requests.length, 0);
});

test('a concurrent finalizer edit is not clobbered: the stale write conflicts, the helper re-reads and re-applies', async () => {
  const { fake, obj: stale } = await setup();
  // Another controller adds its finalizer after we read.
  await addFinalizer(fake, stale, 'other.io/theirs');
  fake.clearRequests();
  const out = await addFinalizer(fake, stale, 'example.com/ours', { retry });
  assert.deepEqual(out.metadata.finalizers, ['other.io/theirs', 'example.com/ours']);
  assert.deepEqual(
    fake.requests.map((r) => r.verb),
    ['patch', 'get', 'patch'],
  );
});

test('six writers adding different finalizers from one read all keep theirs', async () => {
  const { fake, obj } = await setup();
  const names = Array.from({ length: 6 }, (_, i) => `c${i}.example.com/f`);
  await Promise.all(
    names.map((n) => addFinalizer(fake, obj, n, { retry: { ...retry, backoff: { maxAttempts: 10 } } })),
  );
  const final = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.deepEqual([...(final.metadata.finalizers ?? [])].sort(), names);
});

test('injected conflicts on every other write are absorbed by the retry', async () => {
  const { fake, obj } = await setup();
  fake.intercept(everyNth(2, isWrite, conflictFor));
  let cur = obj;
  for (const n of ['a.io/1', 'b.io/2', 'c.io/3']) cur = await addFinalizer(fake, cur, n, { retry });
  assert.deepEqual(cur.metadata.finalizers, ['a.io/1', 'b.io/2', 'c.io/3']);
});

test('removeFinalizer removes only ours', async () => {
  const { fake, obj } = await setup(['a.io/x', 'example.com/ours', 'b.io/y']);
  const out = await removeFinalizer(fake, obj, 'example.com/ours');
  assert.deepEqual(out?.metadata.finalizers, ['a.io/x', 'b.io/y']);
});

test('removeFinalizer without ours present sends nothing', async () => {
  const { fake, obj } = await setup(['a.io/x']);
  await removeFinalizer(fake, obj, 'example.com/ours');
  assert.equal(fake.requests.length, 0);
});

test('removing the last finalizer of a deleting object lets the server delete it', async () => {
  const { fake, obj } = await setup(['example.com/ours']);
  await fake.delete(GIZMO, 'g', { namespace: 'ns' });
  const deleting = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.ok(deleting.metadata.deletionTimestamp);
  const last = await removeFinalizer(fake, deleting, 'example.com/ours');
  assert.equal(last?.metadata.finalizers, undefined);
  assert.equal(await ignoreNotFound(fake.get(GIZMO, 'g', { namespace: 'ns' })), undefined);
  // Already gone: nothing to remove.
  assert.equal(await removeFinalizer(fake, obj, 'example.com/ours', { retry }), undefined);
});

test('a deleting object takes no new finalizer (422 from the server)', async () => {
  const { fake, obj } = await setup(['a.io/x']);
  await fake.delete(GIZMO, 'g', { namespace: 'ns' });
  await assert.rejects(addFinalizer(fake, obj, 'example.com/ours', { retry }), isInvalid);
});

test('an object without a resourceVersion is read first, so the write still has a precondition', async () => {
  const { fake } = await setup();
  await addFinalizer(fake, gizmo('ns', 'g'), 'example.com/ours');
  assert.deepEqual(
    fake.requests.map((r) => r.verb),
    ['get', 'patch'],
  );
  assert.ok((fake.requests[1]!.body as { metadata: { resourceVersion?: string } }).metadata.resourceVersion);
});

test('a conflict retry that finds a namesake (another uid) leaves its finalizers alone: the object asked about is gone', async () => {
  const { fake, obj } = await setup(['example.com/backup']);
  await fake.patch(GIZMO, 'g', { metadata: { finalizers: null } }, { type: 'merge', namespace: 'ns' });
  await fake.delete(GIZMO, 'g', { namespace: 'ns' });
  const namesake = await fake.create<Gizmo>({
    ...gizmo('ns', 'g'),
    metadata: { name: 'g', namespace: 'ns', finalizers: ['example.com/backup'] },
  });
  assert.notEqual(namesake.metadata?.uid, obj.metadata?.uid);
  assert.equal(await removeFinalizer(fake, obj, 'example.com/backup', { retry }), undefined);
  assert.deepEqual(fake.peek<Gizmo>(GIZMO, 'g', 'ns')?.metadata?.finalizers, ['example.com/backup']);
  await assert.rejects(addFinalizer(fake, obj, 'example.com/other', { retry }), (err: unknown) =>
    /with uid .* is gone \(a namesake with uid/.test(String(err)),
  );
});
