import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, request, type Dispatcher } from 'undici';
import { omitUndefined } from '../../core/omit-undefined.js';
import { adminRequest } from './admin-request.js';
import { stringify as toYaml } from 'yaml';
import { OperatorRuntimeError } from '../../core/errors.js';
import {
  controllerManagerMissing,
  resolveBinaries,
  resolveModernBinaries,
  versionedApiServerFlags,
  type ControlPlaneBinaries,
  type ModernServerBinaries,
} from './binaries.js';
import { DEFAULT_ETCD_MEMBERS, EtcdCluster } from './etcd-cluster.js';
import {
  ExistingCluster,
  TestEnvUnavailableError,
  existingClusterOption,
  type ExistingClusterOptions,
} from './existing-cluster.js';
import { removeStaleChaosRules } from './iptables.js';
import { freePort } from './free-port.js';
import { ManagedProcess } from './managed-process.js';
import { isPortClash } from './port-clash.js';
import { ClientCa, randomToken, writeServiceAccountKeyPair } from './pki.js';
import { PodSimulator } from './pod-simulator.js';
import { KubeClient } from '../../client/kube-client.js';
import type { Kubeconfig } from '../../client/kubeconfig.js';

const run = promisify(execFile);

/** `'kube-apiserver'` is the API server the env's clients talk to (the modern one with `server: 'modern'`). */
export type ControlPlaneComponent = 'etcd' | 'kube-apiserver' | 'kube-controller-manager';

/**
 * `'kube-apiserver'`: the full control plane, Kubernetes 1.20 (core kinds, RBAC, controllers).
 * `'modern'`: a current CRD-only API server (see {@link TestEnvOptions.server}).
 */
export type TestEnvServer = 'kube-apiserver' | 'modern';

/** Admission plugins of the standalone server that need core-server APIs 1.20 lacks (or namespaces it cannot see). */
const MODERN_DISABLED_ADMISSION =
  'NamespaceLifecycle,MutatingAdmissionPolicy,MutatingAdmissionWebhook,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook';

export interface TestEnvOptions {
  /** CustomResourceDefinition manifests to install; `start` waits until each is Established. */
  readonly crds?: readonly object[];
  /**
   * Also run kube-controller-manager (garbage collector, namespace, service-account, StatefulSet,
   * ReplicaSet and Deployment controllers) so ownerReferences cascade as in a cluster.
   * @defaultValue false
   */
  readonly controllerManager?: boolean;
  /** Aborting it while `start` runs stops whatever was started and rejects. */
  readonly signal?: AbortSignal;
  /** How long each component may take to become ready. @defaultValue {@link DEFAULT_START_TIMEOUT_MS} */
  readonly startTimeoutMs?: number;
  /**
   * kube-apiserver's watch cache, on as in every cluster. With it on, watches and `resourceVersion=0`
   * lists are served from the API server's memory, so an etcd compaction alone does not make a
   * watch from an older resourceVersion fail; the window of the cache does (410 once the
   * resourceVersion falls out of it). Turn it off to have watches hit etcd, where `compact()`
   * makes every older resourceVersion answer 410 Gone.
   * @defaultValue true
   */
  readonly watchCache?: boolean;
  /**
   * Play scheduler and kubelet (see `PodSimulator`): a Ready fake Node, pods bound to it and marked
   * Ready after `readyDelayMs`. Use with `controllerManager: true` for StatefulSets and Deployments.
   * @defaultValue false
   */
  readonly simulatePods?: boolean | { readonly readyDelayMs?: number };
  /** Extra kube-apiserver flags, appended last (they win over the defaults). */
  readonly apiServerFlags?: readonly string[];
  /** Binaries to run; found with `resolveBinaries()` when omitted. */
  readonly binaries?: ControlPlaneBinaries;
  /**
   * 3 runs an etcd cluster for chaos tests: member i on 127.0.0.1i as system user `orchaos-etcd<i>`
   * (created when missing; needs root and iptables), kube-apiserver pointed at all three; the member
   * faults come from `etcdFaults(env)` in `operator-runtime/testing/chaos`.
   * @defaultValue {@link DEFAULT_ETCD_MEMBERS}
   */
  readonly etcdMembers?: 1 | 3;
  /**
   * `'modern'` runs the current Kubernetes API server for CRDs and custom resources (1.36, built by
   * scripts/install-modern-apiserver.sh) on etcd 3.5: CEL validation, field validation with
   * warnings, watch-list, current server-side apply. It serves no core kinds (no Namespace,
   * ConfigMap, Lease, RBAC…): clients asking for one get "does not serve this group-version".
   * Authentication and authorization are delegated to a 1.20 kube-apiserver started beside it
   * (`authDelegate`), so the admin token, `userKubeconfig` users and RBAC objects created there
   * apply as usual. Not combinable with `controllerManager`, `simulatePods` or `etcdMembers: 3`.
   * @defaultValue 'kube-apiserver'
   */
  readonly server?: TestEnvServer;
  /**
   * Feature gates of the env's API server, e.g. `{ ShardedListAndWatch: true }` (alpha in 1.36;
   * list and watch then honour `shardSelector`).
   */
  readonly featureGates?: Readonly<Record<string, boolean>>;
  /** Binaries for `server: 'modern'`; found with `resolveModernBinaries()` when omitted. */
  readonly modernBinaries?: ModernServerBinaries;
  /**
   * Enable kube-apiserver's OwnerReferencesPermissionEnforcement admission plugin (as OpenShift and
   * hardened clusters do): setting `blockOwnerDeletion` on an ownerReference (which
   * `setControllerReference` does) then needs `update` on the owner's `<kind>/finalizers`, so an
   * RBAC test fails without that rule, as the cluster would. Only with the default server.
   * @defaultValue false
   */
  readonly ownerReferencesPermissionEnforcement?: boolean;
  /**
   * Run against a cluster that is already there (kind, k3d, a dev cluster) instead of starting
   * one, as envtest's USE_EXISTING_CLUSTER: `true` uses `KUBECONFIG` (else ~/.kube/config) and its
   * current context; an object names the file and context. Also turned on for every TestEnv by
   * the environment variable `OPERATOR_RUNTIME_USE_EXISTING_CLUSTER=true`; `false` here wins over it.
   * `crds` are installed (labelled) and removed by `stop()`, as are namespaces from
   * `createNamespace()`. The options that shape a control plane this env would start
   * (`controllerManager`, `simulatePods`, `apiServerFlags`, `featureGates`, `watchCache`,
   * `etcdMembers`, `server`, `binaries`, `ownerReferencesPermissionEnforcement`) are ignored: the
   * cluster is what it is. Fault hooks and etcd access throw `TestEnvUnavailableError`.
   * @defaultValue false, unless the environment variable is set
   */
  readonly existingCluster?: boolean | ExistingClusterOptions;
}

