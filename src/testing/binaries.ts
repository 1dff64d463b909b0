import { accessSync, constants } from 'node:fs';
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
