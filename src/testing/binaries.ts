import { accessSync, constants, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { OperatorRuntimeError } from '../core/errors.js';

/** The Kubernetes version scripts/install-control-plane.sh builds and caches. */
export const CONTROL_PLANE_VERSION = '1.20.2';

export interface ControlPlaneBinaries {
  readonly etcd: string;
  readonly etcdctl: string | undefined;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string | undefined;
}

export class BinariesNotFoundError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_ENV_BINARIES';
  constructor(message: string) {
    super('ERR_TEST_ENV_BINARIES', message);
  }
}

function executable(path: string | undefined): path is string {
  if (!path) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/** Default cache folder of the installer (`OPERATOR_RUNTIME_CACHE_DIR` overrides it). */
export function defaultAssetsDir(env: NodeJS.ProcessEnv = process.env): string {
  const root = env.OPERATOR_RUNTIME_CACHE_DIR ?? join(homedir(), '.cache', 'operator-runtime');
  return join(root, 'control-plane', `v${CONTROL_PLANE_VERSION}`, 'bin');
}

/**
 * Finds the control-plane binaries, most explicit first: one env var per binary
 * (`OPERATOR_RUNTIME_ETCD`, `OPERATOR_RUNTIME_KUBE_APISERVER`, `OPERATOR_RUNTIME_KUBE_CONTROLLER_MANAGER`),
 * a folder (`OPERATOR_RUNTIME_ASSETS`, or envtest's `KUBEBUILDER_ASSETS`), the installer's cache,
 * then PATH.
 */
export function resolveBinaries(env: NodeJS.ProcessEnv = process.env): ControlPlaneBinaries {
  const dirs = [env.OPERATOR_RUNTIME_ASSETS, env.KUBEBUILDER_ASSETS, defaultAssetsDir(env)].filter((d): d is string => !!d);
  const find = (explicit: string | undefined, name: string): string | undefined => {
    if (explicit) return explicit;
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (executable(candidate)) return candidate;
    }
    return onPath(name);
  };
  const etcd = find(env.OPERATOR_RUNTIME_ETCD, 'etcd');
  const kubeApiserver = find(env.OPERATOR_RUNTIME_KUBE_APISERVER, 'kube-apiserver');
  const kubeControllerManager = find(env.OPERATOR_RUNTIME_KUBE_CONTROLLER_MANAGER, 'kube-controller-manager');
  const etcdctl = find(env.OPERATOR_RUNTIME_ETCDCTL, 'etcdctl');
  const missing = [
    !executable(etcd) && 'etcd',
    !executable(kubeApiserver) && 'kube-apiserver',
  ].filter(Boolean);
  if (missing.length > 0) {
    throw new BinariesNotFoundError(
      `control-plane binaries not found: ${missing.join(', ')} (looked in ${dirs.join(', ')} and PATH). ` +
        'Run scripts/install-control-plane.sh, or set KUBEBUILDER_ASSETS to a folder with etcd and kube-apiserver.',
    );
  }
  return {
    etcd: etcd!,
    kubeApiserver: kubeApiserver!,
    etcdctl: executable(etcdctl) ? etcdctl : undefined,
    kubeControllerManager: executable(kubeControllerManager) ? kubeControllerManager : undefined,
  };
}

/** The binaries of `TestEnv.start({ server: 'modern' })`, built by scripts/install-modern-apiserver.sh. */
export interface ModernServerBinaries {
  /** The standalone Kubernetes API server for CRDs and custom resources (1.36 at the time of writing). */
  readonly apiextensionsApiserver: string;
  /** etcd 3.5+: watch-list needs its progress notifications (3.4's lack of them breaks it). */
  readonly etcd: string;
  readonly etcdctl: string | undefined;
}

/** Folder of the newest complete build under the installer's cache, or undefined. */
export function defaultModernAssetsDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const root = join(env.OPERATOR_RUNTIME_CACHE_DIR ?? join(homedir(), '.cache', 'operator-runtime'), 'modern-apiserver');
  let versions: string[];
  try {
    versions = readdirSync(root).filter((d) => /^v\d+\.\d+\.\d+$/.test(d));
  } catch {
    return undefined;
  }
  const newestFirst = versions.sort((a, b) => compareVersions(b.slice(1), a.slice(1)));
  return newestFirst.map((v) => join(root, v, 'bin')).find((dir) => executable(join(dir, 'apiextensions-apiserver')) && executable(join(dir, 'etcd')));
}

/**
 * Finds the modern server's binaries: `OPERATOR_RUNTIME_MODERN_ASSETS` (scripts/test.sh sets it
 * from the installer), else the installer's cache. Missing binaries are an error that says why —
 * with the installer's failure when scripts/test.sh recorded one in
 * `OPERATOR_RUNTIME_MODERN_UNAVAILABLE` — so tests that need the server fail rather than skip.
 */
export function resolveModernBinaries(env: NodeJS.ProcessEnv = process.env): ModernServerBinaries {
  const dir = env.OPERATOR_RUNTIME_MODERN_ASSETS || defaultModernAssetsDir(env);
  const server = dir && join(dir, 'apiextensions-apiserver');
  const etcd = dir && join(dir, 'etcd');
  if (!executable(server) || !executable(etcd)) {
    const why = env.OPERATOR_RUNTIME_MODERN_UNAVAILABLE ? ` The installer failed: ${env.OPERATOR_RUNTIME_MODERN_UNAVAILABLE}.` : '';
    throw new BinariesNotFoundError(
      `the modern API server's binaries (apiextensions-apiserver, etcd 3.5) were not found in ${dir ?? 'the installer cache'}.${why} ` +
        'Run scripts/install-modern-apiserver.sh (it prints their folder), or set OPERATOR_RUNTIME_MODERN_ASSETS.',
    );
  }
  const etcdctl = join(dir!, 'etcdctl');
  return { apiextensionsApiserver: server, etcd, etcdctl: executable(etcdctl) ? etcdctl : undefined };
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
