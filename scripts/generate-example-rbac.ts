/**
 * Writes the reference operator's RBAC (examples/database-operator/config/rbac.yaml) alone, exactly
 * as the CLI does from examples/database-operator/operator-runtime.config.ts (`npm run
 * generate:example` writes it with the rest of the Kustomize base). `--check` writes nothing and exits 1 with a
 * diff when the committed file differs; scripts/generate-example-rbac.test.ts runs the same
 * comparison without a control plane.
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx scripts/generate-example-rbac.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateRbac } from 'operator-runtime/codegen';
import config from '../examples/database-operator/operator-runtime.config.js';
import { lineDiff } from './generate-example-crd.js';

export const EXAMPLE_RBAC_PATH = fileURLToPath(
  new URL('../examples/database-operator/config/rbac.yaml', import.meta.url),
);
export const REGENERATE_EXAMPLE_RBAC =
  'NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx scripts/generate-example-rbac.ts (or npm run generate:example for all of config/)';

/** The YAML the committed rbac.yaml must hold, byte for byte: the roles the operator's manager declares. */
export async function exampleRbacYaml(): Promise<string> {
  const files = await generateRbac(config);
  const rbac = files.find((f) => f.path === 'rbac.yaml');
  if (!rbac) throw new Error(`generateRbac wrote no rbac.yaml (got ${files.map((f) => f.path).join(', ')})`);
  return rbac.content;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const generated = await exampleRbacYaml();
  if (process.argv.includes('--check')) {
    const committed = readFileSync(EXAMPLE_RBAC_PATH, 'utf8');
    if (committed !== generated) {
      console.error(
        `${EXAMPLE_RBAC_PATH} is out of date with the operator's declarations:\n${lineDiff(committed, generated)}\nRegenerate: ${REGENERATE_EXAMPLE_RBAC}`,
      );
      process.exit(1);
    }
  } else {
    writeFileSync(EXAMPLE_RBAC_PATH, generated);
    console.log(`wrote ${EXAMPLE_RBAC_PATH}`);
  }
}
