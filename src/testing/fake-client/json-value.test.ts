import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clone } from './json-value.js';

const roundTrip = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

test('clone copies as a JSON round trip does, for plain data and for what JSON rewrites', () => {
  const nullProto = Object.assign(Object.create(null) as object, { a: 1 });
  const withProtoKey = JSON.parse('{"__proto__": {"polluted": true}, "b": 2}') as unknown;
  const values: unknown[] = [
    { a: 1, b: 'x', c: [1, 'two', null, true, { d: {} }], e: { f: { g: [] } }, 2: 'int key first', z: -0 },
    { dropped: undefined, fn: () => 1, sym: Symbol('s'), kept: 1 },
    [undefined, () => 1, Symbol('s'), NaN, Infinity, -Infinity, -0],
    // eslint-disable-next-line no-sparse-arrays
    [1, , 3],
    { when: new Date(0), nested: { toJSON: (key: string) => `key ${key}` } },
    { boxed: [new String('s'), new Number(1), new Boolean(false)] },
    { map: new Map([[1, 2]]), set: new Set([1]) },
    nullProto,
    withProtoKey,
    'text \ud800 lone surrogate',
    0,
    null,
  ];
  for (const v of values) {
    const copy = clone(v);
    assert.deepEqual(copy, roundTrip(v));
    assert.equal(JSON.stringify(copy), JSON.stringify(roundTrip(v)));
  }
  const protoCopy = clone(withProtoKey) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(protoCopy), Object.prototype, 'a "__proto__" member stays a member');
  assert.deepEqual(Object.keys(protoCopy), ['__proto__', 'b']);
  assert.equal(Object.is(clone(-0), 0), true);
});

test('clone shares nothing with its input and fails as JSON does on a cycle or a bigint', () => {
  const v = { a: { b: [{ c: 1 }] } };
  const copy = clone(v);
  copy.a.b[0]!.c = 2;
  assert.equal(v.a.b[0]!.c, 1);
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = { back: cyclic };
  assert.throws(() => clone(cyclic), TypeError);
  assert.throws(() => clone({ n: 1n }), TypeError);
  assert.equal(clone(undefined), undefined);
});
