/**
 * Drift check: the reference operator's committed CRD (examples/database-operator/config/crd.yaml)
 * is exactly what its schema generates. On a difference the failure shows the diff and the command
 * that regenerates the file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { EXAMPLE_CRD_PATH, REGENERATE_EXAMPLE_CRD, exampleCrdYaml, lineDiff } from './generate-example-crd.js';

test('examples/database-operator/config/crd.yaml is what the Database schema generates, byte for byte', async () => {
  const committed = readFileSync(EXAMPLE_CRD_PATH, 'utf8');
  const generated = await exampleCrdYaml();
  if (committed !== generated) {
    assert.fail(
      `config/crd.yaml is out of date with examples/database-operator/src/database-schema.ts (- committed, + generated):\n${lineDiff(committed, generated)}\nRegenerate it with:\n  ${REGENERATE_EXAMPLE_CRD}`,
    );
  }
});

test('the drift check would catch a changed constraint, naming the line', async () => {
  const generated = await exampleCrdYaml();
  const edited = generated.replace('maximum: 9', 'maximum: 10');
  assert.notEqual(edited, generated, 'the CRD has the replicas maximum the test edits');
  const diff = lineDiff(edited, generated);
  // Two lines, in either order (v1alpha1 has the same maximum, so the alignment may put + first).
  assert.deepEqual(
    diff
      .split('\n')
      .map((l) => l.replace(/\d+\)$/, 'n)'))
      .sort(),
    ['+                  maximum: 9  (line n)', '-                  maximum: 10  (line n)'],
  );
});

test('the committed CRD keeps the constraints the hand-written one had', () => {
  // By name: documents are in resource-name order, and databasefleets sorts before databases.
  const crd = parseAllDocuments(readFileSync(EXAMPLE_CRD_PATH, 'utf8'))
    .map(
      (d) =>
        d.toJS() as {
          metadata: { name: string };
          spec: { versions: { schema: { openAPIV3Schema: Schema } }[] };
        },
    )
    .find((d) => d.metadata.name === 'databases.example.com')!;
  const spec = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
  const status = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.status!;
  assert.deepEqual(spec.required, ['engine', 'version', 'replicas', 'storage']);
  assert.deepEqual(spec.properties!.engine!.enum, ['postgres', 'mysql']);
  assert.equal(spec.properties!.version!.pattern, '^[0-9]+(\\.[0-9]+){0,2}$');
  assert.deepEqual([spec.properties!.replicas!.minimum, spec.properties!.replicas!.maximum], [1, 9]);
  assert.equal(spec.properties!.storage!.pattern, '^[0-9]+(Mi|Gi|Ti)$');
  assert.equal(spec.properties!.backup!.properties!.enabled!.default, true);
  assert.deepEqual(status.properties!.phase!.enum, ['Provisioning', 'Ready', 'Degraded', 'Deleting']);
  assert.equal(status.properties!.conditions!['x-kubernetes-list-type'], 'map');
  assert.deepEqual(status.properties!.conditions!['x-kubernetes-list-map-keys'], ['type']);
});

interface Schema {
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  properties?: Record<string, Schema>;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
}
