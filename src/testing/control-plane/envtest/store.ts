/**
 * Where envtest binaries live on disk. Ours: `<cache>/envtest/k8s/<version>-<os>-<arch>/`, the
 * layout of setup-envtest's store, under `OPERATOR_RUNTIME_CACHE_DIR` (default
 * `~/.cache/operator-runtime`). setup-envtest's own store is read too, never written: on Linux
 * `$XDG_DATA_HOME/kubebuilder-envtest` (default `~/.local/share/kubebuilder-envtest`), on macOS
 * `~/Library/Application Support/io.kubebuilder.envtest`, on Windows `%LocalAppData%\kubebuilder-envtest`.
 */
import { accessSync, constants, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseStoreFolderName, type EnvtestPlatform } from './platform.js';
import { newestFirst } from './version-selector.js';

/** Which store a version was found in. */
export type EnvtestStoreKind = 'setup-envtest' | 'operator-runtime';

export interface InstalledEnvtest {
  /** `1.30.0` */
  readonly version: string;
  readonly platform: EnvtestPlatform;
  /** The folder holding etcd, kube-apiserver and kubectl. */
  readonly dir: string;
  readonly store: EnvtestStoreKind;
}

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME || homedir();
}

/** operator-runtime's cache root: `OPERATOR_RUNTIME_CACHE_DIR`, else `~/.cache/operator-runtime`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.OPERATOR_RUNTIME_CACHE_DIR || join(home(env), '.cache', 'operator-runtime');
}

/** Our envtest store (setup-envtest's layout: versions under `k8s/`). */
export function envtestStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'envtest');
}

/** setup-envtest's default store folder on this OS (as its `store.DefaultStoreDir`), or undefined when its base is unset. */
export function setupEnvtestStoreDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (platform === 'win32') return env.LocalAppData ? join(env.LocalAppData, 'kubebuilder-envtest') : undefined;
  if (platform === 'darwin') return join(home(env), 'Library', 'Application Support', 'io.kubebuilder.envtest');
  return join(env.XDG_DATA_HOME || join(home(env), '.local', 'share'), 'kubebuilder-envtest');
}

export function isExecutable(path: string | undefined): path is string {
  if (!path) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** True when `dir` holds executable etcd and kube-apiserver. */
export function hasControlPlane(dir: string): boolean {
  return isExecutable(join(dir, 'etcd')) && isExecutable(join(dir, 'kube-apiserver'));
}

function listStore(root: string | undefined, store: EnvtestStoreKind, platform: EnvtestPlatform): InstalledEnvtest[] {
  if (!root) return [];
  let names: string[];
  try {
    names = readdirSync(join(root, 'k8s'));
  } catch {
    return [];
  }
  const out: InstalledEnvtest[] = [];
  for (const name of names) {
    const parsed = parseStoreFolderName(name);
    if (!parsed || parsed.platform.os !== platform.os || parsed.platform.arch !== platform.arch) continue;
    const dir = join(root, 'k8s', name);
    if (hasControlPlane(dir)) out.push({ version: parsed.version, platform: parsed.platform, dir, store });
  }
  return newestFirst(out, (i) => i.version);
}

/** Complete installs for `platform`, setup-envtest's store first, each store newest first. */
export function listInstalledEnvtest(
  platform: EnvtestPlatform,
  env: NodeJS.ProcessEnv = process.env,
): InstalledEnvtest[] {
  return [
    ...listStore(setupEnvtestStoreDir(env), 'setup-envtest', platform),
    ...listStore(envtestStoreDir(env), 'operator-runtime', platform),
  ];
}
