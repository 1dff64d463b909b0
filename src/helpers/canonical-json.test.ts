import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, jsonEqual } from './canonical-json.js';

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
