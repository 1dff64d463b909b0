/**
 * A custom kind that uses every schema extension `k8s.*` offers, shared by the crd unit and
 * integration tests: `gadgets.test.operator-runtime.io`, two versions (v1 stored, v1beta1 served
 * and deprecated), status and scale subresources, printer columns, short names and categories.
 */
import { Type } from 'typebox';
import { defineCustomKind } from '../custom-kind.js';
import { k8s } from '../k8s.js';

export const GadgetPort = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 15 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  protocol: Type.Optional(Type.Union([Type.Literal('TCP'), Type.Literal('UDP')], { default: 'TCP' })),
});

export const GadgetSpec = Type.Object(
  {
    mode: Type.Union([Type.Literal('fast'), Type.Literal('safe')], { description: 'How the gadget runs.' }),
    size: Type.String({ pattern: '^[0-9]+(Mi|Gi)$', minLength: 2, maxLength: 12 }),
    replicas: Type.Integer({ minimum: 0, maximum: 10, default: 1 }),
    ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
    target: k8s.intOrString({ description: 'A port number or name.' }),
    nickname: Type.Optional(k8s.nullable(Type.String({ maxLength: 20 }))),
    tags: Type.Optional(Type.Array(Type.String(), { ...k8s.listSet(), maxItems: 5 })),
    ports: Type.Optional(Type.Array(GadgetPort, { ...k8s.listMap(['name']), minItems: 1 })),
    labels: Type.Optional(Type.Record(Type.String(), Type.String(), k8s.mapType('granular'))),
    template: Type.Optional(k8s.embeddedResource({ description: 'An object the gadget creates.' })),
    extra: Type.Optional(k8s.anyObject()),
    anything: Type.Optional(k8s.anyValue()),
    level: Type.Optional(Type.Enum(['low', 'high'])),
    limits: Type.Optional(
      Type.Object(
        { min: Type.Integer(), max: Type.Integer() },
        k8s.validations(k8s.rule('self.min <= self.max', 'min must not exceed max')),
      ),
    ),
    immutableName: Type.Optional(
      Type.String(k8s.validations({ rule: 'self == oldSelf', message: 'immutableName is immutable' })),
    ),
  },
  k8s.validations(k8s.rule("self.mode != 'fast' || self.replicas <= 3", 'fast gadgets run at most 3 replicas')),
);

export const GadgetStatus = Type.Object({
  replicas: Type.Optional(Type.Integer()),
  selector: Type.Optional(Type.String()),
  conditions: Type.Optional(k8s.conditions()),
});

export const GADGET = defineCustomKind({
  group: 'test.operator-runtime.io',
  names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', shortNames: ['gdg'], categories: ['all', 'test'] },
  scope: 'Namespaced',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: { spec: GadgetSpec, status: GadgetStatus },
      subresources: {
        status: {},
        scale: {
          specReplicasPath: '.spec.replicas',
          statusReplicasPath: '.status.replicas',
          labelSelectorPath: '.status.selector',
        },
      },
      validations: [
        k8s.rule('self.metadata.name.size() <= 30', 'a gadget name is at most 30 characters'),
        '!has(self.status) || !has(self.status.replicas) || self.status.replicas <= 100',
      ],
      printerColumns: [
        { name: 'Mode', type: 'string', jsonPath: '.spec.mode' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired replicas' },
        { name: 'Size', type: 'string', jsonPath: '.spec.size', priority: 1 },
      ],
    },
    {
      name: 'v1beta1',
      served: true,
      storage: false,
      deprecated: true,
      deprecationWarning: 'test.operator-runtime.io/v1beta1 Gadget is deprecated; use v1',
      schema: { spec: Type.Object({ mode: Type.String(), size: Type.Optional(Type.String()) }) },
    },
  ],
});
