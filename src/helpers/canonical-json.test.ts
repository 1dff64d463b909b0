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

test('an int64 beyond 2^53, read by the client as a bigint, is compared and hashed by its digits instead of throwing', () => {
  assert.equal(canonicalJson({ b: 9223372036854775807n, a: 1 }), '{"a":1,"b":9223372036854775807}');
  assert.equal(jsonEqual({ n: 9223372036854775807n }, { n: 9223372036854775807n }), true);
  assert.equal(jsonEqual({ n: 9223372036854775807n }, { n: 9223372036854775806n }), false);
});
