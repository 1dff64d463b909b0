import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OperatorRuntimeError } from '../../core/errors.js';
import { currentPlatform } from './envtest/platform.js';
import {
  cacheRoot,
  envtestStoreDir,
  hasControlPlane,
  isExecutable as executable,
  listInstalledEnvtest,
  setupEnvtestStoreDir,
} from './envtest/store.js';

/** The Kubernetes version scripts/install-control-plane.sh builds from Debian's source and caches. */
export const CONTROL_PLANE_VERSION = '1.20.2';

/**
 * Where binaries were found, in the order they are looked for: `'explicit'` (per-binary variables),
 * the asset folder variables, setup-envtest's store, our envtest cache, our source build, `PATH`.
 */
export type BinariesSource =
  | 'explicit'
  | 'OPERATOR_RUNTIME_ASSETS'
  | 'KUBEBUILDER_ASSETS'
  | 'setup-envtest'
  | 'envtest-cache'
  | 'source-build'
  | 'PATH';

export interface ControlPlaneBinaries {
  readonly etcd: string;
  readonly etcdctl: string | undefined;
  readonly kubeApiserver: string;
  /** Absent from envtest's archives: `TestEnv.start({ controllerManager: true })` then throws {@link ControllerManagerMissingError}. */
  readonly kubeControllerManager: string | undefined;
  /** The folder they came from, when they came from one. */
  readonly dir?: string;
  readonly source?: BinariesSource;
}

export class BinariesNotFoundError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_ENV_BINARIES';
  constructor(message: string) {
    super('ERR_TEST_ENV_BINARIES', message);
  }
}

/**
 * A feature that needs kube-controller-manager (`controllerManager: true`: garbage collection, the
 * namespace, StatefulSet, ReplicaSet and Deployment controllers) was asked for, and the binaries
 * have none, as envtest's downloads have none.
 */
export class ControllerManagerMissingError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_ENV_NO_CONTROLLER_MANAGER';
  constructor(message: string) {
    super('ERR_TEST_ENV_NO_CONTROLLER_MANAGER', message);
  }
}

/** The source-build installer shipped in the package (`scripts/install-control-plane.sh`). */
export function sourceBuildScript(): string {
  // Three levels up from src/testing/control-plane and from dist/testing/control-plane alike.
  return fileURLToPath(new URL('../../../scripts/install-control-plane.sh', import.meta.url));
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/** Folder of the source build (scripts/install-control-plane.sh) under our cache. */
export function defaultAssetsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'control-plane', `v${CONTROL_PLANE_VERSION}`, 'bin');
}

interface Candidate {
  readonly dir: string;
  readonly source: BinariesSource;
}

function candidates(env: NodeJS.ProcessEnv): Candidate[] {
  const out: Candidate[] = [];
  if (env.OPERATOR_RUNTIME_ASSETS) out.push({ dir: env.OPERATOR_RUNTIME_ASSETS, source: 'OPERATOR_RUNTIME_ASSETS' });
  if (env.KUBEBUILDER_ASSETS) out.push({ dir: env.KUBEBUILDER_ASSETS, source: 'KUBEBUILDER_ASSETS' });
  let platform;
  try {
    platform = currentPlatform();
  } catch {
    platform = undefined;
  }
  if (platform) {
    for (const installed of listInstalledEnvtest(platform, env)) {
      out.push({ dir: installed.dir, source: installed.store === 'setup-envtest' ? 'setup-envtest' : 'envtest-cache' });
    }
  }
  out.push({ dir: defaultAssetsDir(env), source: 'source-build' });
  return out;
}

