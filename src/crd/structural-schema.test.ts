import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { UnsupportedSchemaError } from './errors.js';
import { k8s } from './k8s.js';
import { structuralViolations } from './structural-check.js';
import { toStructuralSchema } from './structural-schema.js';

const convert = (schema: unknown) => toStructuralSchema(schema, 'spec');
const wrapped = (schema: unknown) =>
  structuralViolations(toStructuralSchema(Type.Object({ field: Type.Unsafe(schema as object) }), 'root'));

function rejects(schema: unknown, path: string, why: RegExp): void {
  assert.throws(
    () => convert(schema),
    (e: unknown) => {
      assert.ok(e instanceof UnsupportedSchemaError, String(e));
      assert.equal(e.code, 'ERR_UNSUPPORTED_SCHEMA');
      assert.equal(e.path, path);
      assert.match(e.message, why);
      return true;
    },
  );
}

test('a union of string literals becomes a typed enum (TypeBox writes anyOf of type+const)', () => {
  const schema = Type.Union([Type.Literal('a'), Type.Literal('b')], { description: 'd', default: 'a' });
  assert.deepEqual(convert(schema), { type: 'string', description: 'd', enum: ['a', 'b'], default: 'a' });
});

test('Type.Enum, which has no type, gets the type its values share; integers and numbers make number', () => {
  assert.deepEqual(convert(Type.Enum(['x', 'y'])), { type: 'string', enum: ['x', 'y'] });
  assert.deepEqual(convert(Type.Enum([1, 2])), { type: 'integer', enum: [1, 2] });
  assert.deepEqual(convert({ enum: [1, 2.5] }), { type: 'number', enum: [1, 2.5] });
  rejects({ enum: ['a', 1] }, 'spec', /enum values of mixed types \(string, integer\)/);
  rejects({ enum: [null] }, 'spec', /enum value null cannot be stored/);
});

test('a single literal becomes a one-value enum: CRDs have no const', () => {
  assert.deepEqual(convert(Type.Literal('only')), { type: 'string', enum: ['only'] });
  assert.deepEqual(convert(Type.Literal(true)), { type: 'boolean', enum: [true] });
});

test("T | null becomes nullable: true on T, with T's own constraints", () => {
  assert.deepEqual(convert(k8s.nullable(Type.String({ maxLength: 3 }))), {
    type: 'string',
    nullable: true,
    maxLength: 3,
  });
  assert.deepEqual(convert(k8s.nullable(Type.Object({ a: Type.String() }))), {
    type: 'object',
    nullable: true,
    required: ['a'],
    properties: { a: { type: 'string' } },
  });
});

test('integer | string becomes x-kubernetes-int-or-string without a type, whichever way it was written', () => {
  assert.deepEqual(convert(k8s.intOrString({ description: 'port' })), {
    description: 'port',
    'x-kubernetes-int-or-string': true,
  });
  assert.deepEqual(convert(Type.Union([Type.String(), Type.Integer()])), { 'x-kubernetes-int-or-string': true });
  rejects(
    Type.Union([Type.Integer(), Type.String({ pattern: '^a' })]),
    'spec',
    /a union of integer \| string has no structural form/,
  );
});

test('Type.Record(String, V) becomes additionalProperties: V; a record of unknown values a free-form object', () => {
  assert.deepEqual(convert(Type.Record(Type.String(), Type.Integer())), {
    type: 'object',
    additionalProperties: { type: 'integer' },
  });
  assert.deepEqual(convert(Type.Record(Type.String(), Type.Unknown())), {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  });
  rejects(
    Type.Record(Type.String({ pattern: '^a' }), Type.Integer()),
    'spec',
    /CRD maps cannot restrict their keys by pattern/,
  );
});

test('Type.Unknown and Type.Any keep any value (preserve-unknown-fields, no type)', () => {
  assert.deepEqual(convert(Type.Unknown()), { 'x-kubernetes-preserve-unknown-fields': true });
  assert.deepEqual(convert(Type.Any({ description: 'anything' })), {
    description: 'anything',
    'x-kubernetes-preserve-unknown-fields': true,
  });
});

test('JSON Schema 2020 exclusive bounds become OpenAPI v3.0 flags beside minimum/maximum', () => {
  assert.deepEqual(convert(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })), {
    type: 'number',
    minimum: 0,
    exclusiveMinimum: true,
    maximum: 1,
    exclusiveMaximum: true,
  });
  rejects(Type.Number({ minimum: 0, exclusiveMinimum: 1 }), 'spec', /both minimum and exclusiveMinimum/);
});

test("Type.Intersect of objects becomes one object with every member's properties and required names", () => {
  const schema = Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Optional(Type.Integer()) })]);
  assert.deepEqual(convert(schema), {
    type: 'object',
    required: ['a'],
    properties: { a: { type: 'string' }, b: { type: 'integer' } },
  });
  rejects(
    Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ a: Type.Integer() })]),
    'spec.allOf[1]',
    /property a is declared by two members/,
  );
  rejects({ allOf: [{ type: 'string' }] }, 'spec.allOf[0]', /only intersections of objects/);
});

test('additionalProperties: false is dropped (the server prunes unknown fields anyway); true keeps them', () => {
  assert.deepEqual(convert(Type.Object({ a: Type.String() }, { additionalProperties: false })), {
    type: 'object',
    required: ['a'],
    properties: { a: { type: 'string' } },
  });
  assert.deepEqual(convert(Type.Object({ a: Type.String() }, { additionalProperties: true })), {
    type: 'object',
    required: ['a'],
    properties: { a: { type: 'string' } },
    'x-kubernetes-preserve-unknown-fields': true,
  });
});

