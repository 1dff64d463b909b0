import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import {
  formatConditionTime,
  getCondition,
  isConditionFalse,
  isConditionTrue,
  removeCondition,
  setCondition,
  type Condition,
} from './conditions.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0, 345);

test('a new condition gets lastTransitionTime from the injected clock, at second precision', () => {
  const clock = new FakeClock(T0);
  const conds = setCondition(
    undefined,
    { type: 'Ready', status: 'True', reason: 'AllGood', observedGeneration: 3 },
    { clock },
  );
  assert.deepEqual(conds, [
    {
      type: 'Ready',
      status: 'True',
      observedGeneration: 3,
      lastTransitionTime: '2026-01-01T12:00:00Z',
      reason: 'AllGood',
      message: '',
    },
  ]);
});

test('lastTransitionTime stays when the status does not change, while reason, message and observedGeneration update', () => {
  const clock = new FakeClock(T0);
  const first = setCondition(
    [],
    { type: 'Ready', status: 'False', reason: 'Pending', message: 'a', observedGeneration: 1 },
    { clock },
  );
  clock.step(60_000);
  const second = setCondition(
    first,
    { type: 'Ready', status: 'False', reason: 'StillPending', message: 'b', observedGeneration: 2 },
    { clock },
  );
  assert.equal(second[0]!.lastTransitionTime, '2026-01-01T12:00:00Z');
  assert.equal(second[0]!.reason, 'StillPending');
  assert.equal(second[0]!.message, 'b');
  assert.equal(second[0]!.observedGeneration, 2);
});

test('lastTransitionTime moves when the status changes', () => {
  const clock = new FakeClock(T0);
  const first = setCondition([], { type: 'Ready', status: 'False', reason: 'Pending' }, { clock });
  clock.step(90_000);
  const second = setCondition(first, { type: 'Ready', status: 'True', reason: 'Ready' }, { clock });
  assert.equal(second[0]!.lastTransitionTime, '2026-01-01T12:01:30Z');
});

test('setting the same condition twice yields an identical list, so a status write can be skipped', () => {
  const clock = new FakeClock(T0);
  const input = { type: 'Ready', status: 'True', reason: 'AllGood', message: 'ok', observedGeneration: 4 } as const;
  const once = setCondition([], input, { clock });
  clock.step(5_000);
  assert.deepEqual(setCondition(once, input, { clock }), once);
});

test('setCondition keeps other conditions and their order, and does not modify its input', () => {
  const clock = new FakeClock(T0);
  const input: Condition[] = [
    { type: 'A', status: 'True', reason: 'X', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' },
    { type: 'B', status: 'True', reason: 'X', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' },
  ];
  const snapshot = structuredClone(input);
  const out = setCondition(input, { type: 'A', status: 'False', reason: 'Y' }, { clock });
  assert.deepEqual(
    out.map((c) => c.type),
    ['A', 'B'],
  );
  assert.deepEqual(out[1], input[1]);
  assert.deepEqual(input, snapshot);
});

test('getCondition, isConditionTrue, isConditionFalse and removeCondition', () => {
  const clock = new FakeClock(T0);
  let conds = setCondition([], { type: 'Ready', status: 'True', reason: 'Ok' }, { clock });
  conds = setCondition(conds, { type: 'Degraded', status: 'False', reason: 'Ok' }, { clock });
  assert.equal(getCondition(conds, 'Ready')?.status, 'True');
  assert.equal(getCondition(conds, 'Missing'), undefined);
  assert.ok(isConditionTrue(conds, 'Ready'));
  assert.ok(!isConditionTrue(conds, 'Degraded'));
  assert.ok(isConditionFalse(conds, 'Degraded'));
  assert.ok(!isConditionTrue(undefined, 'Ready'));
  assert.deepEqual(
    removeCondition(conds, 'Ready').map((c) => c.type),
    ['Degraded'],
  );
  assert.equal(removeCondition(conds, 'Nope').length, 2);
});

test('a reason that is not CamelCase is refused with a typed error', () => {
  for (const reason of ['', 'not camel', 'lowercaseStart', 'Has-Dash', '9Lives', 'Trailing:']) {
    assert.throws(
      () => setCondition([], { type: 'Ready', status: 'True', reason }),
      { code: 'ERR_INVALID_CONDITION', field: 'reason' },
      reason,
    );
  }
  assert.doesNotThrow(() => setCondition([], { type: 'Ready', status: 'True', reason: 'MinimumReplicasAvailable' }));
});

test('an invalid type, status or observedGeneration is refused', () => {
  assert.throws(() => setCondition([], { type: 'has space', status: 'True', reason: 'Ok' }), { field: 'type' });
  assert.throws(() => setCondition([], { type: 'Ready', status: 'true' as 'True', reason: 'Ok' }), { field: 'status' });
  assert.throws(() => setCondition([], { type: 'Ready', status: 'True', reason: 'Ok', observedGeneration: -1 }), {
    field: 'observedGeneration',
  });
  assert.doesNotThrow(() => setCondition([], { type: 'example.com/Synced', status: 'Unknown', reason: 'Ok' }));
});

test('condition times are RFC 3339 without fractions, as metav1.Time', () => {
  assert.equal(formatConditionTime(Date.UTC(2026, 4, 6, 7, 8, 9, 999)), '2026-05-06T07:08:09Z');
});
