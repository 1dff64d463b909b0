/**
 * `operator-runtime init <dir>`: a new operator project — package.json, TypeScript configs, one
 * custom kind, its reconciler, a TestEnv integration test, a Dockerfile, README and the generated
 * Kustomize base in its `config` folder. Everything is built in memory, written beside the target and renamed
 * into place, so a failure leaves no half-made project.
 */
import { readdir } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { generateManifests } from '../codegen/generate.js';
import { CliUsageError } from './cli-error.js';
import { projectFiles } from './scaffold/project-files.js';
import { scaffoldProjectConfig } from './scaffold/scaffold-config.js';
import { scaffoldNames } from './scaffold/scaffold-names.js';
import { sourceFiles } from './scaffold/source-files.js';
import { createFolderAtomically, type FileToWrite } from './write-files.js';

export interface InitOptions {
  readonly cwd: string;
  readonly dir: string;
  readonly group: string;
  readonly kind: string;
  readonly name?: string | undefined;
}

export interface InitResult {
  /** The created folder, as given. */
  readonly dir: string;
  /** Paths of the written files, relative to it. */
  readonly files: readonly string[];
}

export async function runInit(options: InitOptions): Promise<InitResult> {
  const target = resolve(options.cwd, options.dir);
  const names = scaffoldNames({ ...options, folder: basename(target) });
  const existing = await readdir(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw new CliUsageError(`cannot use ${target} as the project folder (${error.code ?? 'error'})`, { cause: error });
  });
  if (existing.length > 0) throw new CliUsageError(`the target folder is not empty: ${target}`);
  const config = scaffoldProjectConfig(names);
  const manifests = await generateManifests(config);
  const files: FileToWrite[] = [
    ...projectFiles(names),
    ...sourceFiles(names),
    ...manifests.map((f) => ({ path: `config/${f.path}`, content: f.content })),
  ];
  await createFolderAtomically(target, files);
  return { dir: options.dir, files: files.map((f) => f.path) };
}