test('examples[0] becomes the OpenAPI example; $id and readOnly carry no constraint and are left out', () => {
  assert.deepEqual(convert(Type.String({ examples: ['x', 'y'], $id: 'S', readOnly: true })), {
    type: 'string',
    example: 'x',
  });
});

test('every schema without a structural form is rejected with its path and what to do instead', () => {
  rejects(Type.Object({ child: Type.Ref('Other') }), 'spec.properties.child', /\$ref: CRD schemas cannot reference/);
  rejects({ type: 'object', $defs: {} }, 'spec', /\$defs/);
  rejects(
    Type.Object({ pair: Type.Tuple([Type.String(), Type.Integer()]) }),
    'spec.properties.pair',
    /tuples .* are not supported/,
  );
  rejects(
    Type.Object({ u: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]) }),
    'spec.properties.u',
    /a union of object \| object has no structural form/,
  );
  rejects(Type.Array(Type.String(), { uniqueItems: true }), 'spec', /use k8s.listSet\(\)/);
  rejects({ type: 'array' }, 'spec', /an array needs items/);
  rejects({ type: 'null' }, 'spec', /k8s.nullable/);
  rejects({ type: ['string', 'null'] }, 'spec', /type must be one name/);
  rejects({ type: 'string', not: { const: 'x' } }, 'spec', /keyword "not" has no CRD equivalent/);
  rejects({ type: 'object', if: {}, then: {} }, 'spec', /keyword "if"/);
  rejects({ minLength: 1 }, 'spec', /a node without a type/);
  rejects({ type: 'string', enum: ['a', 1] }, 'spec', /enum value 1 is not of type string/);
  rejects(
    { type: 'object', required: ['ghost'], properties: {} },
    'spec',
    /required names properties that are not declared: ghost/,
  );
  rejects(
    { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
    'spec',
    /either a struct or a map/,
  );
  rejects(
    { type: 'string', 'x-kubernetes-list-type': 'bag' },
    'spec',
    /x-kubernetes-list-type must be atomic, set or map/,
  );
  rejects({ type: 'object', 'x-kubernetes-validations': [{ message: 'no rule' }] }, 'spec', /needs a rule/);
  rejects(
    { type: 'object', 'x-kubernetes-validations': [{ rule: 'true', severity: 'high' }] },
    'spec',
    /unknown fields: severity/,
  );
  rejects(Type.Null(), 'spec', /type "null"/);
});

test('the k8s.* options pass through as the extensions they name', () => {
  const list = convert(
    Type.Array(Type.Object({ name: Type.String(), v: Type.Integer() }), { ...k8s.listMap(['name']), maxItems: 3 }),
  );
  assert.equal(list['x-kubernetes-list-type'], 'map');
  assert.deepEqual(list['x-kubernetes-list-map-keys'], ['name']);
  assert.equal(list.maxItems, 3);
  assert.equal(convert(Type.Array(Type.String(), k8s.listSet()))['x-kubernetes-list-type'], 'set');
  assert.equal(convert(Type.Array(Type.String(), k8s.listAtomic()))['x-kubernetes-list-type'], 'atomic');
  assert.equal(convert(Type.Object({}, k8s.mapType('atomic')))['x-kubernetes-map-type'], 'atomic');
  assert.equal(
    convert(Type.Object({ a: Type.String() }, k8s.preserveUnknownFields()))['x-kubernetes-preserve-unknown-fields'],
    true,
  );
  assert.deepEqual(
    convert(Type.Object({}, k8s.validations('self.a > 0', k8s.rule('self.b', 'b must hold'))))[
      'x-kubernetes-validations'
    ],
    [{ rule: 'self.a > 0' }, { rule: 'self.b', message: 'b must hold' }],
  );
  assert.deepEqual(convert(k8s.embeddedResource()), {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
    'x-kubernetes-embedded-resource': true,
  });
  assert.deepEqual(convert(k8s.anyObject()), { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  assert.deepEqual(convert(k8s.anyValue()), { 'x-kubernetes-preserve-unknown-fields': true });
  assert.deepEqual(convert(k8s.dateTime()), { type: 'string', format: 'date-time' });
});

test('keys come out in one fixed order whatever order the schema wrote them in', () => {
  const a = convert({ maximum: 3, description: 'n', type: 'integer', minimum: 1 });
  const b = convert({ type: 'integer', minimum: 1, maximum: 3, description: 'n' });
  assert.deepEqual(Object.keys(a), ['type', 'description', 'minimum', 'maximum']);
  assert.deepEqual(Object.keys(b), Object.keys(a));
});

test('everything the converter accepts passes the structural check (a second, independent set of rules)', () => {
  for (const schema of [
    Type.Union([Type.Literal(1), Type.Literal(2)]),
    k8s.nullable(Type.Array(Type.String())),
    k8s.intOrString(),
    Type.Record(Type.String(), Type.Array(Type.Integer())),
    Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: k8s.nullable(Type.Integer()) })]),
    k8s.conditions(),
    k8s.embeddedResource(),
    Type.Unknown(),
  ]) {
    assert.deepEqual(wrapped(schema), [], JSON.stringify(schema));
  }
});
