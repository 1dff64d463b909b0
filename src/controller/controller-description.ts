/**
 * What a `ControllerBuilder` records: a plain, read-only description of one controller, which
 * `buildController` turns into the controller, its runnable, its console view and its shard gate.
 */
import type { ResourceType } from '../client/discovery.js';
import type { KubeObject } from '../core/object-key.js';
import type { ReconcileObserver } from './controller.js';
import type { MapFunction } from './enqueue-handlers.js';
import type { Predicate } from './predicates.js';
import type { WriteVerb } from '../rbac/permission.js';
import type { RateLimiter } from '../workqueue/rate-limiter.js';
import type { ControllerCacheOptions } from './controller-host.js';
import type { TriggerKey } from './trigger-source.js';

export interface ControllerBuilderOptions {
  /** @defaultValue {@link DEFAULT_MAX_CONCURRENT_RECONCILES} */
  readonly maxConcurrentReconciles?: number;
  readonly rateLimiter?: RateLimiter;
  /** 0: no timeout. @defaultValue {@link DEFAULT_RECONCILE_TIMEOUT_MS} */
  readonly reconcileTimeoutMs?: number;
  /** Run on every replica instead of only on the leader. @defaultValue true */
  readonly needLeaderElection?: boolean;
  /** What this controller's informers hold (e.g. only labelled owned objects). @defaultValue the manager's cache */
  readonly cache?: ControllerCacheOptions;
  /**
   * In a manager with `sharding`: reconcile only the keys this replica owns (on every replica), or,
   * with false, all of them like an unsharded controller. @defaultValue true when the manager is sharded
   */
  readonly sharded?: boolean;
  /**
   * Told about every finished reconcile (beside the operator console, when it is on); sharded, not
   * about the keys this replica's gate skipped as another's. Must not throw or block.
   */
  readonly observer?: ReconcileObserver;
  /**
   * Reconcile what changed (watch events) before what a list or a resync only announced (the
   * initial list, a new leader's replay of the cache), with aging so nothing starves; false: first
   * in first out. @defaultValue true
   */
  readonly priorityQueue?: boolean;
  /**
   * A trace span per reconcile when `@opentelemetry/api` is installed (see `ControllerOptions.tracing`);
   * false: none from this controller. @defaultValue {@link DEFAULT_CONTROLLER_TRACING}
   */
  readonly tracing?: boolean;
  /**
   * A fleet controller's cap on the reconciles of one member cluster at once (see
   * `FleetControllerOptions`); a host controller refuses it. @defaultValue `defaultMaxConcurrentReconcilesPerCluster` for a fleet controller
   */
  readonly maxConcurrentReconcilesPerCluster?: number;
}

/** A kind the controller watches, and how its events become keys of the primary kind. */
export interface ControllerSource {
  readonly type: ResourceType;
  /** Which builder method added it: `for` maps to itself, `owns` to the controlling owner, `watches` by `map`. */
  readonly declaredBy: 'for' | 'owns' | 'watches';
  readonly predicates: readonly Predicate[];
  /** `watches` only. */
  readonly map?: MapFunction<KubeObject>;
}

/** Writes declared with `writes()`, for RBAC. */
export interface WriteDeclaration {
  readonly type: ResourceType;
  readonly verbs: readonly WriteVerb[];
  readonly subresource?: string;
}

export interface ControllerDescription {
  readonly name: string;
  /** The `for` kind. */
  readonly primary: ResourceType;
  /** In the order declared; the primary's source among them. */
  readonly sources: readonly ControllerSource[];
  /** `withEventFilter` predicates: every event of every source must pass them too. */
  readonly eventFilters: readonly Predicate[];
  /** `reconcileOn` key sources. */
  readonly triggers: readonly AsyncIterable<TriggerKey>[];
  readonly writes: readonly WriteDeclaration[];
  readonly options: ControllerBuilderOptions;
}
