/**
 * Where member clusters come from (multicluster-runtime's `Provider`): a provider engages clusters
 * as they appear and disengages them as they go, at run time, for as long as it runs. The fleet
 * (`Fleet`) turns each engagement into a cache, informers and reconciles for that cluster.
 */
import type { Client } from '../client/contracts.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { PermissionRequirement } from '../rbac/permission.js';

/** A member cluster as a provider hands it over. Never carries a credential in a field that is logged. */
export interface MemberCluster {
  /**
   * Unique within the fleet: the `cluster` of requests, log lines, metric labels and the console.
   * A DNS label (see {@link validateClusterName}), so it never needs escaping anywhere.
   */
  readonly name: string;
  /** Labels a fleet selects clusters by (a `DatabaseFleet`'s cluster selector). @defaultValue none */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Changes whenever what `connect` builds changes (a rotated kubeconfig): engaging a cluster
   * again with another revision replaces its engagement (old caches stopped, new ones started);
   * with the same revision it is a no-op. Never the credential itself (a hash of it is fine).
   */
  readonly revision: string;
  /**
   * Builds a client for the cluster; called once per engagement. The fleet closes the client it
   * got (when it has a `close()`) once the engagement ends. Must not log or throw a credential.
   */
  connect(signal: AbortSignal): Promise<Client>;
}

/** What a provider reports to (the fleet implements it). Both calls are idempotent. */
export interface ClusterEvents {
  /** A cluster joined, or changed (another `revision` or other `labels`). */
  engage(cluster: MemberCluster): void;
  /**
   * A cluster left: its reconciles end and its caches are released. Unknown names are ignored.
   * May return a promise that resolves once the cluster's in-flight reconciles have ended (the
   * fleet's does: `shardedClusters` releases a cluster's Lease only then).
   */
  disengage(name: string): void | Promise<void>;
}

/** A source of member clusters. */
export interface ClusterProvider {
  /** For logs and the console, e.g. `kubeconfig-secrets operators/fleet.example.com/member`; no credential. */
  readonly description: string;
  /**
   * Reports clusters to `events` until `signal` aborts, then resolves (clusters it engaged need no
   * disengage then: the fleet stops them all). Rejecting stops the manager; a provider retries
   * transient faults itself (a kubeconfig that does not parse is logged and skipped, not fatal).
   */
  start(signal: AbortSignal, events: ClusterEvents): Promise<void>;
  /** What the provider needs RBAC to allow in the host cluster (a Secret informer). @defaultValue nothing */
  requiredPermissions?(): readonly PermissionRequirement[];
}

/** A bad cluster name: never a credential in the message, only the name. */
export class InvalidClusterNameError extends InvalidArgumentError {}

const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Throws {@link InvalidClusterNameError} unless `name` is an RFC 1123 DNS label (lowercase
 * letters, digits and `-`, at most 63 characters): a name never contains `/`, so a fleet key
 * `cluster/namespace/name` splits without ambiguity.
 */
export function validateClusterName(name: string): string {
  if (!CLUSTER_NAME.test(name))
    throw new InvalidClusterNameError(
      `cluster name ${JSON.stringify(name.slice(0, 80))} is not a DNS label (a-z, 0-9 and '-', at most 63 characters)`,
    );
  return name;
}
