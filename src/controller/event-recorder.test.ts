import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/api-error.js';
import { NoKindMatchError } from '../client/discovery.js';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { EventRecorder } from './event-recorder.js';

function recordingClient() {
  const calls: { verb: 'create' | 'patch'; name: string; body: Record<string, unknown> }[] = [];
  let failPatchWith: unknown;
  return {
    calls,
    failNextPatch(err: unknown) {
      failPatchWith = err;
    },
    client: {
      create: async (obj: KubeObject) => {
        calls.push({ verb: 'create', name: obj.metadata!.name!, body: obj as Record<string, unknown> });
        return obj;
      },
      patch: async (_type: unknown, name: string, body: unknown) => {
        if (failPatchWith) {
          const err = failPatchWith;
          failPatchWith = undefined;
          throw err;
        }
        calls.push({ verb: 'patch', name, body: body as Record<string, unknown> });
        return body;
      },
    } as never,
  };
}

const db: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Database',
  metadata: { name: 'db1', namespace: 'ns', uid: 'u1' },
};

test('a repeated event aggregates into one Event whose count rises', async () => {
  const rec = recordingClient();
  const recorder = new EventRecorder({
    client: rec.client,
    component: 'db-operator',
    host: 'h',
    clock: new FakeClock(0),
  });
  for (let i = 0; i < 3; i++) recorder.event(db, 'Warning', 'BackupFailed', 'backup service unavailable');
  await recorder.flush();
  assert.deepEqual(
    rec.calls.map((c) => c.verb),
    ['create', 'patch', 'patch'],
  );
  assert.equal(rec.calls[0]!.body.count, 1);
  assert.deepEqual(rec.calls[0]!.body.involvedObject, {
    apiVersion: 'example.com/v1',
    kind: 'Database',
    name: 'db1',
    namespace: 'ns',
    uid: 'u1',
  });
  assert.equal(rec.calls[2]!.body.count, 3);
  assert.equal(rec.calls[2]!.name, rec.calls[0]!.name);
});

test('a different message is a different Event', async () => {
  const rec = recordingClient();
  const recorder = new EventRecorder({ client: rec.client, component: 'c', clock: new FakeClock(0) });
  recorder.event(db, 'Normal', 'Created', 'secret created');
  recorder.event(db, 'Normal', 'Created', 'service created');
  await recorder.flush();
  assert.deepEqual(
    rec.calls.map((c) => c.verb),
    ['create', 'create'],
  );
  assert.notEqual(rec.calls[0]!.name, rec.calls[1]!.name);
});

test('a hot loop is rate-limited per object: burst, then one event per refill period', async () => {
  const clock = new FakeClock(0);
  const rec = recordingClient();
  const recorder = new EventRecorder({ client: rec.client, component: 'c', clock, burst: 5, refillMs: 60_000 });
  for (let i = 0; i < 100; i++) recorder.event(db, 'Warning', 'Loop', `attempt ${i}`);
  await recorder.flush();
  assert.equal(rec.calls.length, 5);
  assert.equal(recorder.dropped, 95);
  clock.step(60_000);
  recorder.event(db, 'Warning', 'Loop', 'after refill');
  recorder.event(db, 'Warning', 'Loop', 'too soon');
  await recorder.flush();
  assert.equal(rec.calls.length, 6);
  // Another object has its own bucket.
  recorder.event({ ...db, metadata: { ...db.metadata, name: 'db2' } }, 'Normal', 'Other', 'x');
  await recorder.flush();
  assert.equal(rec.calls.length, 7);
});

test('an aggregated Event that expired (404 on patch) is created anew', async () => {
  const rec = recordingClient();
  const recorder = new EventRecorder({ client: rec.client, component: 'c', clock: new FakeClock(0) });
  recorder.event(db, 'Normal', 'Synced', 'ok');
  await recorder.flush();
  rec.failNextPatch(new ApiError({ status: 404, reason: 'NotFound', message: 'gone' }));
  recorder.event(db, 'Normal', 'Synced', 'ok');
  await recorder.flush();
  assert.deepEqual(
    rec.calls.map((c) => [c.verb, c.body.count]),
    [
      ['create', 1],
      ['create', 1],
    ],
  );
});

test('a failing write is counted and never thrown at the caller', async () => {
  const recorder = new EventRecorder({
    client: {
      create: async () => {
        throw new Error('api down');
      },
      patch: async () => ({}),
    } as never,
    component: 'c',
    clock: new FakeClock(0),
  });
  assert.doesNotThrow(() => recorder.event(db, 'Normal', 'X', 'y'));
  await recorder.flush();
  assert.equal(recorder.dropped, 1);
});

test('event() about an object without a name, kind or apiVersion never throws: it is dropped and counted', async () => {
  const rec = recordingClient();
  const recorder = new EventRecorder({ client: rec.client, component: 'c', clock: new FakeClock(0) });
  const unusable = [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns' } },
    { apiVersion: 'v1', kind: 'ConfigMap' },
    { kind: 'ConfigMap', metadata: { name: 'x' } },
    { apiVersion: 'v1', metadata: { name: 'x' } },
    undefined,
    null,
  ] as unknown as KubeObject[];
  for (const obj of unusable) assert.doesNotThrow(() => recorder.event(obj, 'Normal', 'X', 'y'));
  await recorder.flush();
  assert.equal(rec.calls.length, 0);
  assert.equal(recorder.dropped, unusable.length);
  // The recorder still works afterwards.
  recorder.event(db, 'Normal', 'X', 'y');
  await recorder.flush();
  assert.equal(rec.calls.length, 1);
});

