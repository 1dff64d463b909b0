/**
 * The seams between the controller builder and what runs its controllers. `ControllerHost` is what
 * the host cluster's manager gives a `ControllerBuilder`; `ControllerTarget` is what the builder
 * builds against, for the host (a fleet of one) and for a fleet alike: the clusters a controller's
 * keys come from, how a request finds its cluster, and how the controller joins its runner. The
 * builder depends on these interfaces only, never on the manager, the fleet or sharding.
 */
import type { Registry } from 'prom-client';
import type { HandlerRegistration, SharedInformer } from '../cache/informer.js';
import type { KindLabelSelector } from '../cache/informer-cache.js';
import type { ResourceType } from '../client/discovery.js';
import type { ClusterView } from '../cluster/cluster-view.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import type { PermissionRequirement } from '../rbac/permission.js';
import type { Controller, ControllerOptions, ReconcileObserver } from './controller.js';
import type { HistoryTrigger } from './reconcile-trigger.js';
import type { Reconciler, ReconcileRequest } from './reconciler.js';
import type { Result } from './result.js';

/** Cache options of one controller's sources; they narrow what its informers hold, never widen the manager's. */
export interface ControllerCacheOptions {
  /**
   * Watch only the objects of these kinds that match a server-side label selector (e.g. owned
   * Secrets labelled `app.kubernetes.io/managed-by=<operator>`), as the manager's
   * `labelSelectorsByKind` does for the whole manager. A kind listed here gets its own informer
   * when the manager's selector for it differs. @defaultValue the manager's selectors
   */
  readonly labelSelectorsByKind?: readonly KindLabelSelector[];
  /**
   * A label selector ANDed with whatever selector the kind has (the manager's or the controller's):
   * a sharded controller's primary informer holds only this replica's objects. @defaultValue none
   */
  readonly shardSelector?: KindLabelSelector;
}

/** What a console keeps of one controller: it hears every reconcile and reads the live queue. */
export interface ControllerConsoleView extends ReconcileObserver {
  attach(queue: Controller['queue'], workers: number): void;
  /** Told what put `key` in the queue (the per-object history's trigger). */
  noteTrigger?(key: string, trigger: HistoryTrigger): void;
  /**
   * Runs one reconcile of `key`: the per-object history captures the writes made inside `run`,
   * and plan mode reconciles each key once (it may skip `run`).
   */
  around?(key: string, reconcileID: string, run: () => Promise<Result | void>): Promise<Result | void>;
}

/** A sharded primary kind's gate: admits only the keys this replica owns now. */
export interface ControllerGate {
  wrap(reconciler: Reconciler): Reconciler;
  /** Watches the primary informers for hand-overs; returns the detach. */
  attach(
    informers: readonly SharedInformer<KubeObject>[],
    signal: AbortSignal,
    enqueue: (key: string) => void,
  ): () => void;
}

/** What the controller builder needs of sharding (the manager's `sharding` option). */
export interface ControllerSharding {
  /** The gate of a sharded primary kind (one per kind, shared by its controllers). */
  gateFor(type: ResourceType): ControllerGate;
  /** The informers holding this replica's share of a sharded primary kind, once the ring's mode is known. */
  primaryInformers(
    type: ResourceType,
    fromCache: (labelSelector: string | undefined) => Promise<SharedInformer<KubeObject>[]>,
  ): Promise<SharedInformer<KubeObject>[]>;
}

/** How a controller joins its runner: the manager's `RunnableOptions`. */
export interface ControllerRunnableOptions {
  readonly name: string;
  readonly needLeaderElection: boolean;
  readonly sharded?: boolean;
}

/** A controller as its runner starts it. */
export interface ControllerRunnable {
  start(signal: AbortSignal): Promise<void>;
}

