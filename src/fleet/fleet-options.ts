import type { ClusterProvider } from './cluster-provider.js';

/** @defaultValue 120,000 ms: a member whose caches have not synced by then is reported unhealthy (never fatal). */
export const DEFAULT_CLUSTER_SYNC_TIMEOUT_MS = 120_000;

/** The manager's `fleet` option: member clusters besides the host cluster the manager's own client talks to. */
export interface FleetOptions {
  /** Where member clusters come from: `staticClusters`, `kubeconfigDirectory`, `kubeconfigSecrets`. */
  readonly provider: ClusterProvider;
  /**
   * What `/readyz` waits for: `'host'` only the host cluster's caches (a dead member never takes
   * the operator out of its Service); `'all-clusters'` also every engaged member's.
   * @defaultValue 'host'
   */
  readonly readiness?: 'host' | 'all-clusters';
  /** @defaultValue {@link DEFAULT_CLUSTER_SYNC_TIMEOUT_MS} */
  readonly clusterSyncTimeoutMs?: number;
  /**
   * With the manager's `sharding`: replicas divide member clusters among themselves (the ring's
   * unit is a cluster), each engaging only the clusters assigned to it. @defaultValue false
   */
  readonly sharded?: boolean;
}
