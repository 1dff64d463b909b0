import type { ClusterProvider } from './cluster-provider.js';

/** @defaultValue 120,000 ms: a member whose caches have not synced by then is reported unhealthy (never fatal). */
export const DEFAULT_CLUSTER_SYNC_TIMEOUT_MS = 120_000;

/**
 * @defaultValue 1,000 members engaged at once on one replica. An engaged member costs ~89 KiB of
 * heap before any object of it is cached (src/fleet/bench/engagement-memory.bench.ts): ~87 MiB
 * for 1,000; a provider fed by anyone who may create a Secret must not be able to grow that
 * without bound.
 */
export const DEFAULT_FLEET_MAX_CLUSTERS = 1_000;

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
  /**
   * At most this many members engaged at once (with `sharded`, on each replica). A member the
   * provider engages beyond it is refused — logged, counted on
   * `fleet_provider_refused_total{provider="fleet",reason="max_clusters"}` — and kept waiting:
   * as members leave, waiting ones are engaged in name order. Those engaged first keep their place.
   * @defaultValue {@link DEFAULT_FLEET_MAX_CLUSTERS}
   */
  readonly maxClusters?: number;
  /** @defaultValue {@link DEFAULT_CLUSTER_SYNC_TIMEOUT_MS} */
  readonly clusterSyncTimeoutMs?: number;
  /**
   * With the manager's `sharding`: replicas divide member clusters among themselves (the ring's
   * unit is a cluster), each engaging only the clusters assigned to it. @defaultValue false
   */
  readonly sharded?: boolean;
}
