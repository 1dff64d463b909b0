/**
 * envtest binaries on demand, as setup-envtest provides them to Go projects: `installEnvtest`,
 * `listEnvtest`, `useEnvtest`, `cleanupEnvtest` (the `operator-runtime testenv` commands call these).
 * Downloads come from controller-tools' release index (or a mirror: `indexUrl`,
 * `OPERATOR_RUNTIME_ENVTEST_INDEX`) into our store; setup-envtest's own store is read, never written.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import { omitUndefined } from '../../../core/omit-undefined.js';
import {
  BinariesNotFoundError,
  binariesNotFoundMessage,
  resolveBinaries,
  sourceBuildScript,
  type BinariesSource,
} from '../binaries.js';
import { EnvtestError } from './envtest-error.js';
import { displayUrl, proxyAwareAgent } from './http.js';
import { installArchive } from './install-archive.js';
import { currentPlatform, storeFolderName, type EnvtestPlatform } from './platform.js';
import type { ProgressStream } from './progress-bar.js';
import {
  archiveFor,
  DEFAULT_ENVTEST_INDEX_URL,
  fetchReleaseIndex,
  type EnvtestArchive,
  type EnvtestRelease,
} from './release-index.js';
import { envtestStoreDir, listInstalledEnvtest, type InstalledEnvtest } from './store.js';
import { parseVersionSelector } from './version-selector.js';

export interface EnvtestOptions {
  /** A setup-envtest version selector (`1.30.x`, `1.30.0`, `~1.30`, `<1.31`, `latest`). @defaultValue the newest */
  readonly version?: string;
  /** The release index. @defaultValue `OPERATOR_RUNTIME_ENVTEST_INDEX`, else {@link DEFAULT_ENVTEST_INDEX_URL} */
  readonly indexUrl?: string;
  /** Environment to read (asset variables, proxies, HOME, the cache folder). @defaultValue process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** @defaultValue this machine's */
  readonly platform?: EnvtestPlatform;
  /** Where the progress bar and notes go (a bar only on a TTY). @defaultValue process.stderr */
  readonly progress?: ProgressStream;
  readonly signal?: AbortSignal;
}

export interface UseEnvtestOptions extends EnvtestOptions {
  /** Never download: only what is on this machine. @defaultValue false */
  readonly installedOnly?: boolean;
  /**
   * When the index cannot be reached, on Debian as root, build kube-apiserver from Debian's source
   * with the shipped `scripts/install-control-plane.sh` (10-15 minutes the first time). @defaultValue true
   */
  readonly sourceBuild?: boolean;
}

/** What `useEnvtest` found or made. */
export interface UsedEnvtest {
  /** The folder with etcd and kube-apiserver: the value for `KUBEBUILDER_ASSETS` / `OPERATOR_RUNTIME_ASSETS`. */
  readonly dir: string;
  /** Where it came from; `'download'` when this call downloaded it. */
  readonly source: BinariesSource | 'download';
  /** The Kubernetes version, when known from the folder's name. */
  readonly version?: string;
}

export interface EnvtestListing {
  /** On this machine, for the platform: setup-envtest's store first, newest first. */
  readonly installed: readonly InstalledEnvtest[];
  /** In the index for the platform, newest first (empty when the index could not be read). */
  readonly available: readonly EnvtestArchive[];
  /** Why the index could not be read, if it could not. */
  readonly indexError?: EnvtestError;
}

function indexUrlOf(options: EnvtestOptions): string {
  return options.indexUrl || (options.env ?? process.env).OPERATOR_RUNTIME_ENVTEST_INDEX || DEFAULT_ENVTEST_INDEX_URL;
}

async function withAgent<T>(options: EnvtestOptions, fn: (dispatcher: Dispatcher) => Promise<T>): Promise<T> {
  const dispatcher = proxyAwareAgent(options.env ?? process.env);
  try {
    return await fn(dispatcher);
  } finally {
    await dispatcher.close();
  }
}

function pickArchive(
  releases: readonly EnvtestRelease[],
  options: EnvtestOptions,
  platform: EnvtestPlatform,
): EnvtestArchive {
  const selector = parseVersionSelector(options.version);
  const matching = releases.filter((r) => selector.matches(r.version));
  const archive = matching.map((r) => archiveFor(r, platform)).find((a) => a !== undefined);
  if (archive) return archive;
  const known =
    releases
      .slice(0, 8)
      .map((r) => r.version)
      .join(', ') || 'none';
  const why =
    matching.length > 0
      ? `has ${selector.text} but no archive for ${platform.os}-${platform.arch}`
      : `has no version matching ${selector.text}`;
  throw new EnvtestError(
    `the envtest index ${displayUrl(indexUrlOf(options))} ${why} (newest: ${known}). Nothing was downloaded. Fix: pick a listed version (operator-runtime testenv list), or another index (--index, OPERATOR_RUNTIME_ENVTEST_INDEX)`,
  );
}

/**
 * Downloads the newest version matching `version` (default: the newest in the index) into our store,
 * unless a store on this machine already has that exact version; returns it.
 */
export async function installEnvtest(options: EnvtestOptions = {}): Promise<InstalledEnvtest> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? currentPlatform();
  return withAgent(options, async (dispatcher) => {
    const releases = await fetchReleaseIndex(indexUrlOf(options), {
      dispatcher,
      ...omitUndefined({ signal: options.signal }),
    });
    const archive = pickArchive(releases, options, platform);
    const present = listInstalledEnvtest(platform, env).find((i) => i.version === archive.version);
    if (present) return present;
    const dir = await installArchive(archive, {
      storeDir: envtestStoreDir(env),
      dispatcher,
      progress: options.progress ?? process.stderr,
      ...omitUndefined({ signal: options.signal }),
    });
    return { version: archive.version, platform, dir, store: 'operator-runtime' };
  });
}

