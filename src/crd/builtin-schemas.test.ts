import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import type { ObjectOf } from '../client/kind.js';
import { InvalidOptionError } from '../core/errors.js';
import { BUILTIN_SCHEMAS_KUBERNETES_VERSION, builtinSchema, type BuiltinName } from './builtin-schemas.js';
import { defineCustomKind } from './custom-kind.js';
import { customResourceDefinition } from './custom-resource-definition.js';
import { k8s } from './k8s.js';
import { validateAgainstSchema } from './validate-object.js';

const RUNNER = defineCustomKind({
  group: 'example.com',
  names: { kind: 'Runner', plural: 'runners' },
  scope: 'Namespaced',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: {
        spec: Type.Object({
          template: k8s.podTemplateSpec({ description: 'The pods to run.' }),
          owner: Type.Optional(k8s.objectReference()),
        }),
      },
    },
  ],
});
type Runner = ObjectOf<typeof RUNNER>;
const runner = (spec: unknown) => ({ apiVersion: 'example.com/v1', kind: 'Runner', metadata: { name: 'r' }, spec });

test('every vendored built-in type converts to a structural CRD schema', () => {
  const names: BuiltinName[] = [
    'io.k8s.api.core.v1.PodTemplateSpec',
    'io.k8s.api.core.v1.PodSpec',
    'io.k8s.api.core.v1.Container',
    'io.k8s.api.core.v1.ObjectReference',
    'io.k8s.api.core.v1.LocalObjectReference',
    'io.k8s.api.core.v1.ResourceRequirements',
    'io.k8s.api.core.v1.EnvVar',
    'io.k8s.api.core.v1.Volume',
    'io.k8s.api.core.v1.Toleration',
    'io.k8s.api.batch.v1beta1.JobTemplateSpec',
    'io.k8s.api.batch.v1.JobSpec',
    'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector',
  ];
  for (const name of names) {
    const KIND = defineCustomKind({
      group: 'example.com',
      names: { kind: 'Holder', plural: 'holders' },
      scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ value: builtinSchema(name) }) } },
      ],
    });
    assert.doesNotThrow(() => customResourceDefinition(KIND), name);
  }
  assert.equal(BUILTIN_SCHEMAS_KUBERNETES_VERSION, '1.20.2');
  assert.throws(() => builtinSchema('io.k8s.api.core.v1.Nope' as BuiltinName), InvalidOptionError);
});

test("the field is typed as the kubernetes-types type, and the CRD carries the built-in's structure", () => {
  const spec: Runner['spec'] = {
    template: { spec: { containers: [{ name: 'app', image: 'nginx', ports: [{ containerPort: 80 }] }] } },
  };
  const containerName: string = spec.template.spec!.containers[0]!.name;
  assert.equal(containerName, 'app');
  const schema =
    customResourceDefinition(RUNNER).spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!.properties!.template!;
  assert.equal(schema.description, 'The pods to run.');
  const container = schema.properties!.spec!.properties!.containers!.items!;
  assert.deepEqual(container.required, ['name']);
  assert.deepEqual(container.properties!.resources!.properties!.limits!.additionalProperties, {
    'x-kubernetes-int-or-string': true,
    pattern: container.properties!.resources!.properties!.limits!.additionalProperties!.pattern,
  });
  assert.deepEqual(Object.keys(schema.properties!.metadata!.properties!), [
    'annotations',
    'finalizers',
    'labels',
    'name',
    'namespace',
  ]);
});

test('validateAgainstSchema checks an embedded pod template as the server would: required name, types, int-or-string quantities', () => {
  const ok = {
    template: {
      metadata: { labels: { app: 'x' } },
      spec: { containers: [{ name: 'app', image: 'nginx', resources: { limits: { cpu: 1, memory: '64Mi' } } }] },
    },
  };
  assert.deepEqual(validateAgainstSchema(RUNNER, 'v1', runner(ok)), []);
  assert.deepEqual(
    validateAgainstSchema(RUNNER, 'v1', runner({ template: { spec: { containers: [{ image: 'nginx' }] } } })),
    [{ path: '/spec/template/spec/containers/0/name', message: 'is required' }],
  );
  assert.deepEqual(
    validateAgainstSchema(
      RUNNER,
      'v1',
      runner({ template: { spec: { containers: [{ name: 'a', ports: [{ containerPort: 'http' }] }] } } }),
    ),
    [{ path: '/spec/template/spec/containers/0/ports/0/containerPort', message: 'must be integer, not string' }],
  );
  assert.deepEqual(
    validateAgainstSchema(
      RUNNER,
      'v1',
      runner({ template: { spec: { containers: [{ name: 'a', resources: { limits: { cpu: 'lots' } } }] } } }),
    ).map((v) => v.path),
    ['/spec/template/spec/containers/0/resources/limits/cpu'],
  );
});
