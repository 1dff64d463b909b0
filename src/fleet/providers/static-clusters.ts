/**
 * `staticClusters`: a fixed list of member clusters, all engaged when the provider starts and never
 * changed while it runs (a new list means a new provider, i.e. a restart).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Client } from '../../client/contracts.js';
import type { KubeClientOptions } from '../../client/kube-client.js';
import { loadKubeconfigFile, type Kubeconfig } from '../../client/kubeconfig.js';
import { InvalidArgumentError } from '../../core/errors.js';
import {
  validateClusterName,
  type ClusterEvents,
  type ClusterProvider,
  type MemberCluster,
} from '../cluster-provider.js';
import { clusterKubeconfigError, kubeconfigMember } from './kubeconfig-member.js';

/** One member of a static list: a name plus either a ready client or a kubeconfig to build one from. */
export type StaticCluster = {
  /** A DNS label (`validateClusterName`), unique in the list. */
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
} & (
  | {
      /**
       * Used as is (a `FakeClient` in tests, a client built elsewhere). Handed over: the fleet
       * closes it (when it has `close()`) once the cluster's engagement ends, i.e. at shutdown.
       */
      readonly client: Client;
      readonly kubeconfig?: never;
    }
  | {
      /**
       * A kubeconfig file's path (read at each `connect`, so a rotated file is picked up when the
       * fleet reconnects), or a parsed kubeconfig object (e.g. `TestEnv.kubeconfig`).
       */
      readonly kubeconfig: string | Kubeconfig | object;
      /** Context to use instead of `current-context`. */
      readonly context?: string;
      readonly client?: never;
    }
);

export interface StaticClustersOptions {
  /** Options of every `KubeClient` built from a kubeconfig (not of clients given directly). */
  readonly clientOptions?: KubeClientOptions;
}

/**
 * A provider of a fixed list of clusters. Throws `InvalidClusterNameError` for a name that is not a
 * DNS label and `InvalidArgumentError` for a name given twice or an entry with neither or both of
 * `client` and `kubeconfig`, at once rather than when the fleet starts.
 */
export function staticClusters(
  clusters: readonly StaticCluster[],
  options: StaticClustersOptions = {},
): ClusterProvider {
  const seen = new Set<string>();
  const members: MemberCluster[] = clusters.map((c) => {
    validateClusterName(c.name);
    if (seen.has(c.name)) throw new InvalidArgumentError(`cluster name "${c.name}" is given twice`);
    seen.add(c.name);
    const hasClient = c.client !== undefined;
    const hasKubeconfig = c.kubeconfig !== undefined;
    if (hasClient === hasKubeconfig)
      throw new InvalidArgumentError(`cluster "${c.name}" needs exactly one of client and kubeconfig`);
    return hasClient ? clientMember(c.name, c.labels, c.client!) : kubeconfigEntryMember(c, options);
  });
  return {
    description: `static ${members.length} cluster${members.length === 1 ? '' : 's'}`,
    async start(signal: AbortSignal, events: ClusterEvents): Promise<void> {
      if (signal.aborted) return;
      for (const m of members) events.engage(m);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
}

function clientMember(name: string, labels: StaticCluster['labels'], client: Client): MemberCluster {
  return {
    name,
    revision: 'static',
    ...(labels ? { labels } : {}),
    connect: () => Promise.resolve(client),
  };
}

function kubeconfigEntryMember(
  c: StaticCluster & { readonly kubeconfig: string | object },
  options: StaticClustersOptions,
): MemberCluster {
  const context = c.context;
  if (typeof c.kubeconfig !== 'string') {
    // Copied once: the object's owner could change it after this call.
    const json = JSON.stringify(c.kubeconfig) ?? '';
    return kubeconfigMember({
      name: c.name,
      ...(c.labels ? { labels: c.labels } : {}),
      revision: `sha256:${createHash('sha256').update(json).digest('hex')}`,
      kubeconfig: JSON.parse(json) as Kubeconfig,
      ...(context !== undefined ? { context } : {}),
      ...(options.clientOptions ? { clientOptions: options.clientOptions } : {}),
    });
  }
  const file = path.resolve(c.kubeconfig);
  return {
    name: c.name,
    // The list is fixed for the provider's life, so the path is the revision.
    revision: `file:${file}`,
    ...(c.labels ? { labels: c.labels } : {}),
    async connect(signal) {
      let kubeconfig: Kubeconfig;
      try {
        kubeconfig = await loadKubeconfigFile(file);
      } catch (err) {
        throw clusterKubeconfigError(c.name, err);
      }
      return kubeconfigMember({
        name: c.name,
        revision: `file:${file}`,
        kubeconfig,
        ...(context !== undefined ? { context } : {}),
        ...(options.clientOptions ? { clientOptions: options.clientOptions } : {}),
      }).connect(signal);
    },
  };
}
