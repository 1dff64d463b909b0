import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prune, validate, type SchemaProps } from './schema-validation.js';

const schema: SchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1, maximum: 10 },
        color: { type: 'string', enum: ['red', 'blue'] },
        tags: { type: 'array', maxItems: 2, items: { type: 'string', maxLength: 3 } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  },
};

test('pruning drops unknown fields but keeps metadata, preserved subtrees and map values', () => {
  const obj = {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'a' },
    extra: 1,
    spec: { size: 1, bogus: true, free: { any: 1 }, labels: { k: 'v' } },
  };
  prune(obj, schema);
  assert.deepEqual(obj, {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'a' },
    spec: { size: 1, free: { any: 1 }, labels: { k: 'v' } },
  });
});

test('validation reports each violation with the server’s field path and reason', () => {
  const causes = validate({ spec: { size: 11, color: 'pink', tags: ['a', 'b', 'long'], labels: { k: 1 } } }, schema);
  assert.deepEqual(
    causes.map((c) => [c.field, c.reason]),
    [
      ['spec.color', 'FieldValueNotSupported'],
      ['spec.labels.k', 'FieldValueInvalid'],
      ['spec.size', 'FieldValueInvalid'],
      ['spec.tags', 'FieldValueInvalid'],
      ['spec.tags[2]', 'FieldValueInvalid'],
    ],
  );
  assert.equal(causes[2]!.message, 'Invalid value: 11: spec.size in body should be less than or equal to 10');
  assert.deepEqual(
    validate({ spec: {} }, schema).map((c) => [c.field, c.reason]),
    [['spec.size', 'FieldValueRequired']],
  );
  assert.deepEqual(
    validate({ spec: { size: 'big' } }, schema).map((c) => c.message),
    ['Invalid value: "string": spec.size in body must be of type integer: "string"'],
  );
});
