/**
 * What the kubeconfig-based providers share: turning kubeconfig bytes into a checked kubeconfig, a
 * revision (a hash, never the bytes) and a `MemberCluster` whose `connect` builds a `KubeClient`.
 * Every error here names the cluster and what is wrong, never a credential: kubeconfig errors name
 * fields and files (client/kubeconfig.ts), and anything else is reduced to its class name.
 */
import { createHash } from 'node:crypto';
import { KubeClient, type KubeClientOptions } from '../../client/kube-client.js';
import {
  KubeconfigError,
  asKubeconfig,
  checkKubeconfigSize,
  parseKubeconfig,
  resolveKubeconfig,
  type Kubeconfig,
  type KubeconfigLimits,
  type KubeconfigUser,
} from '../../client/kubeconfig.js';
import type { Client } from '../../client/contracts.js';
import type { Clock } from '../../core/clock.js';
import { AbortedError, OperatorRuntimeError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { MemberCluster } from '../cluster-provider.js';

/** A member's kubeconfig cannot be used. The message names the cluster and the problem, never a credential. */
export class ClusterKubeconfigError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CLUSTER_KUBECONFIG';
  readonly cluster: string;
  /** The kubeconfig field at fault (`users[0].user.token`), when one is. */
  readonly field: string | undefined;
  constructor(cluster: string, problem: string, options?: { cause?: unknown; field?: string }) {
    super('ERR_CLUSTER_KUBECONFIG', `cluster "${cluster}": ${problem}`, options);
    this.cluster = cluster;
    this.field = options?.field;
  }
}

