/**
 * `operator-runtime generate bundle` and `operator-runtime validate bundle <dir>`: an OLM
 * registry+v1 bundle from the project config (its version from package.json, its samples from the
 * Kustomize base's samples.yaml), and the offline check of a bundle folder.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { OperatorRuntimeError } from '../core/errors.js';
import { GENERATED_HEADER } from '../crd/manifest-yaml.js';
import { DEFAULT_BUNDLE_DIR, DEFAULT_SAMPLES_FILE } from '../codegen/bundle/bundle-config.js';
import { MANIFESTS_DIR } from '../codegen/bundle/bundle-format.js';
import { generateBundle } from '../codegen/bundle/generate-bundle.js';
import { formatProblem, validateBundle, type BundleProblem } from '../codegen/bundle/validate-bundle.js';
import type { GeneratedFile } from '../codegen/generate.js';
import { CliCheckFailedError, CliUsageError } from './cli-error.js';
import { DEFAULT_OUT_DIR, KUBERNETES_VERSION_HELP } from './generate-command.js';
import { checkGeneratedApis } from './api-version-check.js';
import { findConfig, loadConfig } from './load-config.js';
import { writeFilesAtomically } from './write-files.js';

/** Where the commands write (a subset of CliIo, so this module does not import the program). */
export interface BundleCommandIo {
  readonly cwd: string;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

async function readVersion(configPath: string): Promise<string | undefined> {
  const path = join(dirname(configPath), 'package.json');
  if (!existsSync(path)) return undefined;
  const manifest = JSON.parse(await readFile(path, 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : undefined;
}

async function readSamples(files: readonly string[]): Promise<object[]> {
  const samples: object[] = [];
  for (const file of files) {
    const docs = parseAllDocuments(await readFile(file, 'utf8'));
    for (const doc of Array.isArray(docs) ? docs : [docs]) {
      if (doc.errors.length > 0)
        throw new CliUsageError(`sample file ${file} does not parse: ${doc.errors[0]!.message.split('\n')[0]}`);
      const value = doc.toJS() as unknown;
      if (typeof value === 'object' && value !== null) samples.push(value);
    }
  }
  return samples;
}

export interface GenerateBundleCommandOptions {
  readonly cwd: string;
  readonly config?: string;
  readonly out?: string;
  readonly bundleVersion?: string;
  readonly kubernetesVersion?: string;
}

/** Runs `generate bundle`; returns the written paths (relative to `cwd`) and what to tell the user. */
export async function runGenerateBundle(
  options: GenerateBundleCommandOptions,
): Promise<{ written: string[]; notes: string[] }> {
  const { path, config } = await loadConfig(findConfig(options.cwd, options.config));
  const configDir = dirname(path);
  const outDir =
    options.out !== undefined
      ? resolve(options.cwd, options.out)
      : resolve(configDir, config.bundle?.outDir ?? DEFAULT_BUNDLE_DIR);
  const defaultSamples = join(configDir, config.outDir ?? DEFAULT_OUT_DIR, DEFAULT_SAMPLES_FILE);
  const sampleFiles = config.bundle?.samples
    ? config.bundle.samples.map((s) => resolve(configDir, s))
    : existsSync(defaultSamples)
      ? [defaultSamples]
      : [];
  for (const file of sampleFiles) if (!existsSync(file)) throw new CliUsageError(`sample file not found: ${file}`);
  const version = options.bundleVersion ?? config.bundle?.version ?? (await readVersion(path));
  let bundle;
  try {
    bundle = await generateBundle(config, {
      ...(version !== undefined ? { version } : {}),
      samples: await readSamples(sampleFiles),
    });
  } catch (error) {
    if (error instanceof OperatorRuntimeError && !(error instanceof CliUsageError))
      throw new CliUsageError(`config ${path}: ${error.message}`, { cause: error });
    throw error;
  }
  const notes = [...bundle.notes];
  if (options.kubernetesVersion !== undefined)
    notes.push(...checkGeneratedApis(bundle.files, options.kubernetesVersion).map((w) => `warning: ${w}`));
  await writeFilesAtomically(outDir, bundle.files);
  await removeStaleManifests(outDir, bundle.files);
  return {
    written: bundle.files.map((f) => relative(options.cwd, resolve(outDir, f.path)) || f.path),
    notes,
  };
}

/** A kind removed from the project leaves its old file in manifests/: remove generated files not written this time. */
async function removeStaleManifests(outDir: string, files: readonly GeneratedFile[]): Promise<void> {
  const current = new Set(files.map((f) => f.path));
  const dir = join(outDir, MANIFESTS_DIR);
  for (const name of await readdir(dir)) {
    const path = `${MANIFESTS_DIR}${name}`;
    if (current.has(path)) continue;
    const content = await readFile(join(dir, name), 'utf8').catch(() => '');
    if (content.startsWith(GENERATED_HEADER)) await rm(join(dir, name));
  }
}

/** Every file under `dir`, keyed by its path relative to it with `/` separators. */
export async function readBundleFolder(dir: string): Promise<Map<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    throw new CliUsageError(`cannot read the bundle folder ${dir} (${error.code ?? 'error'})`, { cause: error });
  });
  const files = new Map<string, string>();
  for (const entry of entries.filter((e) => e.isFile())) {
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dir, path).split(sep).join('/'), await readFile(path, 'utf8'));
  }
  return files;
}