export const DEFAULT_START_TIMEOUT_MS = 60_000;

/**
 * The admin's kubeconfig as an object (the same content as the file at `kubeconfigPath`). A type
 * alias, so it passes as the client's `Kubeconfig`: `KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig })`.
 */
export type KubeconfigObject = {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
  'current-context': string;
};

export class TestEnvError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_ENV';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_TEST_ENV', message, options);
  }
}

const DIR_PREFIX = 'operator-runtime-env-';

/** Starts tried when a component could not bind the port it was given (see {@link TestEnv.start}). */
const PORT_CLASH_ATTEMPTS = 3;

const CONTEXT = 'test-env';

/** On the CRDs and namespaces a TestEnv creates in an existing cluster; its value is the env's id. */
export const TEST_ENV_LABEL = 'operator-runtime.dev/test-env';

/** On a CRD a TestEnv installed in an existing cluster: the envs using it (`<host>:<id>,…`). */
const TEST_ENV_USERS_ANNOTATION = 'operator-runtime.dev/test-env-users';

/** A control plane this env started: its processes, ports and keys. */
interface LocalControlPlane {
  readonly binaries: ControlPlaneBinaries;
  readonly modernBinaries: ModernServerBinaries | undefined;
  readonly ports: { apiserver: number; kcm: number; core: number };
  readonly etcd: EtcdCluster;
  readonly processes: {
    apiserver: ManagedProcess;
    kcm: ManagedProcess | undefined;
    authDelegate: ManagedProcess | undefined;
  };
  readonly clientCa: ClientCa;
}

/**
 * A real local control plane for tests — envtest for TypeScript: etcd, kube-apiserver (secure port
 * only, RBAC, static admin token, client-certificate users, service-account signing) and optionally
 * kube-controller-manager, each on free ports in a temp dir, so several TestEnvs can run at once.
 * Nothing is mocked: tests talk to the same API server a cluster runs.
 */
export class TestEnv {
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly kubeconfig: KubeconfigObject;
  /** PEM the API server's serving certificate verifies against. */
  caPem = '';
  /** Tags this env's iptables rules (`operator-runtime-chaos-<id>`), and its objects in an existing cluster. */
  readonly id: string;
  /** Which API server clients of this env talk to; `'existing'` with `existingCluster`. */
  readonly serverKind: TestEnvServer | 'existing';
  /** True when this env runs against a cluster it did not start (`existingCluster`). */
  readonly existingCluster: boolean;
  /**
   * With `server: 'modern'`: the 1.20 kube-apiserver that authenticates and authorizes its requests
   * (tokens, RBAC). Create Roles and RoleBindings for `userKubeconfig` users here. Undefined otherwise.
   */
  authDelegate:
    { readonly server: string; readonly kubeconfigPath: string; readonly kubeconfig: KubeconfigObject } | undefined;

  private dispatcher: Agent;
  private simulator: { stop: AbortController; run: Promise<void>; client: KubeClient } | undefined;
  private stopped = false;
  /** In an existing cluster: what this env created there, removed by `stop()`. */
  private readonly created = { crds: new Set<string>(), namespaces: new Set<string>() };
  private readonly token: string | undefined;

