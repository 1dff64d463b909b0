/**
 * manager: runs an operator's parts in order — endpoints (/metrics, /healthz, /readyz), caches,
 * then controllers (leader-only when elected) — and stops them in reverse on a signal.
 */
export {
  Manager,
  DEFAULT_METRICS_PORT,
  DEFAULT_HEALTH_PORT,
  DEFAULT_MANAGER_GRACEFUL_SHUTDOWN_MS,
  DEFAULT_UNHEALTHY_WATCH_FAILURES,
} from './manager.js';
export type { ManagerOptions, ManagerEndpoints } from './manager.js';
export {
  DEFAULT_HEAP_COMPACTION_QUIET_PERIOD_MS,
  DEFAULT_HEAP_COMPACTION_IDLE_UTILIZATION,
  DEFAULT_HEAP_COMPACTION_MIN_INTERVAL_MS,
  DEFAULT_HEAP_COMPACTION_MIN_GROWTH_BYTES,
} from './heap-compactor.js';
export type { HeapCompactionOptions } from './heap-compactor.js';
export { ControllerBuilder } from '../controller/controller-builder.js';
export { ControllerDeclaration } from '../controller/controller-declaration.js';
export type {
  ControllerBuilderOptions,
  ControllerWatchOptions,
  ControllerWritesOptions,
} from '../controller/controller-builder.js';
export type { ControllerCacheOptions } from '../controller/controller-host.js';
export type { PrioritizedTriggerKey, TriggerKey } from '../controller/trigger-source.js';
export type { Runnable, RunnableOptions, LeaderElection } from './runnable.js';
export type { HealthCheck } from './health-checks.js';
export type { ConsoleOptions } from '../console/console-options.js';
// The manager's side of fleets; the fleet's own names (providers, requests, views) are only in operator-runtime/fleet.
export {
  DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES,
  DEFAULT_FLEET_RECONCILE_TIMEOUT_MS,
  defaultMaxConcurrentReconcilesPerCluster,
  type FleetControllerOptions,
} from '../controller/fleet-controller-options.js';
export type { FleetControllerBuilder } from '../fleet/fleet-controller-builder.js';
export { DEFAULT_SECURE_METRICS_PORT, defaultBindHost } from './secure-metrics.js';
export type { SecureMetricsOptions } from './secure-metrics.js';
export { DEFAULT_AUTH_CACHE_TTL_MS, DEFAULT_AUTH_CACHE_SIZE } from './token-review-authorizer.js';
export { runUntilSignal } from './run-until-signal.js';
export type { RunUntilSignalOptions } from './run-until-signal.js';
export { PlanRun, DEFAULT_PLAN_QUIET_MS } from './plan-mode.js';
export type { PlanOptions, PlanLine, PlanWriteLine, PlanReconcileLine, PlanSummaryLine } from './plan-mode.js';
export {
  DEFAULT_HISTORY_RECONCILES_PER_OBJECT,
  DEFAULT_HISTORY_MAX_OBJECTS,
  DEFAULT_HISTORY_MAX_BYTES,
} from '../console/object-history.js';
export type {
  ObjectHistoryOptions,
  HistoryReconcile,
  ObjectHistoryStats,
  ObjectTimeline,
} from '../console/object-history.js';
export type { ObjectWrite, ReconcileScope } from '../console/reconcile-writes.js';
