/**
 * `operator-runtime/fleet`: one operator over many member clusters (docs/fleet.md). The manager's
 * `fleet` option and `fleetController()` live in the root entry; here, and only here, are the
 * cluster providers, the sharding of clusters across replicas, the contracts a custom provider
 * implements, and the fleet's requests, contexts and views.
 */
export * from './providers/index.js';
export {
  shardedClusters,
  clusterLeaseName,
  CLUSTER_LABEL,
  CLUSTER_RING_LABEL,
  type ShardedClustersOptions,
  type MembershipRunner,
} from './sharded-clusters.js';
export { InvalidClusterNameError, validateClusterName } from './cluster-provider.js';
export type { ClusterEvents, ClusterProvider, MemberCluster } from './cluster-provider.js';
export { clusterOfKey, fleetKey, parseFleetKey } from './fleet-request.js';
export type { FleetRequest } from './fleet-request.js';
export { DEFAULT_CLUSTER_SYNC_TIMEOUT_MS, DEFAULT_FLEET_MAX_CLUSTERS } from './fleet-options.js';
export type { FleetOptions } from './fleet-options.js';
export type { FleetReconcileContext, FleetReconciler, FleetReconcileFunction } from './fleet-reconciler.js';
export type { FleetView } from './fleet.js';
export type { FleetClusterHealth } from './cluster-engagement.js';
export type { ClusterState } from './fleet-metrics.js';
export { ClusterDisengagedError } from './cluster-engagement.js';
export { MemberEventRecorder } from './member-event-recorder.js';
export type { MemberEventRecorderOptions } from './member-event-recorder.js';
