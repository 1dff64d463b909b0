import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isConflict, isNotFound } from '../client/api-error.js';
import type { GetOptions } from '../client/client-options.js';
import type { Getter } from '../client/contracts.js';
import type { Kind } from '../client/kind.js';
import { FakeClock } from '../core/fake-clock.js';
import { conflictFor, everyNth, FakeClient, isStatusWrite } from '../testing/fake-client/index.js';
import { getCondition, setCondition, type ConditionInput } from './conditions.js';
import { gizmo, GIZMO, GIZMO_CRD, type Gizmo } from './testing/gizmo.js';
import { writeStatus, type WriteStatusResult } from './write-status.js';

/** Runs `p` to completion, advancing the fake clock whenever it waits (the conflict backoff). */
async function drive<T>(clock: FakeClock, p: Promise<T>): Promise<T> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) await clock.advance(clock.nextTimerInMs() ?? 0);
  return p;
}

async function setup(): Promise<{ fake: FakeClient; clock: FakeClock; obj: Gizmo }> {
  const clock = new FakeClock();
  const fake = new FakeClient({ crds: [GIZMO_CRD], clock });
  const obj = await fake.create(gizmo('ns', 'g'));
  fake.clearRequests();
  return { fake, clock, obj };
}

/** A compute function that merges one condition into the latest status, as a reconciler does. */
function withCondition(condition: ConditionInput, generation: number | undefined) {
  return (latest: Gizmo): NonNullable<Gizmo['status']> => ({
    ...latest.status,
    message: 'computed',
    conditions: setCondition(latest.status?.conditions ?? [], { ...condition, observedGeneration: generation }),
  });
}

const READY: ConditionInput = { type: 'Ready', status: 'True', reason: 'Done', message: 'all good' };

const requestsOf = (fake: FakeClient) =>
  fake.requests.map((r) => `${r.verb}${r.subresource ? '/' + r.subresource : ''}`);

test('writes the computed status with the generation read, and nothing when it is already so', async () => {
  const { fake, clock, obj } = await setup();
  const first = await drive(clock, writeStatus(fake, obj, withCondition(READY, 1), { clock }));
  assert.equal(first.outcome, 'written');
  assert.equal(first.object.status?.observedGeneration, 1);
  assert.equal(first.object.status?.message, 'computed');
  assert.deepEqual(requestsOf(fake), ['patch/status']);

  fake.clearRequests();
  const again = await drive(clock, writeStatus(fake, first.object, withCondition(READY, 1), { clock }));
  assert.equal(again.outcome, 'unchanged');
  assert.equal(again.object, first.object);
  assert.deepEqual(fake.requests, [], 'a no-op reconcile costs no request');
});

