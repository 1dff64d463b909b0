import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { lineDiff } from './generate-example-crd.js';
import { EXAMPLE_RBAC_PATH, REGENERATE_EXAMPLE_RBAC, exampleRbacYaml } from './generate-example-rbac.js';

test("the committed examples/database-operator/config/rbac.yaml is what the operator's declarations generate", async () => {
  const committed = readFileSync(EXAMPLE_RBAC_PATH, 'utf8');
  const generated = await exampleRbacYaml();
  assert.ok(
    committed === generated,
    `config/rbac.yaml drifted from the operator's declarations (- committed, + generated):\n${lineDiff(committed, generated)}\nRegenerate: ${REGENERATE_EXAMPLE_RBAC}`,
  );
});

test('the drift check fails with a diff naming the changed line', async () => {
  const generated = await exampleRbacYaml();
  const edited = generated.replace(
    '      - create\n      - patch\n',
    '      - create\n      - patch\n      - delete\n',
  );
  assert.notEqual(edited, generated);
  assert.match(lineDiff(edited, generated), /^- {6}- delete {2}\(line \d+\)$/m);
});