/** The revision of kubeconfig bytes: `sha256:<hex>` (stable across resyncs, never the content). */
export function kubeconfigRevision(bytes: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

export interface CheckKubeconfigOptions {
  /** Folder relative file paths inside the kubeconfig resolve against. @defaultValue the working directory */
  readonly baseDir?: string;
  /** Context to use instead of `current-context`. */
  readonly context?: string;
  /**
   * Let the kubeconfig run exec plugins and read local files (`tokenFile`, `certificate-authority`,
   * `client-certificate`, `client-key`). Off for kubeconfigs from Secrets: whoever may write such a
   * Secret could otherwise run commands in the operator's pod, or send the operator's own service
   * account token (`tokenFile: /var/run/secrets/…`) to a server of their choosing.
   * @defaultValue true
   */
  readonly allowExecAndFiles?: boolean;
  /**
   * Limits on kubeconfig bytes, checked before the YAML parser sees them (whoever writes the
   * kubeconfig could otherwise stall the event loop for seconds): size, nesting depth, nodes and
   * aliases. @defaultValue the `DEFAULT_MAX_KUBECONFIG_*` limits (256 KiB, 32 levels, 20,000 nodes, 32 aliases)
   */
  readonly limits?: KubeconfigLimits;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/**
 * Parses kubeconfig bytes (or checks a kubeconfig object) for cluster `cluster` and resolves its
 * context once, so a kubeconfig that could never connect (no such context, a missing CA file, two
 * authentication methods) is refused here rather than at each `connect`. Bytes over
 * `options.limits` are refused before parsing, their size before they are even decoded. Throws
 * {@link ClusterKubeconfigError} (its `cause` a `KubeconfigLimitError` for a limit crossed).
 */
export async function checkKubeconfig(
  cluster: string,
  source: Uint8Array | string | Kubeconfig | object,
  options: CheckKubeconfigOptions = {},
): Promise<Kubeconfig> {
  let kubeconfig: Kubeconfig;
  try {
    if (source instanceof Uint8Array) {
      // Before decoding: a hostile megabyte is refused without ever becoming a string.
      checkKubeconfigSize(source.byteLength, options.limits);
      kubeconfig = parseKubeconfig(Buffer.from(source).toString('utf8'), options.baseDir, options.limits);
    } else if (typeof source === 'string') kubeconfig = parseKubeconfig(source, options.baseDir, options.limits);
    else kubeconfig = asKubeconfig(source);
  } catch (err) {
    throw clusterKubeconfigError(cluster, err);
  }
  if (options.allowExecAndFiles === false) refuseExecAndFiles(cluster, kubeconfig, options.context);
  const config = await resolve(cluster, kubeconfig, options);
  // Resolving builds a credential; an exec plugin's would hold nothing yet, but release it all the same.
  config.credential.close?.();
  return kubeconfig;
}

/**
 * Refuses base64 kubeconfig data (a Secret's) whose decoded size is over `limits.maxBytes`, from
 * its length alone, so a hostile megabyte is not decoded at all; throws
 * {@link ClusterKubeconfigError}. Data with line breaks (never the API server's) is left to
 * {@link checkKubeconfig}, which measures the decoded bytes.
 */
export function checkBase64KubeconfigSize(cluster: string, base64: string, limits?: KubeconfigLimits): void {
  if (/\s/.test(base64)) return;
  // Four characters make three bytes, less the padding; an unpadded tail of n characters, n - 1.
  const tail = base64.length % 4;
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  const bytes = Math.floor(base64.length / 4) * 3 - padding + (tail > 1 ? tail - 1 : 0);
  try {
    checkKubeconfigSize(bytes, limits);
  } catch (err) {
    throw clusterKubeconfigError(cluster, err);
  }
}

export interface KubeconfigMemberOptions {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly revision: string;
  /** A kubeconfig as {@link checkKubeconfig} returned it. */
  readonly kubeconfig: Kubeconfig;
  readonly context?: string;
  /**
   * Options of the member's `KubeClient`. A `registry` here would be shared by every member (and
   * prom-client refuses a metric registered twice): give per-cluster `metrics` instead.
   */
  readonly clientOptions?: KubeClientOptions;
}

/** A member cluster whose `connect` resolves the kubeconfig (reading referenced files afresh) into a `KubeClient`. */
export function kubeconfigMember(options: KubeconfigMemberOptions): MemberCluster {
  const { name, revision, kubeconfig, context, clientOptions = {} } = options;
  return {
    name,
    revision,
    ...(options.labels ? { labels: options.labels } : {}),
    async connect(signal: AbortSignal): Promise<Client> {
      if (signal.aborted) throw new AbortedError(`connecting to cluster "${name}" was aborted`);
      const config = await resolve(name, kubeconfig, {
        ...(context !== undefined ? { context } : {}),
        ...(clientOptions.clock ? { clock: clientOptions.clock } : {}),
        ...(clientOptions.logger ? { logger: clientOptions.logger } : {}),
      });
      if (signal.aborted) {
        config.credential.close?.();
        throw new AbortedError(`connecting to cluster "${name}" was aborted`);
      }
      try {
        return new KubeClient(config, clientOptions);
      } catch (err) {
        config.credential.close?.();
        throw clusterKubeconfigError(name, err);
      }
    },
  };
}

async function resolve(
  cluster: string,
  kubeconfig: Kubeconfig,
  options: { readonly context?: string; readonly clock?: Clock; readonly logger?: Logger },
): ReturnType<typeof resolveKubeconfig> {
  try {
    return await resolveKubeconfig(kubeconfig, {
      ...(options.context !== undefined ? { context: options.context } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  } catch (err) {
    throw clusterKubeconfigError(cluster, err);
  }
}

/**
 * The {@link ClusterKubeconfigError} for a failure with `cluster`'s kubeconfig. Our errors' messages are written never to carry a credential (they name fields and files); any
 * other error (a parser's, a library's) may quote its input, so only its class name is kept, and
 * it is not kept as a cause either.
 */
export function clusterKubeconfigError(cluster: string, err: unknown): ClusterKubeconfigError {
  if (err instanceof ClusterKubeconfigError) return err;
  if (err instanceof OperatorRuntimeError)
    return new ClusterKubeconfigError(cluster, err.message, {
      cause: err,
      ...(err instanceof KubeconfigError && err.field ? { field: err.field } : {}),
    });
  const kind = err instanceof Error ? err.name : typeof err;
  return new ClusterKubeconfigError(cluster, `kubeconfig cannot be used (${kind})`);
}

const FILE_FIELDS_OF_USER = ['tokenFile', 'client-certificate', 'client-key'] as const;

function refuseExecAndFiles(cluster: string, kc: Kubeconfig, contextOverride: string | undefined): void {
  const contextName = contextOverride ?? kc['current-context'];
  const context = kc.contexts?.find((c) => c.name === contextName)?.context;
  // An unknown context is resolve's to report.
  if (!context) return;
  const clusterIndex = kc.clusters?.findIndex((c) => c.name === context.cluster) ?? -1;
  const clusterEntry = clusterIndex >= 0 ? kc.clusters![clusterIndex]!.cluster : undefined;
  if (clusterEntry?.['certificate-authority'] && !clusterEntry['certificate-authority-data']) {
    const field = `clusters[${clusterIndex}].cluster.certificate-authority`;
    throw new ClusterKubeconfigError(cluster, `kubeconfig ${field} names a local file, which is not allowed here`, {
      field,
    });
  }
  const userIndex = context.user ? (kc.users?.findIndex((u) => u.name === context.user) ?? -1) : -1;
  const user: KubeconfigUser | undefined = userIndex >= 0 ? kc.users![userIndex]!.user : undefined;
  if (!user) return;
  const at = `users[${userIndex}].user`;
  if (user.exec)
    throw new ClusterKubeconfigError(cluster, `kubeconfig ${at}.exec runs a command, which is not allowed here`, {
      field: `${at}.exec`,
    });
  for (const key of FILE_FIELDS_OF_USER) {
    const inline = key === 'tokenFile' ? undefined : user[`${key}-data`];
    if (user[key] && !inline)
      throw new ClusterKubeconfigError(
        cluster,
        `kubeconfig ${at}.${key} names a local file, which is not allowed here`,
        {
          field: `${at}.${key}`,
        },
      );
  }
}