/** The search order, in words: for the not-found message and `operator-runtime testenv use`. */
export function describeSearchOrder(env: NodeJS.ProcessEnv = process.env): string[] {
  const show = (name: string) => (env[name] ? `${name}=${env[name]}` : `${name} (unset)`);
  return [
    `explicit options: TestEnv.start({ binaries }), ${show('OPERATOR_RUNTIME_ETCD')}, ${show('OPERATOR_RUNTIME_KUBE_APISERVER')}`,
    `${show('OPERATOR_RUNTIME_ASSETS')}, ${show('KUBEBUILDER_ASSETS')}`,
    `setup-envtest's store: ${join(setupEnvtestStoreDir(env) ?? '(no data folder)', 'k8s')}`,
    `operator-runtime's cache: ${join(envtestStoreDir(env), 'k8s')} (envtest downloads), ${defaultAssetsDir(env)} (source build)`,
    'PATH',
    "a download from the envtest index (OPERATOR_RUNTIME_ENVTEST_INDEX, or controller-tools' envtest-releases.yaml): operator-runtime testenv use",
    `on Debian as root: the source build, ${sourceBuildScript()}`,
  ];
}

/** The not-found message: what was missing, where it looked, in order, and the fix. */
export function binariesNotFoundMessage(missing: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  return (
    `control-plane binaries not found: ${missing.join(', ')}. Looked, in this order, at:\n` +
    describeSearchOrder(env)
      .map((line, i) => `  ${i + 1}. ${line}`)
      .join('\n') +
    '\nFix: run `npx operator-runtime testenv use` (downloads etcd and kube-apiserver into the cache; OPERATOR_RUNTIME_ENVTEST_INDEX or --index for a mirror, ' +
    `HTTPS_PROXY behind a proxy; on Debian as root without a network it builds them with ${sourceBuildScript()}), ` +
    'or set OPERATOR_RUNTIME_ASSETS (or KUBEBUILDER_ASSETS) to a folder with etcd and kube-apiserver.'
  );
}

export interface ResolveBinariesOptions {
  /** Prefer a folder that also has kube-controller-manager. @defaultValue false */
  readonly controllerManager?: boolean;
}

/**
 * Finds the control-plane binaries on this machine, without downloading, in this order:
 * 1. one variable per binary (`OPERATOR_RUNTIME_ETCD`, `OPERATOR_RUNTIME_KUBE_APISERVER`,
 *    `OPERATOR_RUNTIME_KUBE_CONTROLLER_MANAGER`, `OPERATOR_RUNTIME_ETCDCTL`);
 * 2. a folder: `OPERATOR_RUNTIME_ASSETS`, then envtest's `KUBEBUILDER_ASSETS`;
 * 3. setup-envtest's store (its default folder on this OS), newest version first;
 * 4. our cache: envtest downloads (newest first), then the source build;
 * 5. PATH.
 * etcd, kube-apiserver and kube-controller-manager come from one folder, so their versions agree;
 * with `controllerManager` the first folder holding all three wins. `useEnvtest()` (and
 * `operator-runtime testenv use`) add a download and the Debian source build after these.
 */
export function resolveBinaries(
  env: NodeJS.ProcessEnv = process.env,
  options: ResolveBinariesOptions = {},
): ControlPlaneBinaries {
  const inDir = (dir: string | undefined, name: string): string | undefined =>
    dir && executable(join(dir, name)) ? join(dir, name) : undefined;
  const folders = candidates(env).filter((c) => hasControlPlane(c.dir));
  const withKcm = folders.find((c) => executable(join(c.dir, 'kube-controller-manager')));
  const folder = (options.controllerManager && withKcm) || folders[0];
  const explicitBoth = !!(env.OPERATOR_RUNTIME_ETCD && env.OPERATOR_RUNTIME_KUBE_APISERVER);
  const etcd = env.OPERATOR_RUNTIME_ETCD || inDir(folder?.dir, 'etcd') || onPath('etcd', env);
  const kubeApiserver =
    env.OPERATOR_RUNTIME_KUBE_APISERVER || inDir(folder?.dir, 'kube-apiserver') || onPath('kube-apiserver', env);
  const missing = [!executable(etcd) && 'etcd', !executable(kubeApiserver) && 'kube-apiserver'].filter(
    (m): m is string => !!m,
  );
  if (missing.length > 0) throw new BinariesNotFoundError(binariesNotFoundMessage(missing, env));
  const fromFolder = !explicitBoth && folder !== undefined;
  const kcm =
    env.OPERATOR_RUNTIME_KUBE_CONTROLLER_MANAGER ||
    (fromFolder ? inDir(folder.dir, 'kube-controller-manager') : onPath('kube-controller-manager', env));
  const etcdctl = env.OPERATOR_RUNTIME_ETCDCTL || inDir(folder?.dir, 'etcdctl') || onPath('etcdctl', env);
  return {
    etcd: etcd!,
    kubeApiserver: kubeApiserver!,
    etcdctl: executable(etcdctl) ? etcdctl : undefined,
    kubeControllerManager: executable(kcm) ? kcm : undefined,
    ...(fromFolder
      ? { dir: folder.dir, source: folder.source }
      : { source: explicitBoth ? ('explicit' as const) : ('PATH' as const) }),
  };
}