  private constructor(
    readonly dir: string,
    private readonly plane: LocalControlPlane | undefined,
    private readonly existing: ExistingCluster | undefined,
    adminToken: string | undefined,
    private readonly startTimeoutMs: number,
  ) {
    this.server = existing ? existing.config.server : `https://127.0.0.1:${plane!.ports.apiserver}`;
    this.id = envId(dir);
    this.serverKind = existing ? 'existing' : plane!.modernBinaries ? 'modern' : 'kube-apiserver';
    this.existingCluster = existing !== undefined;
    this.authDelegate = undefined;
    this.token = adminToken;
    this.kubeconfigPath = join(dir, 'kubeconfig.yaml');
    if (existing) {
      this.caPem = existing.caPem;
      this.kubeconfig = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: existing.kubeconfig.clusters,
        users: existing.kubeconfig.users,
        contexts: [{ name: CONTEXT, context: { ...existing.kubeconfig.context, namespace: 'default' } }],
        'current-context': CONTEXT,
      };
    } else {
      this.kubeconfig = this.kubeconfigFor('admin', { token: adminToken });
    }
    this.dispatcher = new Agent({ connect: { rejectUnauthorized: true } });
  }

  /**
   * The admin's bearer token. Against an existing cluster: the kubeconfig context's static token;
   * `TestEnvUnavailableError` when it authenticates otherwise (client certificate, exec plugin).
   */
  get adminToken(): string {
    if (this.token === undefined)
      throw new TestEnvUnavailableError(
        'adminToken',
        "the kubeconfig's context has no static token (use env.kubeconfig or env.request())",
      );
    return this.token;
  }

  /** The first etcd member's client URL (the only one unless `etcdMembers: 3`). */
  get etcdEndpoint(): string {
    return this.local('etcdEndpoint').etcd.endpoints[0]!;
  }

  /** Every etcd member's client URL, member 1 first. */
  get etcdEndpoints(): readonly string[] {
    return this.local('etcdEndpoints').etcd.endpoints;
  }

  /**
   * Cleans up after test processes that died without `stop()` (SIGKILL): their components died
   * with them (parent-death signal), but their temp dirs and, with `iptables: true`, their
   * iptables rules remain. `start` calls it; call it yourself after killing a test process.
   */
  static async removeStale(options: { readonly iptables?: boolean } = {}): Promise<void> {
    await removeStaleDirs();
    if (options.iptables) {
      // A rule outlives its env only if the test process was killed mid-fault; its dir is gone now.
      // Only ids shaped like an env's (mkdtemp's six characters): other owners' rules are not ours to judge.
      await removeStaleChaosRules(
        (id) => /^[A-Za-z0-9]{6}$/.test(id) && !existsSync(join(tmpdir(), `${DIR_PREFIX}${id}`)),
      );
    }
  }

  /**
   * Starts etcd, kube-apiserver and optionally kube-controller-manager (or, with `server: 'modern'`,
   * etcd 3.5, the 1.20 kube-apiserver it delegates to and the modern API server), then installs `crds`.
   */
  static async start(options: TestEnvOptions = {}): Promise<TestEnv> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await TestEnv.startOnce(options);
      } catch (err) {
        // freePort() releases a port before etcd or the API server binds it, so a test file running
        // beside this one can take it in between; a failed start cleans up, and a new one picks new ports.
        if (attempt >= PORT_CLASH_ATTEMPTS || !isPortClash(err) || options.signal?.aborted) throw err;
      }
    }
  }

  private static async startOnce(options: TestEnvOptions): Promise<TestEnv> {
    const existing = existingClusterOption(options.existingCluster);
    if (existing) return TestEnv.connect(existing, options);
    const modern = options.server === 'modern';
    if (modern) {
      for (const [option, set] of [
        ['controllerManager', options.controllerManager],
        ['simulatePods', options.simulatePods],
        ['etcdMembers: 3', (options.etcdMembers ?? DEFAULT_ETCD_MEMBERS) > 1],
      ] as const) {
        if (set)
          throw new TestEnvError(
            `server: 'modern' serves custom resources only (no core kinds), so ${option} is not available with it; use the default server`,
          );
      }
      if (options.ownerReferencesPermissionEnforcement)
        throw new TestEnvError(
          "ownerReferencesPermissionEnforcement is an admission plugin of kube-apiserver, which server: 'modern' does not run; use the default server",
        );
    }
    await TestEnv.removeStale({ iptables: (options.etcdMembers ?? DEFAULT_ETCD_MEMBERS) > 1 });
    const binaries =
      options.binaries ??
      resolveBinaries(process.env, { controllerManager: !!(options.controllerManager || options.simulatePods) });
    const modernBinaries = modern ? (options.modernBinaries ?? resolveModernBinaries()) : undefined;
    if (!binaries.kubeControllerManager) {
      if (options.controllerManager) throw controllerManagerMissing(binaries);
      if (options.simulatePods) throw controllerManagerMissing(binaries, 'simulatePods');
    }
    const versionedFlags = await versionedApiServerFlags(binaries.kubeApiserver);
    const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
    await writeFile(join(dir, 'owner.pid'), String(process.pid));
    let env: TestEnv | undefined;
    const onAbort = (): void => void env?.stop();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const etcdCluster = await EtcdCluster.create({
        etcdBinary: modernBinaries?.etcd ?? binaries.etcd,
        dir,
        members: options.etcdMembers ?? DEFAULT_ETCD_MEMBERS,
        id: envId(dir),
        startTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
      });
      const ports = { apiserver: await freePort(), kcm: await freePort(), core: modern ? await freePort() : 0 };
      const certDir = join(dir, 'pki');
      await mkdir(certDir);
      const sa = await writeServiceAccountKeyPair(certDir);
      const clientCa = await ClientCa.create(certDir);
      const adminToken = randomToken();
      await writeFile(join(certDir, 'tokens.csv'), `${adminToken},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });
      const featureGates = Object.entries(options.featureGates ?? {});

      const kubeApiserver = new ManagedProcess({
        name: 'kube-apiserver',
        command: binaries.kubeApiserver,
        logFile: join(dir, 'kube-apiserver.log'),
        args: [
          `--etcd-servers=${etcdCluster.endpoints.join(',')}`,
          `--secure-port=${modern ? ports.core : ports.apiserver}`,
          '--bind-address=127.0.0.1',
          '--advertise-address=127.0.0.1',
          ...versionedFlags,
          `--cert-dir=${join(certDir, modern ? 'core-serving' : 'serving')}`,
          `--token-auth-file=${join(certDir, 'tokens.csv')}`,
          `--client-ca-file=${clientCa.certFile}`,
          '--authorization-mode=RBAC',
          '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
          `--service-account-key-file=${sa.publicKeyFile}`,
          `--service-account-signing-key-file=${sa.privateKeyFile}`,
          '--service-cluster-ip-range=10.0.0.0/24',
          '--allow-privileged=true',
          '--endpoint-reconciler-type=none',
          `--watch-cache=${options.watchCache ?? true}`,
          ...(!modern && featureGates.length
            ? [`--feature-gates=${featureGates.map(([k, v]) => `${k}=${v}`).join(',')}`]
            : []),
          // Added to the default plugins (1.20 enables the recommended set besides those named here).
          ...(!modern && options.ownerReferencesPermissionEnforcement
            ? ['--enable-admission-plugins=OwnerReferencesPermissionEnforcement']
            : []),
          ...(modern ? [] : (options.apiServerFlags ?? [])),
        ],
      });
      const coreKubeconfigPath = join(dir, 'auth-delegate-kubeconfig.yaml');
      const modernApiserver = modernBinaries
        ? new ManagedProcess({
            name: 'apiextensions-apiserver',
            command: modernBinaries.apiextensionsApiserver,
            logFile: join(dir, 'apiextensions-apiserver.log'),
            args: [
              `--etcd-servers=${etcdCluster.endpoints.join(',')}`,
              `--secure-port=${ports.apiserver}`,
              '--bind-address=127.0.0.1',
              `--cert-dir=${join(certDir, 'serving')}`,
              // Tokens and RBAC are the 1.20 server's (TokenReview, SubjectAccessReview); client
              // certificates are checked here against the same CA.
              `--kubeconfig=${coreKubeconfigPath}`,
              `--authentication-kubeconfig=${coreKubeconfigPath}`,
              `--authorization-kubeconfig=${coreKubeconfigPath}`,
              '--authentication-skip-lookup',
              `--client-ca-file=${clientCa.certFile}`,
              // A denial is not cached, so a test that grants RBAC sees it at once (as with 1.20).
              '--authorization-webhook-cache-unauthorized-ttl=0s',
              // Otherwise it waits for flowcontrol.apiserver.k8s.io/v1 from the core server, which 1.20 lacks.
              '--enable-priority-and-fairness=false',
              `--disable-admission-plugins=${MODERN_DISABLED_ADMISSION}`,
              `--watch-cache=${options.watchCache ?? true}`,
              ...(featureGates.length
                ? [`--feature-gates=${featureGates.map(([k, v]) => `kube:${k}=${v}`).join(',')}`]
                : []),
              ...(options.apiServerFlags ?? []),
            ],
          })
        : undefined;
      const kcm = options.controllerManager
        ? new ManagedProcess({
            name: 'kube-controller-manager',
            command: binaries.kubeControllerManager!,
            logFile: join(dir, 'kube-controller-manager.log'),
            args: [
              `--kubeconfig=${join(dir, 'kubeconfig.yaml')}`,
              '--controllers=garbagecollector,namespace,serviceaccount,serviceaccount-token,statefulset,replicaset,deployment',
              `--service-account-private-key-file=${sa.privateKeyFile}`,
              `--root-ca-file=${join(certDir, 'serving', 'apiserver.crt')}`,
              '--leader-elect=false',
              '--port=0',
              `--secure-port=${ports.kcm}`,
              '--bind-address=127.0.0.1',
              '--concurrent-gc-syncs=5',
            ],
          })
        : undefined;

      const processes = modernApiserver
        ? { apiserver: modernApiserver, kcm, authDelegate: kubeApiserver }
        : { apiserver: kubeApiserver, kcm, authDelegate: undefined };
      env = new TestEnv(
        dir,
        { binaries, modernBinaries, ports, etcd: etcdCluster, processes, clientCa },
        undefined,
        adminToken,
        options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
      );
      await etcdCluster.start();
      if (modern) await env.startAuthDelegate(coreKubeconfigPath);
      await env.startApiServer();
      await writeFile(env.kubeconfigPath, toYaml(env.kubeconfig), { mode: 0o600 });
      // CRDs before kube-controller-manager: its garbage collector discovers resources when it starts
      // and then only every 30 s, so a CRD established after that start left owned objects of its
      // kind uncollected for up to 30 s (a loaded fresh clone timed out waiting for a StatefulSet).
      if (options.crds?.length) await env.installCrds(options.crds);
      if (kcm) await env.startControllerManager();
      if (options.simulatePods) await env.startPodSimulator(options.simulatePods === true ? {} : options.simulatePods);
      if (options.signal?.aborted) throw new TestEnvError('TestEnv.start aborted');
      return env;
    } catch (err) {
      await (env ? env.stop() : rm(dir, { recursive: true, force: true }));
      throw err;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Connects to an existing cluster (see {@link TestEnvOptions.existingCluster}), checks it answers
   * and installs `crds`. Nothing is started: `stop()` removes what this env created there.
   */
  private static async connect(target: ExistingClusterOptions, options: TestEnvOptions): Promise<TestEnv> {
    const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
    await writeFile(join(dir, 'owner.pid'), String(process.pid));
    let cluster: ExistingCluster | undefined;
    let env: TestEnv | undefined;
    try {
      cluster = await ExistingCluster.connect(target);
      env = new TestEnv(dir, undefined, cluster, cluster.token, options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
      await writeFile(env.kubeconfigPath, toYaml(env.kubeconfig), { mode: 0o600 });
      const ready = await env
        .request('GET', '/readyz')
        .catch((error: unknown) => ({ status: 0, body: (error as Error).message }));
      // /readyz may be forbidden to a namespaced user; /version answers any authenticated one.
      if (ready.status !== 200 && (await env.request('GET', '/version')).status !== 200) {
        throw new TestEnvError(
          `the existing cluster at ${env.server} does not answer /readyz (${ready.status} ${JSON.stringify(ready.body).slice(0, 200)})`,
        );
      }
      if (options.crds?.length) await env.installCrds(options.crds);
      if (options.signal?.aborted) throw new TestEnvError('TestEnv.start aborted');
      return env;
    } catch (err) {
      if (env) await env.stop();
      else {
        await cluster?.close();
        await rm(dir, { recursive: true, force: true });
      }
      throw err;
    }
  }

  /** Pids of the component processes now running (for leak checks); none against an existing cluster. */
  pids(): number[] {
    if (!this.plane) return [];
    return [
      ...this.plane.etcd.pids(),
      ...this.allProcesses()
        .filter((p) => p.running)
        .map((p) => p.pid!),
    ];
  }

  /**
   * Creates a namespace of its own for one test (`<prefix>-<random>`, labelled with this env's id)
   * and returns its name. Against an existing cluster `stop()` deletes it, with everything in it;
   * a started control plane goes away whole.
   */
  async createNamespace(prefix = 'test'): Promise<string> {
    const name = `${prefix}-${randomBytes(4).toString('hex')}`;
    const res = await this.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { [TEST_ENV_LABEL]: this.id } },
    });
    if (res.status !== 201)
      throw new TestEnvError(`creating namespace ${name} failed: ${res.status} ${JSON.stringify(res.body)}`);
    if (this.existing) this.created.namespaces.add(name);
    return name;
  }

  /**
   * Ends every process this env started and removes its temp dir. Against an existing cluster:
   * deletes the namespaces and CRDs it created and waits (up to the start timeout) until they are
   * gone. Safe to call twice.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.existing) {
      try {
        await this.removeCreated();
      } finally {
        await this.existing.close();
        await this.dispatcher.close();
        await rm(this.dir, { recursive: true, force: true });
      }
      return;
    }
    const plane = this.plane!;
    if (this.simulator) {
      this.simulator.stop.abort();
      await this.simulator.run.catch(() => {});
      await this.simulator.client.close();
    }
    try {
      // Reverse start order: clients of etcd first. Every fault is undone on the way: stop()
      // resumes paused processes, the cluster heals its partitions before it stops.
      if (plane.processes.kcm) await plane.processes.kcm.stop();
      await plane.processes.apiserver.stop();
      if (plane.processes.authDelegate) await plane.processes.authDelegate.stop();
      await plane.etcd.stop();
    } finally {
      await this.dispatcher.close();
      await rm(this.dir, { recursive: true, force: true });
    }
  }

  // ---- faults --------------------------------------------------------------------------------

  /**
   * SIGSTOP a component (a frozen process: connections stay open, nothing answers). `etcd` means
   * every member; see `pauseEtcdMember` for one.
   */
  pause(component: ControlPlaneComponent): void {
    if (component === 'etcd') this.local('pause()').etcd.pause();
    else this.process(component, 'pause()').pause();
  }

  resume(component: ControlPlaneComponent): void {
    if (component === 'etcd') this.local('resume()').etcd.resume();
    else this.process(component, 'resume()').resume();
  }

  /** Number of etcd members (1 or 3). */
  get etcdMembers(): number {
    return this.local('etcdMembers').etcd.members.length;
  }

  /**
   * @internal The etcd members, for `etcdFaults(env)` in `operator-runtime/testing/chaos`: member
   * faults (partitions need root and iptables) are not part of the env users write tests against.
   */
  get etcdCluster(): EtcdCluster {
    return this.local('etcdCluster').etcd;
  }

  /** Stops and starts kube-apiserver on the same port; etcd keeps its data. Resolves when ready. */
  async restartApiServer(): Promise<void> {
    await this.local('restartApiServer()').processes.apiserver.stop();
    await this.startApiServer();
  }

  /** Runs etcdctl (API v3) against this env's etcd and returns its stdout. */
  async etcdctl(args: readonly string[]): Promise<string> {
    const plane = this.local('etcdctl()');
    const etcdctl = plane.modernBinaries?.etcdctl ?? plane.binaries.etcdctl;
    if (!etcdctl) throw new TestEnvError('etcdctl not found (Debian package etcd-client, or OPERATOR_RUNTIME_ETCDCTL)');
    const { stdout } = await run(etcdctl, [`--endpoints=${this.etcdEndpoints.join(',')}`, ...args], {
      env: { ...process.env, ETCDCTL_API: '3' },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }

  /** etcd's current revision (the highest any member reports). */
  async etcdRevision(): Promise<number> {
    return this.local('etcdRevision()').etcd.revision();
  }

  /**
   * Compacts etcd at its current revision R: reads from etcd at a revision below R, and watches
   * whose first event would be below R (resourceVersion < R - 1), get 410 Gone. With the watch cache
   * on, watches are served from the API server's memory and only fail once their resourceVersion is
   * older than the cache (for example after `restartApiServer()`). Returns R.
   */
  async compact(): Promise<number> {
    const etcd = this.local('compact()').etcd;
    const revision = await etcd.revision();
    await etcd.compact(revision);
    return revision;
  }

  // ---- users ---------------------------------------------------------------------------------

  /**
   * A kubeconfig for a user authenticated by a client certificate (CN=user, O=groups). The user has
   * no rights until RBAC objects grant them — for least-privilege tests.
   */
  async userKubeconfig(user: {
    user: string;
    groups?: readonly string[];
  }): Promise<{ path: string; kubeconfig: KubeconfigObject }> {
    const { certPem, keyPem } = await this.local('userKubeconfig()').clientCa.issue(user.user, user.groups);
    const kubeconfig = this.kubeconfigFor(user.user, {
      'client-certificate-data': Buffer.from(certPem).toString('base64'),
      'client-key-data': Buffer.from(keyPem).toString('base64'),
    });
    const path = join(this.dir, `kubeconfig-${user.user.replace(/[^a-zA-Z0-9_.-]/g, '_')}.yaml`);
    await writeFile(path, toYaml(kubeconfig), { mode: 0o600 });
    return { path, kubeconfig };
  }

  // ---- admin requests (for the env itself and for tests that need a raw call) ------------------

  /** One admin request to the API server; returns status and parsed JSON body (or text). */
  async request<T = unknown>(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: T }> {
    if (this.existing) return this.existing.request<T>(method, path, body, headers);
    return adminRequest<T>(
      this.server,
      this.dispatcher,
      { authorization: `Bearer ${this.adminToken}` },
      method,
      path,
      body,
      headers,
    );
  }

  /**
   * Creates (or replaces the spec of) CRDs and waits until each is Established and served. With
   * `controllerManager`, prefer `start({ crds })`: kube-controller-manager's garbage collector
   * rediscovers resources only every 30 s, so owned objects of a kind installed later may wait that
   * long to be collected.
   */
  async installCrds(crds: readonly object[]): Promise<void> {
    for (const crd of crds) {
      const name = (crd as { metadata?: { name?: string } }).metadata?.name;
      if (!name) throw new TestEnvError('CRD manifest without metadata.name');
      if (this.existing) {
        await this.installCrdInExistingCluster(name, crd);
        continue;
      }
      const res = await this.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
      if (res.status !== 201 && res.status !== 409) {
        throw new TestEnvError(`installing CRD ${name} failed: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    for (const crd of crds) await this.waitForCrd(crd as CrdManifest);
  }

  // ---- internals -------------------------------------------------------------------------------

  /**
   * Creates a CRD in an existing cluster, labelled as a TestEnv's, with this env among its users
   * (an annotation); `stop()` removes this env from the users and deletes the CRD once none is left,
   * so test files running at once against one cluster share a CRD without pulling it from under
   * each other. A CRD of that name without the label is the user's: used as it is, never removed.
   * Users whose test process died on this machine (their temp dir is gone) are dropped; if none is
   * left the CRD is replaced with this env's manifest.
   */
  private async installCrdInExistingCluster(name: string, crd: object): Promise<void> {
    const manifest = crd as { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } };
    const path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const fresh = {
      ...crd,
      metadata: {
        ...manifest.metadata,
        labels: { ...manifest.metadata.labels, [TEST_ENV_LABEL]: this.id },
        annotations: { ...manifest.metadata.annotations, [TEST_ENV_USERS_ANNOTATION]: this.userEntry() },
      },
    };
    const res = await this.request('POST', path, fresh);
    if (res.status === 201) {
      this.created.crds.add(name);
      return;
    }
    if (res.status !== 409)
      throw new TestEnvError(`installing CRD ${name} failed: ${res.status} ${JSON.stringify(res.body)}`);
    const joined = await this.updateCrdUsers(
      name,
      (users) => (users.length ? [...users, this.userEntry()] : undefined),
      fresh,
    );
    if (joined) this.created.crds.add(name);
  }

  /**
   * Read-modify-write of a TestEnv CRD's users (retried on conflict). `change` gets the live users
   * and returns the new list, or undefined when none is left alive (then `replacement` is written,
   * when given). Resolves false when the CRD is not a TestEnv's (or gone); `'empty'` when no user is left.
   */
  private async updateCrdUsers(
    name: string,
    change: (users: string[]) => string[] | undefined,
    replacement?: object,
  ): Promise<boolean | 'empty'> {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
    for (let attempt = 0; attempt < 10; attempt++) {
      const current = await this.request<{
        metadata?: { resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
      }>('GET', path);
      if (current.status === 404) return false;
      if (current.status !== 200)
        throw new TestEnvError(`reading CRD ${name} failed: ${current.status} ${JSON.stringify(current.body)}`);
      const metadata = current.body.metadata ?? {};
      if (metadata.labels?.[TEST_ENV_LABEL] === undefined) return false;
      const alive = (metadata.annotations?.[TEST_ENV_USERS_ANNOTATION] ?? '')
        .split(',')
        .filter((u) => u && userAlive(u));
      const next = change(alive);
      if (next === undefined && !replacement) return 'empty';
      const body =
        next === undefined
          ? {
              ...replacement,
              metadata: {
                ...(replacement as { metadata: object }).metadata,
                resourceVersion: metadata.resourceVersion,
              },
            }
          : {
              ...(current.body as object),
              metadata: {
                ...metadata,
                annotations: { ...metadata.annotations, [TEST_ENV_USERS_ANNOTATION]: next.join(',') },
              },
            };
      const written = await this.request('PUT', path, body);
      if (written.status === 200) return next === undefined || next.length > 0 ? true : 'empty';
      if (written.status !== 409)
        throw new TestEnvError(`updating CRD ${name} failed: ${written.status} ${JSON.stringify(written.body)}`);
    }
    throw new TestEnvError(`updating CRD ${name}: too many conflicting writes`);
  }

  /** This env as a CRD user: `<host>:<id>`, so only envs of this machine are judged dead by their temp dir. */
  private userEntry(): string {
    return `${hostname()}:${this.id}`;
  }

  private async waitForCrd(crd: CrdManifest): Promise<void> {
    const name = crd.metadata.name;
    await this.poll(`CRD ${name} to be Established`, undefined, async () => {
      const res = await this.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      );
      return (
        res.status === 200 &&
        !!res.body.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')
      );
    });
    // Established can precede discovery by a moment; wait until the resource is served.
    const group = crd.spec.group;
    const version = crd.spec.versions.find((v) => v.served !== false)?.name ?? crd.spec.versions[0]?.name;
    const plural = crd.spec.names.plural;
    await this.poll(`CRD ${name} to be served`, undefined, async () => {
      const res = await this.request<{ resources?: { name: string }[] }>('GET', `/apis/${group}/${version}`);
      return res.status === 200 && !!res.body.resources?.some((r) => r.name === plural);
    });
  }

  private async startPodSimulator(options: { readonly readyDelayMs?: number }): Promise<void> {
    const client = await KubeClient.fromKubeconfig({ kubeconfig: this.kubeconfig as unknown as Kubeconfig });
    const simulator = new PodSimulator({
      client,
      ...omitUndefined({ readyDelayMs: options.readyDelayMs }),
      bind: async (namespace, pod, node) => {
        const res = await this.request('POST', `/api/v1/namespaces/${namespace}/pods/${pod}/binding`, {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: pod, namespace },
          target: { apiVersion: 'v1', kind: 'Node', name: node },
        });
        // 409: already bound (a retry after a lost answer) — fine.
        if (res.status !== 201 && res.status !== 409)
          throw new TestEnvError(`binding pod ${namespace}/${pod} failed: ${res.status} ${JSON.stringify(res.body)}`);
      },
    });
    const stop = new AbortController();
    const run = simulator.start(stop.signal);
    this.simulator = { stop, run, client };
    run.catch((err: unknown) => {
      if (!stop.signal.aborted) process.emitWarning(`TestEnv pod simulator stopped: ${String(err)}`);
    });
  }

  private async startApiServer(): Promise<void> {
    const apiserver = this.plane!.processes.apiserver;
    apiserver.start();
    this.caPem = await this.servingCertificate(apiserver, join(this.dir, 'pki', 'serving', 'apiserver.crt'));
    this.kubeconfig.clusters[0]!.cluster['certificate-authority-data'] = Buffer.from(this.caPem).toString('base64');
    await this.dispatcher.close().catch(() => {});
    this.dispatcher = new Agent({ connect: { ca: this.caPem } });
    await this.poll(
      `${apiserver.options.name} /readyz`,
      apiserver,
      async () => (await this.request('GET', '/readyz')).status === 200,
    );
    // kube-apiserver 1.20 is ready before its bootstrap controller has created the `default`
    // namespace; a test's first write there would get 404 on a loaded machine. (The 1.36 CRD-only
    // server has no namespaces.)
    if (!this.plane!.modernBinaries) {
      await this.poll(
        `${apiserver.options.name} to create the default namespace`,
        apiserver,
        async () => (await this.request('GET', '/api/v1/namespaces/default')).status === 200,
      );
    }
  }

  /** The 1.20 kube-apiserver a modern env delegates authentication and authorization to. */
  private async startAuthDelegate(kubeconfigPath: string): Promise<void> {
    const core = this.plane!.processes.authDelegate!;
    core.start();
    const caPem = await this.servingCertificate(core, join(this.dir, 'pki', 'core-serving', 'apiserver.crt'));
    const server = `https://127.0.0.1:${this.plane!.ports.core}`;
    const kubeconfig = this.kubeconfigFor('admin', { token: this.adminToken });
    kubeconfig.clusters[0]!.cluster = { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') };
    await writeFile(kubeconfigPath, toYaml(kubeconfig), { mode: 0o600 });
    this.authDelegate = { server, kubeconfigPath, kubeconfig };
    const agent = new Agent({ connect: { ca: caPem } });
    try {
      await this.poll('kube-apiserver (authentication/authorization delegate) /readyz', core, async () => {
        const res = await request(`${server}/readyz`, {
          dispatcher: agent,
          headers: { authorization: `Bearer ${this.adminToken}` },
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        });
        await res.body.dump();
        return res.statusCode === 200;
      });
    } finally {
      await agent.close();
    }
  }

  /** Waits for a server to write its self-signed serving certificate (with its CA) and returns the PEM. */
  private async servingCertificate(server: ManagedProcess, certFile: string): Promise<string> {
    const name = server.options.name;
    let pem = '';
    await this.poll(`${name} to write its serving certificate`, server, async () => existsSync(certFile));
    await this.poll(`${name} serving certificate to be complete`, server, async () => {
      pem = await readFile(certFile, 'utf8');
      return pem.includes('END CERTIFICATE');
    });
    return pem;
  }

  private async startControllerManager(): Promise<void> {
    const kcm = this.plane!.processes.kcm!;
    kcm.start();
    // The service-account controller creating `default` in `default` proves the controllers run.
    await this.poll(
      'kube-controller-manager to create the default ServiceAccount',
      kcm,
      async () => (await this.request('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
    );
  }

  private kubeconfigFor(user: string, credentials: Record<string, unknown>): KubeconfigObject {
    const cluster: Record<string, unknown> = { server: this.server };
    if (this.caPem) cluster['certificate-authority-data'] = Buffer.from(this.caPem).toString('base64');
    return {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: CONTEXT, cluster }],
      users: [{ name: user, user: credentials }],
      contexts: [{ name: CONTEXT, context: { cluster: CONTEXT, user, namespace: 'default' } }],
      'current-context': CONTEXT,
    };
  }

  private process(component: Exclude<ControlPlaneComponent, 'etcd'>, feature: string): ManagedProcess {
    const { processes } = this.local(feature);
    if (component === 'kube-apiserver') return processes.apiserver;
    if (!processes.kcm) throw new TestEnvError('kube-controller-manager is not running in this TestEnv');
    return processes.kcm;
  }

  private allProcesses(): ManagedProcess[] {
    const processes = this.local('processes').processes;
    return [processes.apiserver, processes.kcm, processes.authDelegate].filter(
      (p): p is ManagedProcess => p !== undefined,
    );
  }

  /** The control plane this env started; `TestEnvUnavailableError` naming `feature` against an existing cluster. */
  private local(feature: string): LocalControlPlane {
    if (!this.plane)
      throw new TestEnvUnavailableError(
        feature,
        'this TestEnv did not start the cluster, so it has no processes to stop or kill, no etcd to reach and no CA to issue users from',
      );
    return this.plane;
  }

  /** Deletes what this env created in an existing cluster, then waits until it is gone. */
  private async removeCreated(): Promise<void> {
    const me = this.userEntry();
    const unusedCrds: string[] = [];
    for (const crd of this.created.crds) {
      // Still used by another env (another test file running now): leave it to the last one.
      const left = await this.updateCrdUsers(crd, (users) => users.filter((u) => u !== me));
      if (left === 'empty') unusedCrds.push(crd);
    }
    const paths = [
      ...[...this.created.namespaces].map((n) => `/api/v1/namespaces/${n}`),
      ...unusedCrds.map((n) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}`),
    ];
    const failures: string[] = [];
    for (const path of paths) {
      const res = await this.request('DELETE', path, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Background',
      });
      if (res.status !== 200 && res.status !== 202 && res.status !== 404)
        failures.push(`DELETE ${path}: ${res.status}`);
    }
    if (failures.length)
      throw new TestEnvError(
        `could not remove what this TestEnv created in the existing cluster: ${failures.join('; ')}`,
      );
    // Gone, not only marked: the next run (or a test of "nothing left behind") sees a clean cluster.
    await this.poll(
      `the namespaces and CRDs this TestEnv created to be deleted (${paths.join(', ')})`,
      undefined,
      async () => {
        for (const path of paths) if ((await this.request('GET', path)).status !== 404) return false;
        return true;
      },
      { evenIfStopped: true },
    );
  }

  /**
   * Polls `check` every 100 ms until it returns true; fails fast (with the component's log tail)
   * when the component exits, and after the start timeout.
   */
  private async poll(
    what: string,
    component: ManagedProcess | undefined,
    check: () => Promise<boolean>,
    options: { evenIfStopped?: boolean } = {},
  ): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    let lastError: unknown;
    for (;;) {
      if (this.stopped && !options.evenIfStopped) throw new TestEnvError(`stopped while waiting for ${what}`);
      if (component && !component.running) {
        throw component.failure(`exited (${JSON.stringify(component.exit)}) while waiting for ${what}`);
      }
      try {
        if (await check()) return;
      } catch (err) {
        lastError = err;
      }
      if (Date.now() > deadline) {
        const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
        if (component)
          throw component.failure(`timed out after ${this.startTimeoutMs} ms waiting for ${what}${detail}`);
        throw new TestEnvError(`timed out after ${this.startTimeoutMs} ms waiting for ${what}${detail}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

interface CrdManifest {
  metadata: { name: string };
  spec: { group: string; names: { plural: string }; versions: { name: string; served?: boolean }[] };
}

/** Removes temp dirs of envs whose test process died without cleaning up (its components died with it). */
async function removeStaleDirs(): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(tmpdir());
  } catch {
    return;
  }
  await Promise.all(
    entries
      .filter((e) => e.startsWith(DIR_PREFIX))
      .map(async (e) => {
        const dir = join(tmpdir(), e);
        try {
          const pid = Number(await readFile(join(dir, 'owner.pid'), 'utf8'));
          if (pid > 0 && !processAlive(pid)) await rm(dir, { recursive: true, force: true });
        } catch {
          // not ours or being created right now
        }
      }),
  );
}

/** Whether a CRD user (`<host>:<id>`) may still be running: unknown for other machines, else its temp dir exists. */
function userAlive(user: string): boolean {
  const at = user.lastIndexOf(':');
  if (user.slice(0, at) !== hostname()) return true;
  return existsSync(join(tmpdir(), `${DIR_PREFIX}${user.slice(at + 1)}`));
}

function envId(dir: string): string {
  return basename(dir).slice(DIR_PREFIX.length);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
