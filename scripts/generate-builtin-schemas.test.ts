import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { OUTPUT, defaultSwaggerPath, generate } from './generate-builtin-schemas.js';

// The Kubernetes source tree is unpacked by scripts/install-control-plane.sh, which every test run
// (scripts/test.sh) runs first; without it the vendored file cannot be checked, and that is a failure.
test('the vendored built-in schemas are what the generator makes from the Kubernetes OpenAPI definitions (no drift, no hand edits)', () => {
  const swagger = defaultSwaggerPath();
  assert.ok(
    swagger,
    'no Kubernetes source tree in ~/.cache/operator-runtime/build: run scripts/install-control-plane.sh',
  );
  const { source, droppedListMaps } = generate(swagger);
  assert.equal(
    readFileSync(OUTPUT, 'utf8'),
    source,
    `${OUTPUT} is stale or edited: run node --import tsx scripts/generate-builtin-schemas.ts`,
  );
  assert.deepEqual(
    droppedListMaps,
    ['io.k8s.api.core.v1.Container.ports'],
    'the list-maps whose keys the OpenAPI neither requires nor defaults',
  );
});