const versionCache = new Map<string, Promise<string | undefined>>();

/** `1.30.0` from `kube-apiserver --version` (`Kubernetes v1.30.0`), cached per binary; undefined when unreadable. */
export async function kubeApiserverVersion(binary: string): Promise<string | undefined> {
  let version = versionCache.get(binary);
  if (!version) {
    version = new Promise((resolve) => {
      execFile(binary, ['--version'], { timeout: 30_000 }, (_error, stdout) =>
        resolve(/v(\d+\.\d+\.\d+)/.exec(stdout)?.[1]),
      );
    });
    versionCache.set(binary, version);
  }
  return version;
}

/**
 * Flags a kube-apiserver needs by version: below 1.24 `--insecure-port=0` (else it also serves
 * plain HTTP on 8080, which two envs cannot share); 1.24 removed the flag, and envtest's downloads
 * are newer. An unreadable version keeps the flag, as before versions were read.
 */
export async function versionedApiServerFlags(binary: string): Promise<string[]> {
  const version = await kubeApiserverVersion(binary);
  const [major = 0, minor = 0] = (version ?? '1.0.0').split('.').map(Number);
  return major === 1 && minor < 24 ? ['--insecure-port=0'] : [];
}

/**
 * The error `TestEnv.start()` throws when `controllerManager: true` or `simulatePods` is asked for
 * and `binaries` has no kube-controller-manager (envtest's downloads have none).
 */
export function controllerManagerMissing(
  binaries: ControlPlaneBinaries,
  option = 'controllerManager: true',
): ControllerManagerMissingError {
  const where = binaries.dir
    ? `the binaries in ${binaries.dir}${binaries.source ? ` (from ${binaries.source})` : ''}`
    : 'the binaries';
  return new ControllerManagerMissingError(
    `${option} needs kube-controller-manager, and ${where} have none: envtest's downloads carry etcd, kube-apiserver and kubectl only. ` +
      'Without it there is no garbage collection (ownerReferences do not cascade), no namespace deletion, no StatefulSet, ReplicaSet or Deployment controller, ' +
      'and no service-account controller (so no pod can be created, which the pod simulator needs). Fix: set OPERATOR_RUNTIME_KUBE_CONTROLLER_MANAGER, or OPERATOR_RUNTIME_ASSETS to a folder with all three ' +
      `(on Debian as root, ${sourceBuildScript()} builds one), or test without ${option}.`,
  );
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
  const root = join(cacheRoot(env), 'modern-apiserver');
  let versions: string[];
  try {
    versions = readdirSync(root).filter((d) => /^v\d+\.\d+\.\d+$/.test(d));
  } catch {
    return undefined;
  }
  const newestFirst = versions.sort((a, b) => compareVersions(b.slice(1), a.slice(1)));
  return newestFirst
    .map((v) => join(root, v, 'bin'))
    .find((dir) => executable(join(dir, 'apiextensions-apiserver')) && executable(join(dir, 'etcd')));
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
    const why = env.OPERATOR_RUNTIME_MODERN_UNAVAILABLE
      ? ` The installer failed: ${env.OPERATOR_RUNTIME_MODERN_UNAVAILABLE}.`
      : '';
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
