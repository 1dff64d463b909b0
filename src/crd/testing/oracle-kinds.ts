/**
 * Custom kinds for the differential test against the API server (crd.oracle.int.test.ts): between
 * them they use every construct the generator and validator handle — the formats the server
 * checks, nullable enums and objects, intersections with CEL rules, int-or-string, bounds of each
 * kind, maps with property counts, list maps with defaulted keys, sets, Unicode lengths and RE2
 * patterns, nested defaults, free-form and embedded values, and built-in types' schemas.
 */
import { Type } from 'typebox';
import { defineCustomKind } from '../custom-kind.js';
import { k8s } from '../k8s.js';

const Formats = Type.Object({
  data: Type.Optional(Type.String({ format: 'byte' })),
  at: Type.Optional(k8s.dateTime()),
  day: Type.Optional(Type.String({ format: 'date' })),
  id: Type.Optional(Type.String({ format: 'uuid' })),
  id4: Type.Optional(Type.String({ format: 'uuid4' })),
  ip: Type.Optional(Type.String({ format: 'ipv4' })),
  ip6: Type.Optional(Type.String({ format: 'ipv6' })),
  net: Type.Optional(Type.String({ format: 'cidr' })),
  mac: Type.Optional(Type.String({ format: 'mac' })),
  color: Type.Optional(Type.String({ format: 'hexcolor' })),
  rgb: Type.Optional(Type.String({ format: 'rgbcolor' })),
  ssn: Type.Optional(Type.String({ format: 'ssn' })),
  oid: Type.Optional(Type.String({ format: 'bsonobjectid' })),
  secret: Type.Optional(Type.String({ format: 'password' })),
});

const Window = Type.Intersect([
  Type.Object(
    { from: Type.Integer({ minimum: 0, maximum: 23 }) },
    k8s.validations(k8s.rule('self.from >= 0', 'from is an hour')),
  ),
  Type.Object(
    { to: Type.Integer({ minimum: 0, maximum: 23 }) },
    k8s.validations(k8s.rule('self.to <= 23', 'to is an hour')),
  ),
]);

const Endpoint = Type.Object({
  host: Type.String({ minLength: 1, maxLength: 8 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  protocol: Type.Optional(Type.Union([Type.Literal('TCP'), Type.Literal('UDP')], { default: 'TCP' })),
});

export const SPECIMEN = defineCustomKind({
  group: 'oracle.operator-runtime.io',
  names: { kind: 'Specimen', plural: 'specimens' },
  scope: 'Namespaced',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: {
        spec: Type.Object({
          formats: Type.Optional(Formats),
          level: Type.Optional(k8s.nullable(Type.String({ pattern: '^(low|high)$' }))),
          tier: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('high')])),
          count: Type.Optional(k8s.nullable(Type.Integer({ minimum: 1 }))),
          label: Type.Optional(k8s.nullable(Type.String({ minLength: 1 }))),
          owner: Type.Optional(k8s.nullable(Type.Object({ name: Type.String() }))),
          window: Type.Optional(Window),
          target: Type.Optional(k8s.intOrString()),
          step: Type.Optional(Type.Integer({ multipleOf: 5, exclusiveMaximum: 100 })),
          ratio: Type.Optional(Type.Number({ minimum: 0, exclusiveMaximum: 1 })),
          labels: Type.Optional(
            Type.Record(Type.String(), Type.String({ maxLength: 4 }), { minProperties: 1, maxProperties: 3 }),
          ),
          limits: Type.Optional(
            Type.Object(
              { cpu: Type.Optional(Type.String()), memory: Type.Optional(Type.String()) },
              { maxProperties: 1 },
            ),
          ),
          endpoints: Type.Optional(Type.Array(Endpoint, { ...k8s.listMap(['host', 'protocol']), maxItems: 3 })),
          ports: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { ...k8s.listSet(), minItems: 1 })),
          matrix: Type.Optional(Type.Array(Type.Array(Type.Boolean(), { maxItems: 2 }))),
          nickname: Type.Optional(Type.String({ maxLength: 3 })),
          word: Type.Optional(Type.String({ pattern: '^\\w+\\.[[:alpha:]]\\Q.*\\E$' })),
          spaced: Type.Optional(Type.String({ pattern: '^a\\sb$' })),
          code: Type.Optional(Type.String({ pattern: '^[A-Z]{2}-[0-9]{1,3}$' })),
          settings: Type.Object(
            {
              retries: Type.Optional(Type.Integer({ default: 3, minimum: 0 })),
              mode: Type.Optional(Type.String({ default: 'auto' })),
            },
            { default: {} },
          ),
          extra: Type.Optional(k8s.anyObject()),
          anything: Type.Optional(k8s.anyValue()),
          template: Type.Optional(k8s.embeddedResource()),
          on: Type.Optional(Type.Boolean()),
        }),
      },
    },
  ],
});

/** A cluster-scoped kind with a required nullable field, a defaulted enum and a top-level list (not named items: see definition-validation.ts). */
export const SAMPLE = defineCustomKind({
  group: 'oracle.operator-runtime.io',
  names: { kind: 'Sample', plural: 'samples' },
  scope: 'Cluster',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: {
        spec: Type.Object({
          size: k8s.nullable(Type.Integer({ minimum: 0, maximum: 9 })),
          tier: Type.Union([Type.Literal('gold'), Type.Literal('silver')], { default: 'silver' }),
          note: Type.Optional(Type.String({ maxLength: 5, default: 'none' })),
        }),
        entries: Type.Optional(
          Type.Array(
            Type.Object({ id: Type.Integer(), tags: Type.Optional(Type.Array(Type.String(), k8s.listSet())) }),
            k8s.listMap(['id']),
          ),
        ),
      },
    },
  ],
});

/** A kind embedding built-in types' schemas (builtin-schemas.ts): a Pod template, a Job template, an object reference. */
export const RUNNER = defineCustomKind({
  group: 'builtin.operator-runtime.io',
  names: { kind: 'Runner', plural: 'runners' },
  scope: 'Namespaced',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: {
        spec: Type.Object({
          template: k8s.podTemplateSpec(),
          jobTemplate: Type.Optional(k8s.jobTemplateSpec()),
          owner: Type.Optional(k8s.objectReference()),
        }),
      },
    },
  ],
});
