import { test } from 'node:test';
import assert from 'node:assert/strict';
import { customResourceDefinition } from './custom-resource-definition.js';
import { structuralViolations } from './structural-check.js';
import { GADGET } from './testing/gadget-kind.js';

const root = (spec: unknown) => ({ type: 'object', properties: { spec } });

/** Every schema node under a generated schema, by path: the checker's walk is compared with this one. */
function nodes(
  schema: unknown,
  path: string,
  out: Map<string, Record<string, unknown>> = new Map(),
): Map<string, Record<string, unknown>> {
  if (typeof schema !== 'object' || schema === null) return out;
  const node = schema as Record<string, unknown>;
  out.set(path, node);
  for (const [name, child] of Object.entries((node.properties as Record<string, unknown> | undefined) ?? {}))
    nodes(child, `${path}.properties.${name}`, out);
  if (node.additionalProperties) nodes(node.additionalProperties, `${path}.additionalProperties`, out);
  if (node.items) nodes(node.items, `${path}.items`, out);
  return out;
}

test('every node of every generated schema has a type, or is int-or-string or preserve-unknown-fields, and nothing else is wrong', () => {
  const crd = customResourceDefinition(GADGET);
  let count = 0;
  for (const version of crd.spec.versions) {
    const all = nodes(version.schema.openAPIV3Schema, 'root');
    count += all.size;
    for (const [path, node] of all) {
      assert.ok(
        typeof node.type === 'string' ||
          node['x-kubernetes-int-or-string'] === true ||
          node['x-kubernetes-preserve-unknown-fields'] === true,
        `${path} has no type`,
      );
      for (const forbidden of [
        '$ref',
        'const',
        'anyOf',
        'oneOf',
        'allOf',
        'patternProperties',
        'uniqueItems',
        '$schema',
        'examples',
      ])
        assert.ok(!(forbidden in node), `${path} has ${forbidden}`);
    }
    assert.deepEqual(structuralViolations(version.schema.openAPIV3Schema), [], version.name);
  }
  assert.ok(count >= 40, `walked ${count} nodes; the Gadget schema has more than 40`);
});

test('the checker finds each rule a CRD schema can break, naming the path', () => {
  const cases: [string, unknown, RegExp][] = [
    [
      'a node without a type',
      root({ type: 'object', properties: { a: { minLength: 1 } } }),
      /spec\.properties\.a: no type/,
    ],
    ['const', root({ type: 'string', const: 'x' }), /spec: const is not allowed/],
    ['$ref', root({ $ref: '#/x' }), /spec: \$ref is not allowed/],
    [
      'a type inside anyOf',
      root({ type: 'string', anyOf: [{ type: 'string' }] }),
      /spec\.anyOf\[0\]: type is not allowed inside/,
    ],
    [
      'a default inside allOf',
      root({ type: 'string', allOf: [{ default: 'x' }] }),
      /spec\.allOf\[0\]: default is not allowed inside/,
    ],
    [
      'properties with additionalProperties',
      root({ type: 'object', properties: {}, additionalProperties: { type: 'string' } }),
      /mutually exclusive/,
    ],
    ['additionalProperties: false', root({ type: 'object', additionalProperties: false }), /false is forbidden/],
    ['an array without items', root({ type: 'array' }), /an array needs items/],
    ['uniqueItems', root({ type: 'array', items: { type: 'string' }, uniqueItems: true }), /uniqueItems is forbidden/],
    [
      'an exclusive bound as a number',
      root({ type: 'integer', exclusiveMinimum: 1 }),
      /exclusiveMinimum must be a flag/,
    ],
    ['an unknown type', root({ type: 'null' }), /type "null" is not one of/],
    [
      'required naming nothing',
      root({ type: 'object', required: ['a'], properties: {} }),
      /required a is not a declared property/,
    ],
    ['int-or-string with a type', root({ type: 'string', 'x-kubernetes-int-or-string': true }), /must not have a type/],
    [
      'embedded resource that is not an object',
      root({ type: 'string', 'x-kubernetes-embedded-resource': true }),
      /needs type object/,
    ],
    [
      'embedded resource without fields',
      root({ type: 'object', 'x-kubernetes-embedded-resource': true }),
      /needs properties or x-kubernetes-preserve-unknown-fields/,
    ],
    [
      'list-map without keys',
      root({ type: 'array', items: { type: 'object', properties: {} }, 'x-kubernetes-list-type': 'map' }),
      /needs x-kubernetes-list-map-keys/,
    ],
    [
      'list-map key optional without default',
      root({
        type: 'array',
        items: { type: 'object', properties: { k: { type: 'string' } } },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['k'],
      }),
      /key k must be required or have a default/,
    ],
    [
      'list-map key not scalar',
      root({
        type: 'array',
        items: { type: 'object', required: ['k'], properties: { k: { type: 'object' } } },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['k'],
      }),
      /key k must be a scalar/,
    ],
    [
      'list-map keys without map',
      root({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-map-keys': ['k'] }),
      /needs x-kubernetes-list-type map/,
    ],
    [
      'list-set of objects',
      root({ type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'set' }),
      /needs scalar \(or atomic\) items/,
    ],
    [
      'map-type on a string',
      root({ type: 'string', 'x-kubernetes-map-type': 'atomic' }),
      /x-kubernetes-map-type needs type object/,
    ],
    [
      'preserve-unknown-fields: false',
      root({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false }),
      /must be true or absent/,
    ],
    [
      'a CEL rule without its expression',
      root({ type: 'object', 'x-kubernetes-validations': [{ message: 'm' }] }),
      /x-kubernetes-validations\[0\] has no rule/,
    ],
  ];
  for (const [what, schema, expected] of cases) {
    const found = structuralViolations(schema, 'root');
    assert.ok(
      found.some((v) => expected.test(v)),
      `${what}: expected ${String(expected)} in ${JSON.stringify(found)}`,
    );
  }
  assert.deepEqual(structuralViolations({ type: 'string' }), ['openAPIV3Schema: the root must be of type object']);
});

test('int-or-string may carry the one typed anyOf Kubernetes allows', () => {
  assert.deepEqual(
    structuralViolations(
      root({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }),
    ),
    [],
  );
  assert.notDeepEqual(
    structuralViolations(
      root({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'boolean' }] }),
    ),
    [],
  );
});
