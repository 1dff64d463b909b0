import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { Type } from 'typebox';
import { defineCustomKind } from './custom-kind.js';
import { customResourceDefinition } from './custom-resource-definition.js';
import { GENERATED_HEADER, manifestYaml } from './manifest-yaml.js';
import { GADGET } from './testing/gadget-kind.js';

test('the CRD carries names, scope, every version with its subresources, columns and deprecation, and its conversion', () => {
  const conversion = {
    strategy: 'Webhook',
    webhook: {
      conversionReviewVersions: ['v1'],
      clientConfig: { service: { name: 'hooks', namespace: 'system', path: '/convert' } },
    },
  };
  const crd = customResourceDefinition(GADGET.version('v1beta1'), {
    conversion,
    labels: { app: 'gadgets' },
    annotations: { 'cert-manager.io/inject-ca-from': 'system/cert' },
  });
  assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
  assert.deepEqual(crd.metadata, {
    name: 'gadgets.test.operator-runtime.io',
    labels: { app: 'gadgets' },
    annotations: { 'cert-manager.io/inject-ca-from': 'system/cert' },
  });
  assert.deepEqual(crd.spec.names, {
    kind: 'Gadget',
    plural: 'gadgets',
    singular: 'gadget',
    shortNames: ['gdg'],
    categories: ['all', 'test'],
  });
  assert.equal(crd.spec.scope, 'Namespaced');
  assert.deepEqual(crd.spec.conversion, conversion);
  const [v1, v1beta1] = crd.spec.versions;
  assert.deepEqual(
    [v1?.name, v1?.storage, v1beta1?.name, v1beta1?.storage, v1beta1?.deprecated],
    ['v1', true, 'v1beta1', false, true],
  );
  assert.deepEqual(v1?.subresources, {
    status: {},
    scale: {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.selector',
    },
  });
  assert.equal(v1beta1?.subresources, undefined);
  assert.deepEqual(
    v1?.additionalPrinterColumns?.map((c) => [c.name, c.priority ?? 0]),
    [
      ['Mode', 0],
      ['Replicas', 0],
      ['Size', 1],
    ],
  );
  assert.deepEqual(v1?.schema.openAPIV3Schema.required, ['spec'], 'spec is required; status never is');
  assert.deepEqual(
    v1?.schema.openAPIV3Schema['x-kubernetes-validations'],
    [
      { rule: 'self.metadata.name.size() <= 30', message: 'a gadget name is at most 30 characters' },
      { rule: '!has(self.status) || !has(self.status.replicas) || self.status.replicas <= 100' },
    ],
    "the version's root rules",
  );
  assert.equal(v1beta1?.schema.openAPIV3Schema['x-kubernetes-validations'], undefined);
  assert.deepEqual(Object.keys(v1?.schema.openAPIV3Schema.properties ?? {}), ['spec', 'status']);
  assert.deepEqual(
    Object.keys(v1beta1?.schema.openAPIV3Schema.properties?.spec?.properties ?? {}),
    ['mode', 'size'],
    'each version has its own schema',
  );
});

test('a top-level field wrapped in Type.Optional is not required; other top-level fields are allowed', () => {
  const KIND = defineCustomKind({
    group: 'example.com',
    names: { kind: 'Note', plural: 'notes' },
    scope: 'Cluster',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { spec: Type.Optional(Type.Object({})), data: Type.Record(Type.String(), Type.String()) },
      },
    ],
  });
  const schema = customResourceDefinition(KIND).spec.versions[0]!.schema.openAPIV3Schema;
  assert.deepEqual(schema.required, ['data']);
  assert.deepEqual(schema.properties?.data, { type: 'object', additionalProperties: { type: 'string' } });
});

test('generation is deterministic: the same kind gives the same YAML, byte for byte', () => {
  const a = manifestYaml([customResourceDefinition(GADGET)]);
  const b = manifestYaml([customResourceDefinition(GADGET.version('v1beta1'))]);
  assert.equal(a, b);
});

test('the YAML starts with the do-not-edit header and the regenerate command, and reads back as the same objects', () => {
  const crd = customResourceDefinition(GADGET);
  const text = manifestYaml([crd, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }], {
    regenerate: 'npx operator-runtime generate crds',
    comment: ['second line', ''],
  });
  assert.ok(
    text.startsWith(
      `${GENERATED_HEADER}\n# Regenerate: npx operator-runtime generate crds\n# second line\n#\napiVersion: apiextensions.k8s.io/v1\n`,
    ),
    text.slice(0, 200),
  );
  const docs = parseAllDocuments(text).map((d) => d.toJS() as unknown);
  assert.deepEqual(docs, [
    JSON.parse(JSON.stringify(crd)),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } },
  ]);
  assert.ok(text.endsWith('\n') && !text.endsWith('\n\n'));
});

test('strings YAML 1.1 would read as booleans, numbers or null are quoted, so kubectl reads them as strings', () => {
  const values = ['True', 'yes', 'on', 'Off', 'y', 'n', 'NO', '1', '0.5', '1e3', 'null', '~', '', '0x1F', '012'];
  const text = manifestYaml([{ values }]);
  for (const v of values)
    assert.ok(
      !new RegExp(`^\\s*- ${v.replace(/[.~]/g, '\\$&')}$`, 'm').test(text) || v === '',
      `${JSON.stringify(v)} is not quoted:\n${text}`,
    );
  assert.deepEqual((parseAllDocuments(text)[0]!.toJS({}) as { values: string[] }).values, values);
  assert.deepEqual(
    (parseAllDocuments(text, { version: '1.1' })[0]!.toJS({}) as { values: string[] }).values,
    values,
    'a YAML 1.1 reader sees the same strings',
  );
});

test('long strings are not folded (a drift diff shows whole lines)', () => {
  const long = `${'word '.repeat(60)}end`;
  const text = manifestYaml([{ description: long }]);
  assert.equal(text.split('\n').filter((l) => l.includes('word')).length, 1);
});
