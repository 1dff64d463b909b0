import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyPatch } from 'rfc6902';
import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { createJsonPatch } from './json-patch-diff.js';
import { cloneJson } from './json-values.js';
import { encodeJson } from './review-json.js';

/** The patch as the API server gets it (JSON text), applied to a JSON copy of `original`. */
function applied(original: unknown, mutated: unknown): unknown {
  const patch = JSON.parse(JSON.stringify(createJsonPatch(original, mutated))) as Parameters<typeof applyPatch>[1];
  const doc = JSON.parse(JSON.stringify(original)) as object;
  const errors = applyPatch(doc, patch);
  assert.ok(
    errors.every((e) => e === null),
    `patch applies cleanly: ${JSON.stringify(errors)}`,
  );
  return doc;
}

// rfc6902, the oracle, applies a "__proto__" member through the prototype setter and loses it (the API
// server's Go patcher does not); such keys have their own test below.
const json = fc
  .jsonValue({ maxDepth: 4 })
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown)
  .filter((v) => !JSON.stringify(v).includes('"__proto__"'));
const keyed = fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('a/b', '~0', '~', '/', '')), json, {
  maxKeys: 6,
  noNullPrototype: true,
});

/** A random edit of `v`: members added, removed or changed, array elements appended, dropped or changed. */
function mutationOf(v: unknown): fc.Arbitrary<unknown> {
  return fc.tuple(json, fc.nat(), fc.nat()).map(([fresh, a, b]) => {
    const out = cloneJson(v);
    // The containers of the copy, found before any is edited (an edit adds fresh ones).
    const nodes: unknown[] = [out];
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i];
      if (n && typeof n === 'object') nodes.push(...Object.values(n));
    }
    nodes.forEach((node, i) => {
      const pick = (a + i * 7 + b) % 5;
      if (Array.isArray(node)) {
        if (pick === 0) node.push(cloneJson(fresh));
        else if (pick === 1 && node.length) node.splice(node.length - 1 - ((a + i) % node.length), 1);
        else if (pick === 2 && node.length) node[(b + i) % node.length] = cloneJson(fresh);
      } else if (node && typeof node === 'object') {
        const o = node as Record<string, unknown>;
        const keys = Object.keys(o);
        if (pick === 0) o[`k${a % 5}`] = cloneJson(fresh);
        else if (pick === 1 && keys.length) delete o[keys[(a + i) % keys.length]!];
        else if (pick === 2 && keys.length) o[keys[(b + i) % keys.length]!] = cloneJson(fresh);
      }
    });
    return out;
  });
}

describe('JSONPatch diff', () => {
  test('applying the patch to the original gives the mutated object exactly (random pairs)', () => {
    fc.assert(
      fc.property(fc.oneof(json, keyed), json, (a, b) => {
        assert.deepEqual(applied({ root: a }, { root: b }), { root: b });
      }),
      { numRuns: 400 },
    );
  });

  test('applying the patch to the original gives the mutated object exactly (random edits of one object)', () => {
    fc.assert(
      fc.property(
        keyed.chain((a) => fc.tuple(fc.constant(a), mutationOf(a))),
        ([a, b]) => {
          assert.deepEqual(applied(a, b), b);
        },
      ),
      { numRuns: 400 },
    );
  });

  test('a "__proto__" member is added and replaced by its own path, as any other member', () => {
    const before = JSON.parse('{"spec":{"a":1,"__proto__":{"x":1}}}') as unknown;
    const after = JSON.parse('{"spec":{"a":1,"__proto__":false},"__proto__":{}}') as unknown;
    assert.deepEqual(JSON.parse(JSON.stringify(createJsonPatch(before, after))), [
      { op: 'add', path: '/__proto__', value: {} },
      { op: 'replace', path: '/spec/__proto__', value: false },
    ]);
  });

  test('members whose value JSON cannot hold are absent; array elements become null, as JSON.stringify writes them', () => {
    const mutated = { a: undefined, b: [undefined, 1], c: 'x' };
    assert.deepEqual(applied({ a: 1, b: [0, 1] }, mutated), JSON.parse(JSON.stringify(mutated)));
  });

  test('a big number is compared by its digits and written back byte for byte', () => {
    const original = parseLossless('{"n":9223372036854775807,"m":1}') as object;
    const mutated = cloneJson(original) as Record<string, unknown>;
    mutated.m = parseLossless('9007199254740993');
    const patch = createJsonPatch(original, mutated);
    assert.equal(encodeJson(patch, true), '[{"op":"replace","path":"/m","value":9007199254740993}]');
    assert.equal(stringifyLossless(parseLossless(encodeJson(patch, true))), encodeJson(patch, true));
  });

  // The reproductions of issue 24: rfc6902's LCS diff took 4.6 s and ~500 MB for 400 items, ran out
  // of heap at 600, and overflowed the stack at ~5,000 unchanged items.
  for (const items of [400, 600, 5_000, 100_000]) {
    test(`a mutator that defaults one field in each of ${items} list items is diffed in linear time`, () => {
      const original = { spec: { items: Array.from({ length: items }, (_, i) => ({ name: `item-${i}` })) } };
      const mutated = cloneJson(original);
      for (const item of mutated.spec.items) (item as { name: string; port?: number }).port = 80;
      const started = performance.now();
      const patch = createJsonPatch(original, mutated);
      const elapsedMs = performance.now() - started;
      assert.equal(patch.length, items);
      assert.ok(elapsedMs < 1_000, `took ${elapsedMs.toFixed(0)} ms`);
      assert.deepEqual(applied(original, mutated), mutated);
    });
  }

  test('an unchanged list of 50,000 items and an object nested 100,000 deep give an empty patch, no stack overflow', () => {
    const list = { items: Array.from({ length: 50_000 }, (_, i) => ({ name: `item-${i}`, tags: ['a'] })) };
    assert.deepEqual(createJsonPatch(list, cloneJson(list)), []);
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    assert.deepEqual(createJsonPatch(deep, cloneJson(deep)), []);
  });

  test('the deadline is checked while diffing: a huge diff stops when it throws', () => {
    const original = { items: Array.from({ length: 100_000 }, (_, i) => ({ i })) };
    let checks = 0;
    assert.throws(
      () =>
        createJsonPatch(original, cloneJson(original), () => {
          if (++checks === 3) throw new Error('deadline');
        }),
      /deadline/,
    );
  });
});