test("a 409 re-reads, recomputes from the latest status (another writer's condition kept) and writes again", async () => {
  const { fake, clock, obj } = await setup();
  // Another writer sets its condition after our read: our resourceVersion is stale now.
  const other: ConditionInput = { type: 'Other', status: 'True', reason: 'Theirs', message: 'set by someone else' };
  await fake.patchStatus<Gizmo>(GIZMO, 'g', { status: { conditions: setCondition([], other) } }, { namespace: 'ns' });
  fake.clearRequests();

  const result = await drive(clock, writeStatus(fake, obj, withCondition(READY, 1), { clock }));
  assert.equal(result.outcome, 'written');
  assert.deepEqual(requestsOf(fake), ['patch/status', 'get', 'patch/status']);
  const sentVersions = fake.requests
    .filter((r) => r.verb === 'patch')
    .map((r) => (r.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
  assert.equal(sentVersions[0], obj.metadata.resourceVersion, 'the first write carried the stale resourceVersion');
  assert.notEqual(sentVersions[1], obj.metadata.resourceVersion, 'the second the one re-read');
  assert.equal(getCondition(result.object.status?.conditions, 'Other')?.reason, 'Theirs');
  assert.equal(getCondition(result.object.status?.conditions, 'Ready')?.reason, 'Done');
  assert.equal(result.object.status?.observedGeneration, 1);
});

test('the simulation #880 pattern: a stale read of generation 1 is refused over a status that observed generation 2', async () => {
  const { fake, clock, obj: staleRead } = await setup();
  // Meanwhile the spec changed and a newer reconcile reported on generation 2.
  const changed = await fake.patch<Gizmo>(GIZMO, 'g', { spec: { size: 2 } }, { type: 'merge', namespace: 'ns' });
  assert.equal(changed.metadata.generation, 2);
  const newer = await fake.patchStatus<Gizmo>(
    GIZMO,
    'g',
    { status: { observedGeneration: 2, message: 'for generation 2' } },
    { namespace: 'ns' },
  );
  fake.clearRequests();

  const result = await drive(clock, writeStatus(fake, staleRead, withCondition(READY, 1), { clock }));
  assert.deepEqual(
    { ...result, object: undefined },
    { outcome: 'superseded', object: undefined, generation: 1, observedGeneration: 2 },
  );
  assert.deepEqual(requestsOf(fake), ['patch/status', 'get'], 'the 409, the re-read, and no second write');
  const stored = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.equal(stored.metadata.resourceVersion, newer.metadata.resourceVersion);
  assert.deepEqual(stored.status, { observedGeneration: 2, message: 'for generation 2' });
});

test('a condition that observed a newer generation is enough to refuse (a writer that left status.observedGeneration alone)', async () => {
  const { fake, clock, obj } = await setup();
  await fake.patch<Gizmo>(GIZMO, 'g', { spec: { size: 2 } }, { type: 'merge', namespace: 'ns' });
  await fake.patchStatus<Gizmo>(
    GIZMO,
    'g',
    { status: { conditions: setCondition([], { ...READY, observedGeneration: 2 }) } },
    { namespace: 'ns' },
  );
  const result = await drive(clock, writeStatus(fake, obj, withCondition(READY, 1), { clock }));
  assert.equal(result.outcome, 'superseded');
});

test('a status still for an older generation is not newer: a reconcile of the same generation writes over it', async () => {
  const { fake, clock } = await setup();
  await fake.patchStatus<Gizmo>(GIZMO, 'g', { status: { observedGeneration: 1, message: 'old' } }, { namespace: 'ns' });
  // The spec changed (generation 2) and nobody reported on it yet; this reconcile read generation 2.
  const gen2 = await fake.patch<Gizmo>(GIZMO, 'g', { spec: { size: 2 } }, { type: 'merge', namespace: 'ns' });
  const result = await drive(clock, writeStatus(fake, gen2, withCondition(READY, 2), { clock }));
  assert.equal(result.outcome, 'written');
  assert.equal(result.object.status?.observedGeneration, 2);
});

test('the re-read goes through `reader` when given (an uncached reader sees the latest at once)', async () => {
  const { fake, clock, obj } = await setup();
  await fake.patchStatus<Gizmo>(GIZMO, 'g', { status: { message: 'theirs' } }, { namespace: 'ns' });
  const reads: string[] = [];
  const reader: Getter = {
    get: <T>(type: Kind<T>, name: string, opts?: GetOptions) => {
      reads.push(name);
      return fake.get(type, name, opts);
    },
  };
  const result = await drive(clock, writeStatus(fake, obj, withCondition(READY, 1), { clock, reader }));
  assert.equal(result.outcome, 'written');
  assert.deepEqual(reads, ['g']);
  assert.equal(fake.requests.filter((r) => r.verb === 'get').length, 1, "the one get is the reader's");
});

test('conflicts that outlast the attempts end in the last 409; waits run on the clock given', async () => {
  const { fake, clock, obj } = await setup();
  fake.intercept(everyNth(1, isStatusWrite, conflictFor));
  const outcome: Promise<WriteStatusResult<Gizmo>> = writeStatus(fake, obj, withCondition(READY, 1), {
    clock,
    backoff: { maxAttempts: 3, initialMs: 1000, jitter: 0 },
  });
  const start = clock.monotonicNow();
  await assert.rejects(drive(clock, outcome), (err) => isConflict(err));
  assert.equal(clock.monotonicNow() - start, 2000, 'two waits of 1 s on the fake clock');
  assert.deepEqual(requestsOf(fake), ['patch/status', 'get', 'patch/status', 'get', 'patch/status']);
});

test('any other error is thrown at once: the object deleted between the 409 and the re-read', async () => {
  const { fake, clock, obj } = await setup();
  await fake.patchStatus<Gizmo>(GIZMO, 'g', { status: { message: 'theirs' } }, { namespace: 'ns' });
  await fake.delete(GIZMO, 'g', { namespace: 'ns' });
  await assert.rejects(drive(clock, writeStatus(fake, obj, withCondition(READY, 1), { clock })), (err) =>
    isNotFound(err),
  );
});
