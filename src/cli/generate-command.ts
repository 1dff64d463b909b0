/**
 * `operator-runtime generate crds|rbac|manifests`: loads the project config, builds every file in
 * memory, then writes them all at once into the output folder (`--out`, else the config's `outDir`
 * beside the config file, else a `config` folder there).
 */
import { dirname, relative, resolve } from 'node:path';
import { generateCrds, generateManifests, generateRbac, type GeneratedFile } from '../codegen/generate.js';
import type { OperatorProjectConfig } from '../codegen/config.js';
import { OperatorRuntimeError } from '../core/errors.js';
import { checkGeneratedApis } from './api-version-check.js';
import { CliUsageError } from './cli-error.js';
import { findConfig, loadConfig } from './load-config.js';
import { writeFilesAtomically } from './write-files.js';

export const GENERATE_TARGETS = ['crds', 'rbac', 'manifests'] as const;
export type GenerateTarget = (typeof GENERATE_TARGETS)[number];

export const DEFAULT_OUT_DIR = 'config';

export interface GenerateCommandOptions {
  readonly cwd: string;
  readonly config?: string;
  readonly out?: string;
  /** Refuse (write nothing) when a file uses an API this Kubernetes version removed; warn on deprecated ones. */
  readonly kubernetesVersion?: string;
  /** Where deprecation warnings go. */
  readonly warn?: (text: string) => void;
}

export const KUBERNETES_VERSION_HELP =
  'refuse manifests using an API this Kubernetes version no longer serves (e.g. 1.30); warn on deprecated ones';

const GENERATE: Record<GenerateTarget, (config: OperatorProjectConfig) => Promise<GeneratedFile[]>> = {
  crds: generateCrds,
  rbac: generateRbac,
  manifests: generateManifests,
};

/** Runs one generate target; returns the written paths (relative to `cwd`). */
export async function runGenerate(target: GenerateTarget, options: GenerateCommandOptions): Promise<string[]> {
  const { path, config } = await loadConfig(findConfig(options.cwd, options.config));
  const outDir =
    options.out !== undefined
      ? resolve(options.cwd, options.out)
      : resolve(dirname(path), config.outDir ?? DEFAULT_OUT_DIR);
  let files: GeneratedFile[];
  try {
    files = await GENERATE[target](config);
  } catch (error) {
    // The library's own errors name what is wrong in the config (a kind, a controller declaration).
    if (error instanceof OperatorRuntimeError)
      throw new CliUsageError(`config ${path}: ${error.message}`, { cause: error });
    throw error;
  }
  if (files.length === 0)
    throw new CliUsageError(`config ${path} defines nothing to generate for "${target}" (no kinds)`);
  if (options.kubernetesVersion !== undefined)
    for (const warning of checkGeneratedApis(files, options.kubernetesVersion)) options.warn?.(`warning: ${warning}\n`);
  await writeFilesAtomically(outDir, files);
  return files.map((f) => relative(options.cwd, resolve(outDir, f.path)) || f.path);
}
