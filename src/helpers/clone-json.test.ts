import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serialize } from 'node:v8';
import fc from 'fast-check';
import { cloneJson } from './meta-object.js';

/** `CLONE_JSON_SEED=<n>` replays one fast-check run (the seed a failure printed). */
function seedFromEnvironment(): { seed?: number } {
  const seed = process.env.CLONE_JSON_SEED;
  return seed === undefined ? {} : { seed: Number(seed) };
}

test('cloneJson copies as structuredClone does: values, holes, undefined members, shared references, cycles', () => {
  fc.assert(
    fc.property(
      fc.anything({
        withBigInt: true,
        withNullPrototype: true,
        withDate: true,
        withSparseArray: true,
        withMap: true,
        withSet: true,
        withBoxedValues: true,
        withTypedArray: true,
        withObjectString: true,
      }),
      (v) => {
        // v8's serialization is structuredClone's own: equal bytes, equal clones (holes, types and
        // sharing included). Both sides go through structuredClone once more, because the bytes also
        // show how V8 holds a number (an integral double stays a heap number in a copy, where
        // structuredClone's deserializer makes it a small integer) — not a difference a caller sees.
        assert.deepEqual(serialize(structuredClone(cloneJson(v))), serialize(structuredClone(v)));
      },
    ),
    { numRuns: 2000, ...seedFromEnvironment() },
  );
  const shared = { a: 1 };
  const cyclic: Record<string, unknown> = { shared, again: shared, list: [shared] };
  cyclic.self = cyclic;
  const copy = cloneJson(cyclic);
  assert.notEqual(copy, cyclic);
  assert.equal(copy.self, copy, 'a cycle stays a cycle');
  assert.equal(copy.shared, copy.again, 'a shared object stays shared');
  assert.equal((copy.list as unknown[])[0], copy.shared);
  assert.notEqual(copy.shared, shared);
  const withProto = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
  assert.deepEqual(Object.keys(cloneJson(withProto)), ['__proto__']);
  assert.equal(Object.getPrototypeOf(cloneJson(withProto)), Object.prototype);
  assert.throws(() => cloneJson({ f: () => 1 }), { name: 'DataCloneError' });
  assert.throws(() => cloneJson(new Proxy({}, {})), { name: 'DataCloneError' });
  assert.equal(Object.is(cloneJson(-0), -0), true);
  assert.deepEqual(cloneJson({ u: undefined, n: NaN, b: 1n }), { u: undefined, n: NaN, b: 1n });
});
