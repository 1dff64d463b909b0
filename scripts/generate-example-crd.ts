/**
 * Writes the reference operator's CRD (examples/database-operator/config/crd.yaml) from its schema
 * (examples/database-operator/src/database.ts), as `operator-runtime generate crds` does from
 * examples/database-operator/operator-runtime.config.ts (the same function, so the two agree).
 * `--check` writes nothing and exits 1 with a diff when the committed file differs;
 * scripts/generate-example-crd.test.ts runs the same comparison.
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx scripts/generate-example-crd.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateCrds } from 'operator-runtime/codegen';
import exampleConfig from '../examples/database-operator/operator-runtime.config.js';

export const EXAMPLE_CRD_PATH = fileURLToPath(
  new URL('../examples/database-operator/config/crd.yaml', import.meta.url),
);
/** The command the generated files name (package.json: the CLI on the example's config). */
export const REGENERATE_EXAMPLE_CRD = 'npm run generate:example';

/** The YAML the committed crd.yaml must hold, byte for byte. */
export async function exampleCrdYaml(): Promise<string> {
  const [crd] = await generateCrds(exampleConfig);
  return crd!.content;
}

/** A line diff of two texts: `-` lines only in `before`, `+` lines only in `after`, in order (an LCS diff). */
export function lineDiff(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push(`-${a[i++]}  (line ${i})`);
    } else {
      out.push(`+${b[j++]}  (line ${j})`);
    }
  }
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const generated = await exampleCrdYaml();
  if (process.argv.includes('--check')) {
    const committed = readFileSync(EXAMPLE_CRD_PATH, 'utf8');
    if (committed !== generated) {
      console.error(
        `${EXAMPLE_CRD_PATH} is out of date with the schema:\n${lineDiff(committed, generated)}\nRegenerate: ${REGENERATE_EXAMPLE_CRD}`,
      );
      process.exit(1);
    }
  } else {
    writeFileSync(EXAMPLE_CRD_PATH, generated);
    console.log(`wrote ${EXAMPLE_CRD_PATH}`);
  }
}