/** What the host cluster's manager gives `ControllerBuilder`s. */
export interface ControllerHost {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly gracefulShutdownMs: number;
  /** The host cluster as a reconcile sees it (`ctx.cluster`): its name is empty, as no member's can be. */
  readonly cluster: ClusterView;
  /** The view a console keeps of the controller named, or undefined without a console. */
  trackController(name: string): ControllerConsoleView | undefined;
  /**
   * Creates the informers of a kind now, when that needs no discovery, so the host's cache sync
   * covers them; otherwise `informersFor` creates them once the kind's scope is known.
   */
  prepareInformers(type: ResourceType, cache: ControllerCacheOptions): void;
  /** The informers of a kind (one, or one per cached namespace for namespaced kinds). */
  informersFor(
    type: ResourceType,
    cache: ControllerCacheOptions,
    signal: AbortSignal,
  ): Promise<SharedInformer<KubeObject>[]>;
  /** Whether a kind is namespaced, from the REST mapper. */
  isNamespaced(type: ResourceType, signal: AbortSignal): Promise<boolean>;
  /**
   * Waits (bounded) until `informers` have observed the cluster client's own writes of `key`: what
   * makes `ctx.get()` read your own writes. Absent: `ctx.get()` does not wait.
   */
  observedOwnWrites?(informers: readonly SharedInformer<KubeObject>[], key: string, signal: AbortSignal): Promise<void>;
  /** Runs the controller (leader-only unless `needLeaderElection: false`). */
  add(runnable: ControllerRunnable, options: ControllerRunnableOptions): void;
  /** Records what the controller needs RBAC to allow (see `Manager.permissions()`). */
  requirePermissions(...requirements: PermissionRequirement[]): void;
  /** Present in a sharded manager: controllers with `.for(kind)` reconcile only this replica's keys. */
  readonly sharding?: ControllerSharding;
}

/** One cluster a controller's keys come from: the host, or one member of a fleet. */
export interface ControllerCluster {
  /** What a reconcile of this cluster's keys sees as `ctx.cluster`. */
  readonly view: ClusterView;
  /** Put before this cluster's keys in the controller's one queue: '' for the host, `name/` for a member. */
  readonly keyPrefix: string;
  /** Whether a kind is namespaced in this cluster. */
  isNamespaced(type: ResourceType, signal: AbortSignal): Promise<boolean>;
  /** The informers a source of `type` reads in this cluster. */
  informersFor(type: ResourceType, signal: AbortSignal): Promise<readonly SharedInformer<KubeObject>[]>;
  /** The informers `ctx.get()` reads the primary object from. */
  primaryInformers(): readonly SharedInformer<KubeObject>[];
  /** Waits (bounded) until `informers` have observed this cluster's client's own writes of `key`. */
  observedOwnWrites?(informers: readonly SharedInformer<KubeObject>[], key: string, signal: AbortSignal): Promise<void>;
  /** Runs one reconcile of this cluster, under a signal that also ends when the cluster leaves. */
  track(signal: AbortSignal, reconcile: (signal: AbortSignal) => Promise<Result | void>): Promise<Result | void>;
}

/** Puts a controller's handlers on one cluster's informers; resolves with what to remove. */
export type AttachSources = (cluster: ControllerCluster, signal: AbortSignal) => Promise<HandlerRegistration[]>;

/** The Controller options a target decides (a fleet's: keys with a cluster, fairness, a per-cluster cap). */
export type TargetControllerOptions = Partial<
  Pick<
    ControllerOptions,
    'requests' | 'fairnessKey' | 'maxConcurrentReconcilesPerGroup' | 'maxConcurrentReconciles' | 'reconcileTimeoutMs'
  >
>;

/**
 * What one controller is built against (made from its description when it completes, after the
 * target recorded its permissions and prepared its informers). `R` is the request its reconciler
 * is given: a host controller's names no cluster, a fleet controller's always does.
 */
export interface ControllerTarget<R extends ReconcileRequest> {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly gracefulShutdownMs: number;
  readonly view: ControllerConsoleView | undefined;
  readonly controllerOptions: TargetControllerOptions;
  /** A sharded host controller's gate. */
  readonly gate?: ControllerGate;
  /** The request typed for the reconciler, and its cluster; undefined when its cluster cannot be reconciled now (it left). */
  resolve(request: ReconcileRequest): { readonly request: R; readonly cluster: ControllerCluster } | undefined;
  /**
   * Attaches the sources to every cluster of the controller while it runs (the host's at once,
   * each member's as it connects); resolves with the detach, which the controller calls as it stops.
   */
  connect(attach: AttachSources, enqueue: (key: string) => void, signal: AbortSignal): Promise<() => void>;
  /** Hands the controller's runnable to its runner. */
  add(runnable: ControllerRunnable): void;
}
