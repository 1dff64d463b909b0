import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { computeKstatus } from '../core/kstatus-rules.js';
import type { Condition } from './conditions.js';
import { InvalidConditionError } from './errors.js';
import { setKstatusConditions } from './kstatus.js';

const clock = new FakeClock(Date.UTC(2026, 0, 1, 12));
const types = (conditions: readonly Condition[]) => conditions.map((c) => `${c.type}=${c.status}/${c.reason}`);
const object = (generation: number, conditions: Condition[], observedGeneration = generation) => ({
  metadata: { generation },
  status: { observedGeneration, conditions },
});

test('Reconciling sets Reconciling=True and Ready=False with its reason, drops Stalled, keeps other conditions', () => {
  const before = setKstatusConditions(
    [{ type: 'Provisioned', status: 'True', reason: 'Created', message: '', lastTransitionTime: 'x' }],
    { state: 'Stalled', reason: 'UnsupportedVersion', message: 'no' },
    { observedGeneration: 1, clock },
  );
  const after = setKstatusConditions(
    before,
    { state: 'Reconciling', reason: 'ReplicasNotReady', message: '0/1 replicas ready' },
    { observedGeneration: 2, clock },
  );
  assert.deepEqual(types(after), [
    'Provisioned=True/Created',
    'Ready=False/ReplicasNotReady',
    'Reconciling=True/ReplicasNotReady',
  ]);
  assert.ok(after.filter((c) => c.type !== 'Provisioned').every((c) => c.observedGeneration === 2));
  assert.equal(computeKstatus(object(2, after)).status, 'InProgress');
  assert.equal(computeKstatus(object(2, after)).rule, 'R3');
});

test('Stalled sets Stalled=True and Ready=False, drops Reconciling: kstatus reads Failed with its message', () => {
  const reconciling = setKstatusConditions(
    undefined,
    { state: 'Reconciling', reason: 'Progressing' },
    { observedGeneration: 3, clock },
  );
  const stalled = setKstatusConditions(
    reconciling,
    { state: 'Stalled', reason: 'UnsupportedVersion', message: 'postgres 9 is not supported' },
    { observedGeneration: 3, clock },
  );
  assert.deepEqual(types(stalled), ['Ready=False/UnsupportedVersion', 'Stalled=True/UnsupportedVersion']);
  assert.deepEqual(computeKstatus(object(3, stalled)), {
    status: 'Failed',
    rule: 'R4',
    reason: 'UnsupportedVersion',
    message: 'postgres 9 is not supported',
  });
});

test('Ready sets Ready=True and drops Reconciling and Stalled; Ready keeps its lastTransitionTime while True', () => {
  const first = setKstatusConditions(
    undefined,
    { state: 'Ready', reason: 'ReplicasReady' },
    { observedGeneration: 1, clock },
  );
  const later = new FakeClock(Date.UTC(2026, 0, 2));
  const again = setKstatusConditions(
    first,
    { state: 'Ready', reason: 'ReplicasReady' },
    { observedGeneration: 2, clock: later },
  );
  assert.deepEqual(types(again), ['Ready=True/ReplicasReady']);
  assert.equal(again[0]!.lastTransitionTime, first[0]!.lastTransitionTime);
  assert.equal(again[0]!.observedGeneration, 2);
  assert.equal(computeKstatus(object(2, again)).status, 'Current');
});

test('the rules in order: deleting, unobserved generation, stale conditions, Ready absent', () => {
  const ready = setKstatusConditions(undefined, { state: 'Ready', reason: 'Done' }, { observedGeneration: 1, clock });
  assert.equal(
    computeKstatus({
      metadata: { generation: 1, deletionTimestamp: 'now' },
      status: { observedGeneration: 1, conditions: ready },
    }).status,
    'Terminating',
  );
  assert.equal(computeKstatus({ metadata: { generation: 1 } }).rule, 'R2', 'no status: not observed yet');
  assert.equal(computeKstatus(object(2, ready, 1)).rule, 'R2', 'the spec changed since');
  // observedGeneration moved on but Ready still speaks for generation 1: not read (R6).
  assert.deepEqual(
    [computeKstatus(object(2, ready)).status, computeKstatus(object(2, ready)).rule],
    ['InProgress', 'R6'],
  );
  assert.equal(computeKstatus(object(1, [])).rule, 'R6');
});

test('a negative or fractional generation is refused before any condition is built', () => {
  assert.throws(
    () => setKstatusConditions([], { state: 'Ready', reason: 'Done' }, { observedGeneration: -1 }),
    InvalidConditionError,
  );
  assert.throws(
    () => setKstatusConditions([], { state: 'Stalled', reason: 'bad reason', message: 'x' }, { observedGeneration: 1 }),
    /not CamelCase/,
  );
});
