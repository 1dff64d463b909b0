/**
 * The connection of a TestEnv to a cluster the user already runs (kind, k3d, a dev cluster), as
 * envtest's USE_EXISTING_CLUSTER: which kubeconfig and context, raw admin requests with that
 * context's credentials, and the kubeconfig handed to the test's clients. TestEnv owns the
 * lifecycle (CRDs, namespaces, cleanup); this file only knows how to reach the cluster.
 */
import { Agent, type Dispatcher } from 'undici';
import { omitUndefined } from '../../core/omit-undefined.js';
import { adminRequest } from './admin-request.js';
import { OperatorRuntimeError } from '../../core/errors.js';
import {
  defaultKubeconfigPaths,
  loadKubeconfigFile,
  mergeKubeconfigs,
  resolveKubeconfig,
  type ClusterConfig,
  type Kubeconfig,
} from '../../client/kubeconfig.js';

/** Set to `true` (or `1`) to run every TestEnv against the cluster of `KUBECONFIG`. */
export const USE_EXISTING_CLUSTER_ENV = 'OPERATOR_RUNTIME_USE_EXISTING_CLUSTER';

export interface ExistingClusterOptions {
  /** The kubeconfig file. @defaultValue `KUBECONFIG` (its files merged), else ~/.kube/config */
  readonly kubeconfigPath?: string;
  /** The context to use. @defaultValue the kubeconfig's current-context */
  readonly context?: string;
}

/**
 * A TestEnv feature (a fault hook, etcd access, a process of the control plane) that only a control
 * plane TestEnv started itself has. `feature` names it, e.g. `pause()`.
 */
export class TestEnvUnavailableError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_ENV_UNAVAILABLE';
  constructor(
    readonly feature: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      'ERR_TEST_ENV_UNAVAILABLE',
      `TestEnv ${feature} is not available against an existing cluster: ${reason}`,
      options,
    );
  }
}

/**
 * Which existing cluster to use, if any: the option when given (`false` turns the environment
 * variable off), else the environment variable.
 */
export function existingClusterOption(
  option: boolean | ExistingClusterOptions | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ExistingClusterOptions | undefined {
  if (option === false) return undefined;
  if (option === true) return {};
  if (option) return option;
  const value = env[USE_EXISTING_CLUSTER_ENV]?.trim().toLowerCase();
  return value === 'true' || value === '1' ? {} : undefined;
}

type KubeconfigEntries = { name: string; cluster: Record<string, unknown> }[];

/** One context of the user's kubeconfig, resolved; admin requests go out with its credentials. */
export class ExistingCluster {
  private constructor(
    readonly config: ClusterConfig,
    /** The chosen context alone, file paths absolute, namespace `default`: what the env's clients get. */
    readonly kubeconfig: {
      clusters: KubeconfigEntries;
      users: { name: string; user: Record<string, unknown> }[];
      context: { cluster: string; user: string };
    },
    /** The CA PEM of the cluster, if the kubeconfig names one. */
    readonly caPem: string,
    /** The context's static bearer token, if it has one. */
    readonly token: string | undefined,
    private readonly dispatcher: Dispatcher,
  ) {}

  static async connect(
    options: ExistingClusterOptions,
    env: Readonly<Record<string, string | undefined>> = process.env,
  ): Promise<ExistingCluster> {
    const paths = options.kubeconfigPath ? [options.kubeconfigPath] : defaultKubeconfigPaths(env);
    let kc: Kubeconfig;
    try {
      kc = mergeKubeconfigs(await Promise.all(paths.map((p) => loadKubeconfigFile(p))));
    } catch (error) {
      throw new TestEnvUnavailableError(
        'existingCluster',
        `cannot read its kubeconfig (${paths.join(', ') || 'no KUBECONFIG and no ~/.kube/config'}): ${(error as Error).message}`,
        { cause: error },
      );
    }
    const config = await resolveKubeconfig(kc, omitUndefined({ context: options.context || undefined }));
    const contextName = config.contextName!;
    const context = kc.contexts!.find((c) => c.name === contextName)!.context!;
    const cluster = kc.clusters!.find((c) => c.name === context.cluster)!;
    const user = kc.users?.find((u) => u.name === context.user);
    const { authorization, clientCert } = await config.credential.get();
    const tls = config.tls;
    const dispatcher = new Agent({
      connect: {
        rejectUnauthorized: tls.rejectUnauthorized,
        ...omitUndefined({ ca: tls.ca || undefined }),
        ...(clientCert
          ? { cert: clientCert.cert, key: clientCert.key }
          : tls.cert && tls.key
            ? { cert: tls.cert, key: tls.key }
            : {}),
        ...omitUndefined({ servername: tls.servername || undefined }),
      },
    });
    const existing = new ExistingCluster(
      config,
      {
        clusters: [{ name: cluster.name, cluster: { ...cluster.cluster } as Record<string, unknown> }],
        users: [{ name: user?.name ?? 'user', user: { ...(user?.user ?? {}) } as Record<string, unknown> }],
        context: { cluster: cluster.name, user: user?.name ?? 'user' },
      },
      tls.ca ?? '',
      authorization?.startsWith('Bearer ') && config.credential.kind === 'token'
        ? authorization.slice('Bearer '.length)
        : undefined,
      dispatcher,
    );
    existing.authorization = authorization;
    return existing;
  }

  private authorization: string | undefined;

  /** One request with the context's credentials; status and parsed JSON body (or text). */
  async request<T>(
    method: Dispatcher.HttpMethod,
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: T }> {
    const impersonate = this.config.impersonate;
    const identity = {
      ...omitUndefined({ authorization: this.authorization || undefined }),
      ...(impersonate
        ? {
            'impersonate-user': impersonate.user,
            ...(impersonate.groups?.length ? { 'impersonate-group': [...impersonate.groups] } : {}),
          }
        : {}),
    };
    return adminRequest<T>(this.config.server, this.dispatcher, identity, method, path, body, headers);
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
