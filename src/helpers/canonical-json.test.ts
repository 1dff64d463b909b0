import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, jsonEqual } from './canonical-json.js';
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

test('canonical JSON sorts keys at every depth', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: 3 } }), '{"a":{"c":3,"d":[{"y":2,"z":1}]},"b":1}');
});

test('canonical JSON drops undefined members as JSON.stringify does, and keeps array order', () => {
  assert.equal(canonicalJson({ a: undefined, b: [3, undefined, 1] }), '{"b":[3,null,1]}');
  assert.equal(canonicalJson(undefined), 'null');
});

test('jsonEqual ignores key order but not array order', () => {
  assert.ok(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 }));
  assert.ok(!jsonEqual([1, 2], [2, 1]));
  assert.ok(jsonEqual({ a: undefined }, {}));
});

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
