/**
 * operator-runtime: what writing an operator needs — the client and its contracts, typed kinds,
 * the manager and controller builder, results and errors, leader election, logging, and the helpers
 * a reconciler calls. Everything else has its own entry point (`operator-runtime/client`, `/cache`,
 * `/workqueue`, `/controller`, `/manager`, `/leader-election`, `/sharding`, `/fleet`, `/helpers`, `/metrics`,
 * `/webhook`, `/rbac`, `/crd`, `/testing`, `/testing/fake-client`, `/testing/conformance`,
 * `/testing/simulation`, `/testing/chaos`, `/testing/fleet`, `/codegen`, `/eslint`):
 * package.json `exports`, which scripts/entry-points.test.ts holds this list to; the names each one
 * exports are in api/ (scripts/api-report.ts).
 */

// Client: the real client, the contracts fakes and caches implement, typed kinds, API errors.
export {
  KubeClient,
  kind,
  kinds,
  ApiError,
  isNotFound,
  isConflict,
  isAlreadyExists,
  isForbidden,
  ignoreNotFound,
  ApplyConflictError,
} from './client/index.js';
export type {
  Client,
  Reader,
  Writer,
  StatusWriter,
  ObjectWatcher,
  RestMapper,
  Kind,
  ObjectOf,
  KubeClientOptions,
  FromKubeconfigOptions,
  Kubeconfig,
  ObjectLike,
  GetOptions,
  ListOptions,
  ReadFreshness,
  WatchOptions,
  WatchEvent,
  WriteOptions,
  PatchOptions,
  ApplyOptions,
  DeleteOptions,
} from './client/index.js';

// Core (no entry of its own, so its public types live here): the base errors, the logger interface,
// object identity, time as a dependency, the one backoff shape.
export {
  OperatorRuntimeError,
  InvalidArgumentError,
  InvalidOptionError,
  AbortedError,
  AlreadyStartedError,
  keyOf,
  objectKey,
} from './core/index.js';
export type { Logger, KubeObject, ObjectMeta, ObjectRef, OwnerReference } from './core/index.js';
export type { Clock, TimerHandle, TimerOptions, BackoffOptions, ResolvedBackoff } from './core/index.js';

// Reconciling: results, terminal errors, predicates (grouped: `predicates.and(…)`), events.
export { requeueAfter, TerminalError, isTerminalError, EventRecorder } from './controller/index.js';
export type {
  Result,
  Reconciler,
  ReconcileRequest,
  ReconcileContext,
  ReconcileFunction,
  ObjectReconciler,
  ObjectReconcileContext,
  ObjectReconcileFunction,
  ClusterView,
  Predicate,
  EventType,
} from './controller/index.js';
export * as predicates from './controller/predicates.js';

// Running: the manager, its builder, leader election, signals, logging, metrics.
export { Manager, ControllerBuilder, runUntilSignal } from './manager/index.js';
export type { ManagerOptions, RunUntilSignalOptions, Runnable } from './manager/index.js';
export { LeaderElector, LeadershipLostError, isLeadershipLost } from './leader-election/index.js';
export type { LeaderElectorOptions } from './leader-election/index.js';
export { createLogger } from './logging/index.js';
export type { LoggerOptions } from './logging/index.js';
export { createMetricsRegistry } from './metrics/index.js';

// Helpers a reconciler calls; the rest (actions, spec hash, HTTP client…) is in operator-runtime/helpers.
export {
  handleFinalizer,
  addFinalizer,
  removeFinalizer,
  hasFinalizer,
  setCondition,
  getCondition,
  isConditionTrue,
  patchStatus,
  writeStatus,
  setControllerReference,
  createOrPatch,
  applyOwned,
  retryOnConflict,
} from './helpers/index.js';
export type { Condition, ConditionInput, HandleFinalizerOptions, FinalizerStep } from './helpers/index.js';
