/**
 * The seam between `ControllerBuilder` and whatever runs its controller (the `Manager`): the builder
 * depends on this small interface, never on the manager's class, so neither imports the other and
 * the manager's cache, clock and registry need not be public for the builder's sake.
 */
import type { Registry } from 'prom-client';
import type { KindLabelSelector } from '../cache/informer-cache.js';
import type { SharedInformer } from '../cache/informer.js';
import type { ResourceType } from '../client/discovery.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import type { ControllerView } from '../console/controller-view.js';
import type { PermissionRequirement } from '../rbac/permission.js';
import type { Runnable, RunnableOptions } from './runnable.js';
import type { ShardingHost } from '../sharding/sharding.js';

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

export interface ControllerHost {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly gracefulShutdownMs: number;
  /** The view a console keeps of the controller named, or undefined without a console. */
  trackController(name: string): ControllerView | undefined;
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
  /** Runs the controller (leader-only unless `needLeaderElection: false`). */
  add(runnable: Runnable, options: RunnableOptions): void;
  /** Records what the controller needs RBAC to allow (see `Manager.permissions()`). */
  requirePermissions(...requirements: PermissionRequirement[]): void;
  /** Present in a sharded manager: controllers with `.for(kind)` reconcile only this replica's keys. */
  readonly sharding?: ShardingHost;
}