/** Adds `generate bundle` under `generate`, and `validate bundle <dir>`. */
export function addBundleCommands(program: Command, generate: Command, io: BundleCommandIo): void {
  generate
    .command('bundle')
    .description(
      'write an OLM registry+v1 bundle: manifests/ (ClusterServiceVersion, CRDs, metrics Service, NetworkPolicies), metadata/annotations.yaml, bundle.Dockerfile',
    )
    .option(
      '-c, --config <file>',
      'the project config (default: operator-runtime.config.{ts,mts,js,mjs} in the current folder)',
    )
    .option('-o, --out <dir>', "output folder (default: the config's bundle.outDir, else bundle/ beside the config)")
    .option(
      '--bundle-version <semver>',
      "the operator's version (default: the config's bundle.version, else package.json's version)",
    )
    .option('--kubernetes-version <version>', KUBERNETES_VERSION_HELP)
    .action(async (options: Omit<GenerateBundleCommandOptions, 'cwd'>) => {
      const { written, notes } = await runGenerateBundle({ cwd: io.cwd, ...options });
      for (const path of written) io.stdout(`wrote ${path}\n`);
      for (const note of notes) io.stderr(`${note.startsWith('warning: ') ? '' : 'note: '}${note}\n`);
    });

  program
    .command('validate')
    .description('check what operator-runtime generates')
    .usage('bundle <dir> [options]')
    .command('bundle')
    .description(
      "check a registry+v1 bundle offline: operator-framework/api's default validators' rules and removed APIs; exit 1 on any error",
    )
    .argument('<dir>', 'the bundle folder (holding manifests/ and metadata/)')
    .option('--kubernetes-version <version>', `${KUBERNETES_VERSION_HELP} (default: the CSV's spec.minKubeVersion)`)
    .action(async (dir: string, options: { kubernetesVersion?: string }) => {
      const folder = resolve(io.cwd, dir);
      const result = validateBundle(await readBundleFolder(folder), options);
      // Each line names the file as the user would open it: under the folder they passed.
      const line = (p: BundleProblem) =>
        formatProblem({ ...p, file: p.file === '.' ? dir : `${dir.replace(/\/+$/, '')}/${p.file}` });
      for (const p of result.errors) io.stderr(`error: ${line(p)}\n`);
      for (const p of result.warnings) io.stderr(`warning: ${line(p)}\n`);
      const summary = `${result.errors.length} error(s), ${result.warnings.length} warning(s)`;
      if (result.errors.length > 0) throw new CliCheckFailedError(`${dir}: ${summary}`, []);
      io.stdout(`${dir}: valid registry+v1 bundle (${summary})\n`);
    });
}
