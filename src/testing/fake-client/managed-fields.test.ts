import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyConfig, managedFieldsAfterUpdate } from './managed-fields.js';

const NOW = '2026-01-01T00:00:00Z';

test('an update takes ownership of the fields it changed away from other managers', () => {
  const created = { metadata: { name: 'x' }, spec: { a: 1, b: 1 } };
  const mf1 = managedFieldsAfterUpdate(undefined, created, 'one', 'v1', NOW, 'all');
  assert.deepEqual(
    mf1?.map((m) => [m.manager, m.fieldsV1]),
    [['one', { 'f:spec': { 'f:a': {}, 'f:b': {} } }]],
  );
  const stored = { metadata: { name: 'x', managedFields: mf1 }, spec: { a: 1, b: 1 } };
  const mf2 = managedFieldsAfterUpdate(stored, { ...stored, spec: { a: 2, b: 1 } }, 'two', 'v1', NOW, 'all');
  assert.deepEqual(
    mf2?.map((m) => [m.manager, m.operation, m.fieldsV1]),
    [
      ['one', 'Update', { 'f:spec': { 'f:b': {} } }],
      ['two', 'Update', { 'f:spec': { 'f:a': {} } }],
    ],
  );
});

test('apply conflicts on a differing value another manager owns, shares an equal one, and force takes it', () => {
  const base = applyConfig(undefined, { spec: { a: 1, b: 1 } }, 'one', 'v1', NOW, 'all', false);
  assert.ok(base.ok);
  const existing = { ...base.object, metadata: { managedFields: base.managedFields } };
  const clash = applyConfig(existing, { spec: { a: 2 } }, 'two', 'v1', NOW, 'all', false);
  assert.deepEqual(clash.ok ? [] : clash.conflicts, [
    { manager: 'one', operation: 'Apply', apiVersion: 'v1', path: '.spec.a' },
  ]);
  const shared = applyConfig(existing, { spec: { a: 1 } }, 'two', 'v1', NOW, 'all', false);
  assert.ok(shared.ok);
  const forced = applyConfig(existing, { spec: { a: 2 } }, 'two', 'v1', NOW, 'all', true);
  assert.ok(forced.ok);
  assert.deepEqual(forced.object.spec, { a: 2, b: 1 });
  assert.deepEqual(
    forced.managedFields?.map((m) => [m.manager, m.fieldsV1]),
    [
      ['one', { 'f:spec': { 'f:b': {} } }],
      ['two', { 'f:spec': { 'f:a': {} } }],
    ],
  );
});

test('a field a manager stops applying is removed unless someone else owns it', () => {
  const first = applyConfig(undefined, { spec: { a: 1, b: 1 } }, 'one', 'v1', NOW, 'all', false);
  assert.ok(first.ok);
  const existing = { ...first.object, metadata: { managedFields: first.managedFields } };
  const withOther = applyConfig(existing, { spec: { b: 1 } }, 'two', 'v1', NOW, 'all', false);
  assert.ok(withOther.ok);
  const next = { ...withOther.object, metadata: { managedFields: withOther.managedFields } };
  const dropped = applyConfig(next, { spec: {} }, 'one', 'v1', NOW, 'all', false);
  assert.ok(dropped.ok);
  assert.deepEqual(dropped.object.spec, { b: 1 }, 'a is gone, b is kept for manager two');
});
