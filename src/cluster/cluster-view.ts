import type { Client } from '../client/contracts.js';

/**
 * What a reconcile sees of the cluster its request lives in (`ctx.cluster`): the host cluster (name
 * '') or an engaged member cluster of a fleet, which `manager.fleet` also lists.
 */
export interface ClusterView {
  /** The member cluster's name (`MemberCluster.name`); '' for the host cluster. */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Reads from this cluster's cache (read-your-own-writes as the manager's client), writes to its API server. */
  readonly client: Client;
  /** This cluster's API client itself: reads that must not come from the cache. */
  readonly apiClient: Client;
  /** True once every informer of the cluster has synced since it was engaged. */
  readonly synced: boolean;
}
