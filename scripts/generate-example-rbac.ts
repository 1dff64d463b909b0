/**
 * Writes the reference operator's RBAC (examples/database-operator/config/rbac.yaml) from what its
 * manager declares (examples/database-operator/src/manifest-manager.ts). `--check` writes nothing
 * and exits 1 with a diff when the committed file differs; scripts/generate-example-rbac.test.ts
 * runs the same comparison.
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx scripts/generate-example-rbac.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { manifestYaml } from 'operator-runtime/crd';
import { rbacManifests } from 'operator-runtime/rbac';
import { OPERATOR_NAME, OPERATOR_NAMESPACE, manifestManager } from '../examples/database-operator/src/manifest-manager.js';
import { lineDiff } from './generate-example-crd.js';

export const EXAMPLE_RBAC_PATH = fileURLToPath(new URL('../examples/database-operator/config/rbac.yaml', import.meta.url));
export const REGENERATE_EXAMPLE_RBAC = 'NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx scripts/generate-example-rbac.ts';

/** The YAML the committed rbac.yaml must hold, byte for byte. */
export function exampleRbacYaml(): string {
  const objects = rbacManifests(manifestManager(), { name: OPERATOR_NAME, serviceAccount: { name: OPERATOR_NAME, namespace: OPERATOR_NAMESPACE } });
  return manifestYaml(objects, {
    regenerate: REGENERATE_EXAMPLE_RBAC,
    comment: [
      'The Database operator\'s roles: exactly what its controllers, event recorder, leader election',
      'and secure metrics declare (examples/database-operator/src/operator.ts). The ServiceAccount',
      `${OPERATOR_NAMESPACE}/${OPERATOR_NAME} is not created here.`,
    ],
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const generated = exampleRbacYaml();
  if (process.argv.includes('--check')) {
    const committed = readFileSync(EXAMPLE_RBAC_PATH, 'utf8');
    if (committed !== generated) {
      console.error(`${EXAMPLE_RBAC_PATH} is out of date with the operator's declarations:\n${lineDiff(committed, generated)}\nRegenerate: ${REGENERATE_EXAMPLE_RBAC}`);
      process.exit(1);
    }
  } else {
    writeFileSync(EXAMPLE_RBAC_PATH, generated);
    console.log(`wrote ${EXAMPLE_RBAC_PATH}`);
  }
}
