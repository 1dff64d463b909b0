/**
 * The `Manager` contract: what an operator's code uses of its manager, as controller-runtime's
 * `manager.Manager` interface, with the implementation (`ControllerManager`) behind it. `new
 * Manager(options)` builds one; the type names only the interface, so what the manager does inside
 * (its groups, terms, endpoints, host cluster) can change without a public change.
 */
import type { Registry } from 'prom-client';
import type { InformerCache } from '../cache/informer-cache.js';
import type { InformerFactory } from '../cache/informer-factory.js';
import type { Client } from '../client/contracts.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { ControllerBuilder } from '../controller/controller-builder.js';
import type { EventRecorder } from '../controller/event-recorder.js';
import type { PermissionRequirement } from '../rbac/permission.js';
import type { PlanRun } from './plan-mode.js';
import type { ShardMembership } from '../sharding/sharding-options.js';
import type { Webhooks } from '../webhook/webhooks.js';
import type { FleetView } from '../fleet/fleet.js';
import type { FleetControllerBuilder } from '../fleet/fleet-controller-builder.js';
import type { MemberEventRecorder } from '../fleet/member-event-recorder.js';
import { ControllerManager } from './controller-manager.js';
import type { ManagerEndpoints } from './endpoints.js';
import type { HealthCheck } from './health-checks.js';
import type { ManagerOptions } from './manager-options.js';
import type { Runnable, RunnableOptions } from './runnable.js';

export { DEFAULT_HEALTH_PORT, DEFAULT_METRICS_PORT, type ManagerEndpoints } from './endpoints.js';
export {
  DEFAULT_MANAGER_GRACEFUL_SHUTDOWN_MS,
  DEFAULT_UNHEALTHY_WATCH_FAILURES,
  type ManagerOptions,
} from './manager-options.js';

/**
 * Runs an operator's parts in order — endpoints (/metrics, /healthz, /readyz, webhooks, console),
 * the host cluster's caches (until synced), runnables every replica runs, then leader-only work and
 * controllers once elected — and stops them in reverse on a signal. Two managers share nothing.
 */
export interface Manager {
  // The host cluster.
  /**
   * Reads from the cache (starting a kind's informer on first use) and waits, bounded, for its own
   * earlier writes (docs/read-your-own-writes.md); writes to the API server — controller-runtime's
   * delegating client. With `sharding`, reads of a sharded primary kind go to the API server.
   */
  readonly client: Client;
  /** The API client itself: reads that must not come from the cache (a quorum read, a subresource). */
  readonly apiClient: Client;
  /** Cache-backed reads (get/list/byIndex) of everything the manager watches. */
  readonly cache: InformerCache;
  /** The host cluster's informers (one per kind and selector), shared by the cache and the controllers. */
  readonly informers: InformerFactory;
  /** The namespaces the cache is restricted to (`namespaces` option); undefined: cluster-wide. */
  readonly namespaces: readonly string[] | undefined;

  // What the operator's parts share.
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock: Clock;

  // Building the operator.
  /** Starts building a controller of the host cluster's objects; `complete()` adds it to this manager. */
  controller(name: string): ControllerBuilder;
  /**
   * Starts building a fleet controller: the same declarations as `controller()`, reconciling the
   * `for` kind's objects in every member cluster, one queue for all of them (keys
   * `cluster/namespace/name`). Needs the `fleet` option.
   */
  fleetController(name: string): FleetControllerBuilder;
  /** An event recorder writing through the API client, as `component`. */
  eventRecorder(component: string): EventRecorder;
  /**
   * Events about objects in member clusters, as `component`: `recorder.in(ctx.cluster).event(…)`
   * writes to that member's API server. Declares `create`/`patch` of Events in
   * `memberPermissions()`. Needs the `fleet` option.
   */
  memberEventRecorder(component: string): MemberEventRecorder;
  /** Admission and conversion handlers (`validate`, `mutate`, `convert`), served with the `webhook` option. */
  readonly webhooks: Webhooks;

  // Lifecycle.
  /** Adds a runnable; runnables are leader-only by default, like controller-runtime's. */
  add(runnable: Runnable, options?: RunnableOptions): void;
  /** A check served on /healthz (liveness). */
  addHealthCheck(name: string, check: HealthCheck): void;
  /** A check served on /readyz (readiness). */
  addReadyCheck(name: string, check: HealthCheck): void;
  /**
   * Runs everything until `signal` aborts, then stops in reverse order within the graceful
   * shutdown period. Rejects if a runnable fails, caches do not sync in time, or leadership is lost
   * (after leader-only work stopped) — the process should then exit non-zero.
   */
  start(signal: AbortSignal): Promise<void>;
  /** Where the endpoints listen, once started. */
  readonly endpoints: ManagerEndpoints;

  // Optional features.
  /** The member clusters (`fleet` option): each connected one's view and every engaged one's health. */
  readonly fleet: FleetView | undefined;
  /** This replica's ring membership (`sharding` option). */
  readonly sharding: ShardMembership | undefined;
  /** Plan mode's run (`plan` option): the writes planned so far. */
  readonly plan: PlanRun | undefined;

  // RBAC.
  /**
   * Records what the operator needs RBAC to allow. Controllers, the event recorder, leader election
   * and secure metrics record theirs; call it for anything else the operator does. Never changes
   * what the manager does.
   */
  requirePermissions(...requirements: PermissionRequirement[]): void;
  /** Everything recorded so far for the host cluster: what `rbacManifests` (operator-runtime/rbac) turns into Roles. */
  permissions(): readonly PermissionRequirement[];
  /** What fleet controllers need RBAC to allow in every member cluster. */
  memberPermissions(): readonly PermissionRequirement[];
}

/**
 * Builds a manager from its options (validated now; nothing starts until `start(signal)`). The
 * construction builds no informer factory, cache or client itself: the host `Cluster` does.
 */
export const Manager: new (options: ManagerOptions) => Manager = ControllerManager;
