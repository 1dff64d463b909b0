import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
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

test('jsonEqual answers exactly as comparing the canonical strings, for plain data and for what JSON rewrites', () => {
  // Small alphabets, so that equal pairs and near-misses both come up often.
  const leaf = fc.oneof(
    fc.constantFrom<unknown>(null, undefined, true, false, 0, -0, 1, '1', '', 'a', NaN, Infinity),
    fc.constantFrom<unknown>(1n, new Date(0), '1970-01-01T00:00:00.000Z', () => 1, Symbol.for('s')),
    fc.constantFrom<unknown>({ toJSON: () => 1 }, { toJSON: () => undefined }, new Map(), Object.create(null)),
  );
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('a', 'b', 'toString', '__proto__'), tie('value'), { maxKeys: 3 }),
    ),
  }));
  const canonicalEqual = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);
  fc.assert(
    fc.property(value, value, (a, b) => {
      assert.equal(jsonEqual(a, b), canonicalEqual(a, b));
      assert.equal(jsonEqual(a, structuredCloneOrSelf(a)), canonicalEqual(a, structuredCloneOrSelf(a)));
    }),
    { numRuns: 3000 },
  );
  assert.equal(jsonEqual({ a: 1, toString: 2 }, { a: 1 }), false, 'an inherited member is no member');
  assert.equal(jsonEqual({ a: 1, f: () => 1 }, { a: 1 }), true, 'JSON drops a function member');
  assert.equal(jsonEqual([NaN], [null]), true, 'JSON writes NaN as null');
  assert.equal(jsonEqual({ when: new Date(0) }, { when: '1970-01-01T00:00:00.000Z' }), true);
  assert.equal(jsonEqual(undefined, null), true);
  // A cycle is no JSON: comparing two throws as writing one does (a difference found first answers false).
  const cycle = (): Record<string, unknown> => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    return o;
  };
  assert.throws(() => jsonEqual(cycle(), cycle()), RangeError);
  assert.equal(jsonEqual(cycle(), { a: 2 }), false);
});

function structuredCloneOrSelf(v: unknown): unknown {
  try {
    return structuredClone(v);
  } catch {
    return v; // functions and symbols do not clone
  }
}
