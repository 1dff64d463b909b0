import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMergePatch, isPlainObject } from './merge-patch.js';

/** RFC 7386 apply, to check that a computed patch turns `before` into `after`. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

test('a merge patch of equal documents is undefined, so the caller sends nothing', () => {
  assert.equal(createMergePatch({ a: 1, b: { c: [1] } }, { b: { c: [1] }, a: 1 }), undefined);
});

test('a merge patch holds changed and added members, null for removed ones, and whole arrays', () => {
  const before = { a: 1, b: { c: 1, d: 2 }, list: [1, 2], gone: 'x' };
  const after = { a: 2, b: { c: 1, e: 3 }, list: [1, 2, 3], added: { x: 1 } };
  const patch = createMergePatch(before, after);
  assert.deepEqual(patch, { gone: null, a: 2, b: { d: null, e: 3 }, list: [1, 2, 3], added: { x: 1 } });
  assert.deepEqual(mergePatch(before, patch), after);
});

test('a removed nested object and a replaced scalar-to-object are expressed as RFC 7386 does', () => {
  assert.deepEqual(createMergePatch({ a: { b: 1 }, c: 1 }, { c: { d: 2 } }), { a: null, c: { d: 2 } });
  assert.deepEqual(mergePatch({ a: { b: 1 }, c: 1 }, { a: null, c: { d: 2 } }), { c: { d: 2 } });
});
