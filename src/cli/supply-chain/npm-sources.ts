/**
 * Where an SBOM's packages come from: a project's package-lock.json (found in the project's folder
 * or above it, as npm finds a workspace's), or an installed folder — the runtime files of an image,
 * as scripts/layout-runtime.sh or a Dockerfile's runtime stage lays them out — read package by
 * package from node_modules, with the SHA-256 of every file outside node_modules (the operator's own).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { CliUsageError } from '../cli-error.js';
import { productionTree, type NpmPackageEntry, type NpmTree } from './npm-tree.js';

const LOCKFILES = ['npm-shrinkwrap.json', 'package-lock.json'];

async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CliUsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      cause: error,
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliUsageError(`${path} is not JSON: ${(error as Error).message}`, { cause: error });
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The nearest lockfile at or above `projectDir` (a workspace's lockfile is its root's). */
export function findLockfile(projectDir: string): string {
  for (let dir = resolve(projectDir); ; dir = dirname(dir)) {
    for (const name of LOCKFILES) if (existsSync(join(dir, name))) return join(dir, name);
    if (dirname(dir) === dir) break;
  }
  throw new CliUsageError(
    `no package-lock.json found in ${projectDir} or above it: run npm install (the SBOM lists what the lockfile pins)`,
  );
}

/** The production tree of the project in `projectDir`, from its lockfile. */
export async function lockfileTree(projectDir: string): Promise<{ lockfile: string; tree: NpmTree }> {
  if (!existsSync(join(projectDir, 'package.json'))) throw new CliUsageError(`no package.json in ${projectDir}`);
  const lockfile = findLockfile(projectDir);
  const lock = await readJson(lockfile);
  if (!isRecord(lock) || !isRecord(lock.packages)) {
    throw new CliUsageError(
      `${lockfile} has no "packages" (lockfileVersion 1, npm 6): run npm install with npm 7 or later to upgrade it`,
    );
  }
  const projectPath = relative(dirname(lockfile), resolve(projectDir)).split(sep).join('/');
  // The lockfile's entries are npm's own records; the walk reads only the typed fields.
  const tree = productionTree(lock.packages as Record<string, NpmPackageEntry>, projectPath, lockfile);
  return { lockfile, tree };
}

/** A file of the operator's own in an installed folder. */
export interface LayoutFile {
  /** Relative to the folder, `/`-separated: `dist/main.js`. */
  readonly path: string;
  readonly sha256: string;
}

/** Every package.json under `dir/node_modules`, keyed by install path (`node_modules/a/node_modules/b`). */
async function installedPackages(dir: string, path: string, out: Record<string, NpmPackageEntry>): Promise<void> {
  const modules = join(dir, path, 'node_modules');
  const entries = await readdir(modules, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue; // .bin, npm's hidden lockfile
    const names = entry.name.startsWith('@')
      ? (await readdir(join(modules, entry.name), { withFileTypes: true }))
          .filter((e) => e.isDirectory() || e.isSymbolicLink())
          .map((e) => `${entry.name}/${e.name}`)
      : entry.isDirectory() || entry.isSymbolicLink()
        ? [entry.name]
        : [];
    for (const name of names) {
      const key = `${path === '' ? '' : `${path}/`}node_modules/${name}`;
      const manifest = await readJson(join(dir, key, 'package.json')).catch(() => undefined);
      if (!isRecord(manifest)) continue; // not a package (a stray folder)
      out[key] = manifest as NpmPackageEntry;
      await installedPackages(dir, key, out);
    }
  }
}

async function ownFiles(dir: string): Promise<LayoutFile[]> {
  const files: LayoutFile[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/');
    if (path === 'node_modules' || path.startsWith('node_modules/')) continue;
    const sha256 = createHash('sha256')
      .update(await readFile(join(dir, path)))
      .digest('hex');
    files.push({ path, sha256 });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The packages installed in `dir` (an image's runtime files) and the operator's own files there. */
export async function installedTree(dir: string): Promise<{ tree: NpmTree; files: LayoutFile[] }> {
  const root = resolve(dir);
  const manifest = await readJson(join(root, 'package.json'));
  if (!isRecord(manifest)) throw new CliUsageError(`${join(root, 'package.json')} is not a package manifest`);
  const packages: Record<string, NpmPackageEntry> = { '': manifest as NpmPackageEntry };
  await installedPackages(root, '', packages);
  return { tree: productionTree(packages, '', join(root, 'node_modules')), files: await ownFiles(root) };
}
