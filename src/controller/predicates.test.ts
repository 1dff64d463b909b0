import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../core/object-key.js';
import {
  DEFAULT_PRIMARY_PREDICATE,
  and,
  annotationsChanged,
  generationChanged,
  labelsChanged,
  not,
  or,
  resourceVersionChanged,
} from './predicates.js';

const obj = (meta: Record<string, unknown>, status?: unknown): KubeObject => ({
  metadata: { name: 'x', namespace: 'ns', ...meta },
  ...(status ? { status } : {}),
});
const update = (old: KubeObject, object: KubeObject) => ({ type: 'update' as const, old, object });

test('the default primary predicate ignores status-only updates', () => {
  const before = obj({ generation: 1, resourceVersion: '1' });
  const statusOnly = obj({ generation: 1, resourceVersion: '2' }, { ready: true });
  assert.equal(DEFAULT_PRIMARY_PREDICATE(update(before, statusOnly)), false);
});

test('the default primary predicate passes spec changes, finalizer changes, deletion, adds and deletes', () => {
  const base = obj({ generation: 1, resourceVersion: '1', finalizers: ['a.example.com/x'] });
  assert.equal(
    DEFAULT_PRIMARY_PREDICATE(
      update(base, obj({ generation: 2, resourceVersion: '2', finalizers: ['a.example.com/x'] })),
    ),
    true,
  );
  assert.equal(
    DEFAULT_PRIMARY_PREDICATE(update(base, obj({ generation: 1, resourceVersion: '2', finalizers: [] }))),
    true,
  );
  assert.equal(
    DEFAULT_PRIMARY_PREDICATE(
      update(
        base,
        obj({
          generation: 1,
          resourceVersion: '2',
          finalizers: ['a.example.com/x'],
          deletionTimestamp: '2026-01-01T00:00:00Z',
        }),
      ),
    ),
    true,
  );
  assert.equal(DEFAULT_PRIMARY_PREDICATE({ type: 'add', object: base }), true);
  assert.equal(DEFAULT_PRIMARY_PREDICATE({ type: 'delete', object: base, finalStateUnknown: false }), true);
});

test('a resync (the same object twice) passes every change predicate', () => {
  const o = obj({ generation: 1, resourceVersion: '1' });
  for (const p of [generationChanged, labelsChanged, annotationsChanged, resourceVersionChanged])
    assert.equal(p(update(o, o)), true);
});

test('labels and annotations predicates compare content, not key order', () => {
  const a = obj({ labels: { x: '1', y: '2' }, annotations: { p: 'q' } });
  assert.equal(labelsChanged(update(a, obj({ labels: { y: '2', x: '1' }, annotations: { p: 'q' } }))), false);
  assert.equal(labelsChanged(update(a, obj({ labels: { x: '1' }, annotations: { p: 'q' } }))), true);
  assert.equal(annotationsChanged(update(a, obj({ labels: { x: '1', y: '2' }, annotations: { p: 'r' } }))), true);
});

test('and/or/not compose predicates', () => {
  const a = obj({ generation: 1, labels: { x: '1' }, resourceVersion: '1' });
  const b = obj({ generation: 1, labels: { x: '2' }, resourceVersion: '2' });
  assert.equal(and(generationChanged, labelsChanged)(update(a, b)), false);
  assert.equal(or(generationChanged, labelsChanged)(update(a, b)), true);
  assert.equal(not(generationChanged)(update(a, b)), true);
});
