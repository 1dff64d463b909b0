/**
 * Regression tests for issue 24 item 5: CRD generation that dropped or changed a constraint, and
 * validateAgainstSchema answers that the API server (1.20) contradicted. Each case was reproduced
 * against kube-apiserver; crd.oracle.int.test.ts keeps the server as the judge.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type, type TSchema } from 'typebox';
import { InvalidOptionError } from '../core/errors.js';
import { defineCustomKind } from './custom-kind.js';
import { UnsupportedSchemaError } from './errors.js';
import { k8s } from './k8s.js';
import { toStructuralSchema } from './structural-schema.js';
import { validateAgainstSchema } from './validate-object.js';

const kindWith = (spec: TSchema) =>
  defineCustomKind({
    group: 'example.com',
    names: { kind: 'Thing', plural: 'things' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { spec } }],
  });
const thing = (spec: unknown) => ({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't' }, spec });

function refused(spec: TSchema, path: string, why: RegExp): void {
  assert.throws(
    () => kindWith(spec),
    (e: unknown) => {
      assert.ok(e instanceof UnsupportedSchemaError, String(e));
      assert.equal(e.path, path);
      assert.match(e.message, why);
      return true;
    },
  );
}

test('an intersection of two objects with a CEL rule each keeps both rules (it kept only the last)', () => {
  const A = Type.Object({ min: Type.Integer() }, k8s.validations('self.min >= 0'));
  const B = Type.Object({ max: Type.Integer() }, k8s.validations('self.max <= 10'));
  const schema = toStructuralSchema(Type.Intersect([A, B]), 'spec');
  assert.deepEqual(schema['x-kubernetes-validations'], [{ rule: 'self.min >= 0' }, { rule: 'self.max <= 10' }]);
  assert.deepEqual(Object.keys(schema.properties ?? {}), ['min', 'max']);
});

test("an intersection whose members set the same keyword to different values is refused with the member's path", () => {
  const A = Type.Object({ a: Type.String() }, { maxProperties: 3 });
  const B = Type.Object({ b: Type.String() }, { maxProperties: 5 });
  refused(
    Type.Object({ both: Type.Intersect([A, B]) }),
    'versions[v1].schema.properties.spec.properties.both.allOf[1]',
    /maxProperties is set by two members of the intersection \(3 and 5\)/,
  );
  // The same value twice is one constraint, not a conflict.
  assert.equal(
    toStructuralSchema(Type.Intersect([A, Type.Object({ b: Type.String() }, { maxProperties: 3 })]), 'spec')
      .maxProperties,
    3,
  );
});

test('k8s.nullable(a | b) is refused: the server never accepts its null (the validator accepted it; the server said 422)', () => {
  // Without null in the enum both servers answer "Unsupported value: null"; with null listed 1.20
  // rejects the CRD and 1.36 still rejects the null (crd.oracle.int.test.ts pins both).
  refused(
    Type.Object({ level: k8s.nullable(Type.Union([Type.Literal('a'), Type.Literal('b')])) }),
    'versions[v1].schema.properties.spec.properties.level',
    /an enum that is also nullable.*Type\.Optional.*pattern: "\^\(a\|b\)\$"/,
  );
  refused(
    Type.Object({ level: Type.Union([Type.Literal(1), Type.Literal(2), Type.Null()]) }),
    'versions[v1].schema.properties.spec.properties.level',
    /an enum that is also nullable/,
  );
  const THING = kindWith(Type.Object({ level: Type.Optional(k8s.nullable(Type.String({ pattern: '^(a|b)$' }))) }));
  assert.deepEqual(validateAgainstSchema(THING, 'v1', thing({ level: null })), []);
  assert.deepEqual(validateAgainstSchema(THING, 'v1', thing({ level: 'c' })), [
    { path: '/spec/level', message: 'must match pattern "^(a|b)$"' },
  ]);
});

test('number | string is refused (x-kubernetes-int-or-string refuses 1.5, which the validator accepted)', () => {
  refused(
    Type.Object({ amount: Type.Union([Type.Number(), Type.String()]) }),
    'versions[v1].schema.properties.spec.properties.amount',
    /number \| string has no structural form.*k8s\.intOrString\(\)/,
  );
  const THING = kindWith(Type.Object({ amount: k8s.intOrString() }));
  assert.deepEqual(validateAgainstSchema(THING, 'v1', thing({ amount: 1.5 })), [
    { path: '/spec/amount', message: 'must be integer or string, not number' },
  ]);
});

test('format: byte rejects "not-valid!" as the server does (the validator accepted it)', () => {
  const THING = kindWith(Type.Object({ data: Type.String({ format: 'byte' }) }));
  assert.deepEqual(validateAgainstSchema(THING, 'v1', thing({ data: 'not-valid!' })), [
    { path: '/spec/data', message: 'must be of format byte' },
  ]);
  assert.deepEqual(validateAgainstSchema(THING, 'v1', thing({ data: 'aGVsbG8=' })), []);
});

test('Kubernetes formats are checked: date-time, date, uuid, ipv4, cidr, mac; password and unknown formats accept anything', () => {
  const THING = kindWith(
    Type.Object({
      at: Type.Optional(k8s.dateTime()),
      day: Type.Optional(Type.String({ format: 'date' })),
      id: Type.Optional(Type.String({ format: 'uuid' })),
      ip: Type.Optional(Type.String({ format: 'ipv4' })),
      net: Type.Optional(Type.String({ format: 'cidr' })),
      mac: Type.Optional(Type.String({ format: 'mac' })),
      secret: Type.Optional(Type.String({ format: 'password' })),
      other: Type.Optional(Type.String({ format: 'not-a-kubernetes-format' })),
    }),
  );
  const paths = (spec: unknown) => validateAgainstSchema(THING, 'v1', thing(spec)).map((v) => v.path);
  assert.deepEqual(
    paths({
      at: '2026-12-01T21:00:00Z',
      day: '2024-02-29',
      id: '123e4567-e89b-12d3-a456-426614174000',
      ip: '10.0.0.1',
      net: '10.0.0.0/8',
      mac: '00:1a:2b:3c:4d:5e',
      secret: 'x',
      other: '!',
    }),
    [],
  );
  assert.deepEqual(
    paths({
      at: '2026-12-01 21:00:00Z',
      day: '2023-02-29',
      id: 'nope',
      ip: '10.0.0.256',
      net: '10.0.0.0/33',
      mac: '00:1a:2b',
    }),
    ['/spec/at', '/spec/day', '/spec/id', '/spec/ip', '/spec/net', '/spec/mac'],
  );
});

test("a pattern Go's RE2 cannot compile is refused when the kind is defined (the server rejected the CRD)", () => {
  refused(
    Type.Object({ name: Type.String({ pattern: '^(?!admin).*$' }) }),
    'versions[v1].schema.properties.spec.properties.name',
    /lookahead \(\?! .*RE2 does not support it/,
  );
  refused(
    Type.Object({ name: Type.String({ pattern: '(a)\\1' }) }),
    'versions[v1].schema.properties.spec.properties.name',
    /backreference/,
  );
});

test('a default that does not match its own schema is refused when the kind is defined (the server rejected the CRD)', () => {
  refused(
    Type.Object({ replicas: Type.Integer({ default: 'three' }) }),
    'versions[v1].schema.properties.spec.properties.replicas',
    /default "three" does not match its own schema: \(the value\) must be integer, not string/,
  );
  refused(
    Type.Object({ size: Type.Integer({ minimum: 1, default: 0 }) }),
    'versions[v1].schema.properties.spec.properties.size',
    /must be >= 1/,
  );
  refused(
    Type.Object({ o: Type.Object({ a: Type.String() }, { default: { a: 'x', b: 1 } }) }),
    'versions[v1].schema.properties.spec.properties.o',
    /\/b is not a declared field/,
  );
});

test('the validator sees the object as the server does: nulls on non-nullable fields dropped, defaults applied first', () => {
  const THING = kindWith(
    Type.Object({ replicas: Type.Integer({ default: 1 }), note: Type.Optional(Type.String()), size: Type.String() }),
  );
  assert.deepEqual(
    validateAgainstSchema(THING, 'v1', thing({ size: 's' })),
    [],
    'a required field with a default may be left out',
  );
  assert.deepEqual(
    validateAgainstSchema(THING, 'v1', thing({ size: 's', note: null, replicas: null })),
    [],
    'null on an optional field is dropped; on a defaulted one, replaced',
  );
  assert.deepEqual(validateAgainstSchema(THING, 'v1', thing({ size: null })), [
    { path: '/spec/size', message: 'is required' },
  ]);
});

test('list-set and list-map duplicates are reported, list-map keys compared after defaulting', () => {
  const Port = Type.Object({ name: Type.String(), protocol: Type.String({ default: 'TCP' }) });
  const THING = kindWith(
    Type.Object({
      tags: Type.Array(Type.String(), k8s.listSet()),
      ports: Type.Array(Port, k8s.listMap(['name', 'protocol'])),
    }),
  );
  assert.deepEqual(
    validateAgainstSchema(
      THING,
      'v1',
      thing({ tags: ['a', 'a'], ports: [{ name: 'p' }, { name: 'p', protocol: 'TCP' }] }),
    ).map((v) => v.path),
    ['/spec/tags/1', '/spec/ports/1'],
  );
});

test('a top-level field named items is refused: the server reads such an object as a list (a create answered 500)', () => {
  assert.throws(
    () =>
      defineCustomKind({
        group: 'example.com',
        names: { kind: 'Thing', plural: 'things' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { spec: Type.Object({}), items: Type.Array(Type.String()) },
          },
        ],
      }),
    (e: unknown) =>
      e instanceof InvalidOptionError &&
      e.option === 'versions[v1].schema.items' &&
      /read the object as a list/.test(e.message),
  );
});