test('event() never throws even when its clock does', () => {
  const clock = new FakeClock(0);
  clock.now = () => {
    throw new Error('clock broken');
  };
  const recorder = new EventRecorder({ client: recordingClient().client, component: 'c', clock });
  assert.doesNotThrow(() => recorder.event(db, 'Normal', 'X', 'y'));
  assert.equal(recorder.dropped, 1);
});

/** A recording client whose REST mapper serves events.k8s.io/v1 or not. */
function discoveringClient(servesEventsV1: boolean, createFails?: unknown) {
  const calls: { verb: 'create' | 'patch'; apiVersion: string; name: string; body: Record<string, unknown> }[] = [];
  let failCreate = createFails;
  const client = {
    mapper: {
      mapping: async (type: { apiVersion: string; kind: string }) => {
        if (type.apiVersion === 'events.k8s.io/v1' && !servesEventsV1)
          throw new NoKindMatchError(type.apiVersion, type.kind, 'the server does not serve this group-version');
        return {} as never;
      },
      cached: () => undefined,
    },
    create: async (obj: KubeObject) => {
      if (failCreate && obj.apiVersion === 'events.k8s.io/v1') {
        const err = failCreate;
        failCreate = undefined;
        throw err;
      }
      calls.push({ verb: 'create', apiVersion: obj.apiVersion!, name: obj.metadata!.name!, body: obj as never });
      return obj;
    },
    patch: async (type: { apiVersion: string }, name: string, body: unknown) => {
      calls.push({ verb: 'patch', apiVersion: type.apiVersion, name, body: body as never });
      return body;
    },
  };
  return { calls, client: client as never };
}

test('where the server serves events.k8s.io/v1, repeats become one Event with series.count and lastObservedTime', async () => {
  const clock = new FakeClock(Date.parse('2026-12-05T01:00:00.123Z'));
  const { calls, client } = discoveringClient(true);
  const recorder = new EventRecorder({ client, component: 'db-operator', host: 'h', clock });
  recorder.event(db, 'Warning', 'BackupFailed', 'backup service unavailable');
  clock.step(1000);
  recorder.event(db, 'Warning', 'BackupFailed', 'backup service unavailable');
  recorder.event(db, 'Warning', 'BackupFailed', 'backup service unavailable');
  await recorder.flush();
  assert.deepEqual(
    calls.map((c) => [c.verb, c.apiVersion]),
    [
      ['create', 'events.k8s.io/v1'],
      ['patch', 'events.k8s.io/v1'],
      ['patch', 'events.k8s.io/v1'],
    ],
  );
  const created = calls[0]!.body;
  assert.deepEqual(
    [
      created.type,
      created.reason,
      created.action,
      created.note,
      created.reportingController,
      created.reportingInstance,
    ],
    ['Warning', 'BackupFailed', 'BackupFailed', 'backup service unavailable', 'db-operator', 'h'],
  );
  assert.equal(created.eventTime, '2026-12-05T01:00:00.123000Z');
  assert.equal(created.series, undefined, 'a first occurrence has no series (the server wants count >= 2)');
  assert.deepEqual((created.regarding as Record<string, unknown>).name, 'db1');
  assert.deepEqual(calls[2]!.body, { series: { count: 3, lastObservedTime: '2026-12-05T01:00:01.123000Z' } });
  assert.equal(calls[2]!.name, calls[0]!.name);
});

test('where events.k8s.io/v1 is absent, the recorder falls back to core/v1 (count, lastTimestamp)', async () => {
  const { calls, client } = discoveringClient(false);
  const recorder = new EventRecorder({ client, component: 'c', clock: new FakeClock(0) });
  recorder.event(db, 'Normal', 'Synced', 'ok');
  recorder.event(db, 'Normal', 'Synced', 'ok');
  await recorder.flush();
  assert.deepEqual(
    calls.map((c) => [c.verb, c.apiVersion]),
    [
      ['create', 'v1'],
      ['patch', 'v1'],
    ],
  );
  assert.equal(calls[1]!.body.count, 2);
});

test('events.k8s.io/v1 refused (403: RBAC for core Events only) falls back to core/v1 from then on, nothing dropped', async () => {
  const { calls, client } = discoveringClient(true, new ApiError({ status: 403, message: 'forbidden' }));
  const recorder = new EventRecorder({ client, component: 'c', clock: new FakeClock(0) });
  recorder.event(db, 'Normal', 'A', 'a');
  recorder.event(db, 'Normal', 'B', 'b');
  await recorder.flush();
  assert.deepEqual(
    calls.map((c) => [c.verb, c.apiVersion]),
    [
      ['create', 'v1'],
      ['create', 'v1'],
    ],
  );
  assert.equal(recorder.dropped, 0);
});

test('an events.k8s.io/v1 note is cut to the 1 KiB the API allows, on a character boundary', async () => {
  const { calls, client } = discoveringClient(true);
  const recorder = new EventRecorder({ client, component: 'c', api: 'events.k8s.io/v1', clock: new FakeClock(0) });
  recorder.event(db, 'Warning', 'Long', 'é'.repeat(2000));
  await recorder.flush();
  const note = calls[0]!.body.note as string;
  assert.ok(Buffer.byteLength(note) <= 1024 && note.endsWith('...') && !note.includes('\uFFFD'));
  assert.throws(() => new EventRecorder({ client, component: 'c', api: 'v2' as never }), /invalid option api/);
});