/** What is installed, and what the index offers (the index's failure is reported, not thrown). */
export async function listEnvtest(
  options: EnvtestOptions & { readonly installedOnly?: boolean } = {},
): Promise<EnvtestListing> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? currentPlatform();
  const selector = parseVersionSelector(options.version);
  const installed = listInstalledEnvtest(platform, env).filter((i) => selector.matches(i.version));
  if (options.installedOnly) return { installed, available: [] };
  try {
    const releases = await withAgent(options, (dispatcher) =>
      fetchReleaseIndex(indexUrlOf(options), { dispatcher, ...omitUndefined({ signal: options.signal }) }),
    );
    const available = releases
      .filter((r) => selector.matches(r.version))
      .map((r) => archiveFor(r, platform))
      .filter((a): a is EnvtestArchive => a !== undefined);
    return { installed, available };
  } catch (error) {
    if (!(error instanceof EnvtestError)) throw error;
    return { installed, available: [], indexError: error };
  }
}

/**
 * Binaries for TestEnv, through the whole resolution order: without `version`, what
 * `resolveBinaries()` finds (explicit variables, `OPERATOR_RUNTIME_ASSETS` / `KUBEBUILDER_ASSETS`,
 * setup-envtest's store, our cache, PATH); with `version`, the newest installed match in
 * setup-envtest's store or ours. Then a download from the index, and when the index cannot be
 * reached, on Debian as root, the source build. Fails with the search order and the fix.
 */
export async function useEnvtest(options: UseEnvtestOptions = {}): Promise<UsedEnvtest> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? currentPlatform();
  if (!options.version) {
    try {
      const found = resolveBinaries(env);
      const dir = found.dir ?? join(found.kubeApiserver, '..');
      return { dir, source: found.source ?? 'explicit', ...versionOfDir(dir, platform) };
    } catch (error) {
      if (!(error instanceof BinariesNotFoundError)) throw error;
    }
  } else {
    const selector = parseVersionSelector(options.version);
    const installed = listInstalledEnvtest(platform, env).find((i) => selector.matches(i.version));
    if (installed)
      return {
        dir: installed.dir,
        source: installed.store === 'setup-envtest' ? 'setup-envtest' : 'envtest-cache',
        version: installed.version,
      };
  }
  if (options.installedOnly) {
    throw new BinariesNotFoundError(
      `${binariesNotFoundMessage(['etcd', 'kube-apiserver'], env)}${options.version ? ` (version ${options.version})` : ''} — and installedOnly forbids the download.`,
    );
  }
  try {
    const installed = await installEnvtest(options);
    return { dir: installed.dir, source: 'download', version: installed.version };
  } catch (error) {
    if (
      !(error instanceof EnvtestError) ||
      !unreachable(error) ||
      options.sourceBuild === false ||
      !canBuildFromSource()
    )
      throw error;
    const progress = options.progress ?? process.stderr;
    progress.write(
      `${error.message}\nBuilding the control plane from Debian's source instead (${sourceBuildScript()}; 10-15 minutes the first time)\n`,
    );
    const dir = await buildFromSource(env, progress, error);
    return { dir, source: 'source-build' };
  }
}

function versionOfDir(dir: string, platform: EnvtestPlatform): { version?: string } {
  const match = /(\d+\.\d+\.\d+)-[a-z0-9]+-[a-z0-9]+\/?$/.exec(dir);
  return match && dir.endsWith(storeFolderName(match[1]!, platform)) ? { version: match[1]! } : {};
}

/** The index or archive could not be reached at all (offline), as opposed to a bad answer. */
function unreachable(error: EnvtestError): boolean {
  return /cannot read the envtest index|the request was refused/.test(error.message);
}

function canBuildFromSource(): boolean {
  return (
    process.platform === 'linux' &&
    process.getuid?.() === 0 &&
    existsSync('/etc/debian_version') &&
    existsSync(sourceBuildScript())
  );
}

function buildFromSource(
  env: NodeJS.ProcessEnv,
  progress: ProgressStream,
  downloadError: EnvtestError,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('bash', [sourceBuildScript()], { env, maxBuffer: 16 << 20 }, (error, stdout) => {
      const dir = stdout.trim().split('\n').pop();
      if (error || !dir)
        reject(
          new EnvtestError(
            `the source build (${sourceBuildScript()}) failed after the download failed: ${error?.message ?? 'it printed no folder'}`,
            { cause: downloadError },
          ),
        );
      else resolve(dir);
    });
    child.stderr?.on('data', (chunk: Buffer) => progress.write(chunk.toString()));
  });
}

/** Removes versions matching `version` (default: all) from our store, never setup-envtest's; returns their folders. */
export async function cleanupEnvtest(
  options: Pick<EnvtestOptions, 'version' | 'env' | 'platform'> = {},
): Promise<string[]> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? currentPlatform();
  const selector = parseVersionSelector(options.version);
  const removed: string[] = [];
  for (const item of listInstalledEnvtest(platform, env)) {
    if (item.store !== 'operator-runtime' || !selector.matches(item.version)) continue;
    await rm(item.dir, { recursive: true, force: true });
    removed.push(item.dir);
  }
  return removed;
}
