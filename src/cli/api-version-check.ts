/**
 * `--kubernetes-version` on every `generate` target: the removed-API check (operator-runtime/codegen's
 * table, from the Kubernetes deprecation guide) on the files about to be written, before any is.
 */
import { parseAllDocuments } from 'yaml';
import { checkApiVersion, parseKubernetesVersion } from '../codegen/bundle/removed-apis.js';
import type { GeneratedFile } from '../codegen/generate.js';
import { CliCheckFailedError, CliUsageError } from './cli-error.js';

/** Parses every YAML document of every file; a file that does not parse was written by us and is a bug. */
function objectsOf(files: readonly GeneratedFile[]): { path: string; object: Record<string, unknown> }[] {
  return files
    .filter((f) => f.path.endsWith('.yaml'))
    .flatMap((f) =>
      parseAllDocuments(f.content)
        .map((d) => d.toJS() as unknown)
        .filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null)
        .map((object) => ({ path: f.path, object })),
    );
}

/**
 * The removed-API check on generated files, before anything is written: throws (exit 1) naming
 * each object an API `kubernetesVersion` no longer serves, with its replacement; returns warnings.
 */
export function checkGeneratedApis(files: readonly GeneratedFile[], kubernetesVersion: string): string[] {
  const target = parseKubernetesVersion(kubernetesVersion);
  if (!target)
    throw new CliUsageError(
      `--kubernetes-version ${JSON.stringify(kubernetesVersion)} is not a Kubernetes version such as 1.30`,
    );
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const { path, object } of objectsOf(files)) {
    const finding = checkApiVersion(object, target);
    if (finding) (finding.severity === 'error' ? errors : warnings).push(`${path}: ${finding.message}`);
  }
  if (errors.length > 0)
    throw new CliCheckFailedError(`nothing written: ${errors.length} manifest(s) use removed APIs`, errors);
  return warnings;
}
