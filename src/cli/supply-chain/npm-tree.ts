/**
 * The production dependency tree of an npm project, read from what npm itself recorded: a
 * package-lock.json (v2/v3 `packages`, keyed by install path) or, for an installed folder such as an
 * image's runtime files, the package.json of every package under node_modules. Walked from the
 * project's `dependencies` and `optionalDependencies` the way Node resolves them (the nearest
 * `node_modules/<name>` up the path), following each package's dependencies, optional dependencies
 * and required peers: what `npm install --omit=dev` installs. Dev dependencies are never entered,
 * so a package reached only through them is not in the tree.
 */
import { CliUsageError } from '../cli-error.js';

/** One package entry as npm records it (the fields the walk reads). */
export interface NpmPackageEntry {
  readonly name?: string;
  readonly version?: string;
  readonly integrity?: string;
  readonly resolved?: string;
  readonly license?: unknown;
  readonly link?: boolean;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
}

/** A package in the production tree. */
export interface NpmTreePackage {
  readonly name: string;
  readonly version: string;
  /** Where it is installed, relative to the lockfile's folder: `node_modules/pino`. */
  readonly paths: readonly string[];
  /** The lockfile's Subresource Integrity string (`sha512-…`), when recorded. */
  readonly integrity?: string;
  /** An SPDX expression or a licence name, when the package declares one as a string. */
  readonly license?: string;
  /** `name@version` of the packages it depends on in this tree. */
  readonly dependsOn: readonly string[];
}

export interface NpmTree {
  /** The project itself. */
  readonly root: Omit<NpmTreePackage, 'paths' | 'integrity'>;
  /** Every production package, by `name@version`, sorted. */
  readonly packages: ReadonlyMap<string, NpmTreePackage>;
}

const idOf = (name: string, version: string) => `${name}@${version}`;

/** The package name an install path ends in: `a/node_modules/@s/b` → `@s/b`. */
export function nameFromPath(path: string): string {
  const at = path.lastIndexOf('node_modules/');
  return at < 0 ? path : path.slice(at + 'node_modules/'.length);
}

/** Install paths Node tries for `name` required from the package at `from` (nearest first). */
function candidatePaths(from: string, name: string): string[] {
  const parts = from === '' ? [] : from.split('/');
  const out: string[] = [];
  for (let i = parts.length; i >= 0; i--) {
    if (i > 0 && parts[i - 1] === 'node_modules') continue;
    const prefix = parts.slice(0, i).join('/');
    out.push(prefix === '' ? `node_modules/${name}` : `${prefix}/node_modules/${name}`);
  }
  return out;
}

function licenseOf(entry: NpmPackageEntry): string | undefined {
  return typeof entry.license === 'string' && entry.license.trim() !== '' ? entry.license.trim() : undefined;
}

/**
 * Walks the production tree of the package at `projectPath` (`''` for the lockfile's own project,
 * `examples/database-operator` for a workspace) through `packages` (install path → entry).
 * `source` names where the entries came from, for errors.
 */
export function productionTree(
  packages: Readonly<Record<string, NpmPackageEntry>>,
  projectPath: string,
  source: string,
): NpmTree {
  const project = packages[projectPath];
  if (!project) {
    throw new CliUsageError(
      `${source} has no entry for ${projectPath === '' ? 'the project' : projectPath}: run npm install`,
    );
  }
  const found = new Map<string, { entry: NpmPackageEntry; name: string; version: string; paths: string[] }>();
  const edges = new Map<string, Set<string>>();
  const visitedPaths = new Set<string>();

  /** Resolves `name` from the package installed at `from`; follows links (workspaces, file: deps). */
  const resolve = (from: string, name: string): { path: string; entry: NpmPackageEntry } | undefined => {
    for (const candidate of candidatePaths(from, name)) {
      const entry = packages[candidate];
      if (!entry) continue;
      if (entry.link) {
        const target = entry.resolved ?? '';
        const real = packages[target];
        if (!real) throw new CliUsageError(`${source}: ${candidate} links to ${target}, which has no entry`);
        return { path: target, entry: real };
      }
      return { path: candidate, entry };
    }
    return undefined;
  };

  /** Records the package at `path` and walks its dependencies once; returns its id and those it depends on. */
  const walk = (path: string, entry: NpmPackageEntry, isProject: boolean): { id?: string; children: Set<string> } => {
    const name = entry.name ?? (isProject ? undefined : nameFromPath(path));
    const version = entry.version;
    const id = name && version ? idOf(name, version) : undefined;
    if (!isProject) {
      if (!name || !version) throw new CliUsageError(`${source}: ${path} has no name or version`);
      const known = found.get(id!);
      if (known) {
        if (!known.paths.includes(path)) known.paths.push(path);
      } else {
        found.set(id!, { entry, name, version, paths: [path] });
      }
    }
    if (visitedPaths.has(path)) return { ...(id ? { id } : {}), children: new Set() };
    visitedPaths.add(path);
    const required: [string, boolean][] = [
      ...Object.keys(entry.dependencies ?? {}).map((d): [string, boolean] => [d, false]),
      ...Object.keys(entry.optionalDependencies ?? {}).map((d): [string, boolean] => [d, true]),
    ];
    // A project's own peers are not installed for it; a dependency's required peers are.
    if (!isProject) {
      for (const peer of Object.keys(entry.peerDependencies ?? {})) {
        if (!entry.peerDependenciesMeta?.[peer]?.optional) required.push([peer, false]);
      }
    }
    const mine = new Set<string>();
    for (const [dependency, optional] of required) {
      const target = resolve(path, dependency);
      if (!target) {
        if (optional) continue; // not installed on this platform (fsevents) or left out
        throw new CliUsageError(
          `${source}: ${dependency}, required by ${path === '' ? 'the project' : path}, is not installed: run npm install`,
        );
      }
      const child = walk(target.path, target.entry, false).id;
      if (child && child !== id) mine.add(child);
    }
    if (id && !isProject) edges.set(id, new Set([...(edges.get(id) ?? []), ...mine]));
    return { ...(id ? { id } : {}), children: mine };
  };

  const direct = walk(projectPath, project, true).children;

  const sorted = [...found.keys()].sort();
  const result = new Map<string, NpmTreePackage>();
  for (const id of sorted) {
    const { entry, name, version, paths } = found.get(id)!;
    const license = licenseOf(entry);
    result.set(id, {
      name,
      version,
      paths: [...paths].sort(),
      ...(entry.integrity ? { integrity: entry.integrity } : {}),
      ...(license ? { license } : {}),
      dependsOn: [...(edges.get(id) ?? [])].filter((d) => d !== id).sort(),
    });
  }
  const rootLicense = licenseOf(project);
  return {
    root: {
      name: project.name ?? 'project',
      version: project.version ?? '0.0.0',
      ...(rootLicense ? { license: rootLicense } : {}),
      dependsOn: [...direct].sort(),
    },
    packages: result,
  };
}
