import type { ResourceType } from '../client/discovery.js';
import type { Kind } from '../client/kind.js';
import { InvalidOptionError } from '../core/errors.js';
import type { KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { Controller } from '../controller/controller.js';
import type { MapFunction } from '../controller/enqueue-handlers.js';
import { DEFAULT_PRIMARY_PREDICATE, type Predicate } from '../controller/predicates.js';
import type { ObjectReconcileFunction, ObjectReconciler } from '../controller/reconciler.js';
import type { WriteVerb } from '../rbac/permission.js';
import { buildController } from './build-controller.js';
import type {
  ControllerBuilderOptions,
  ControllerDescription,
  ControllerSource,
  WriteDeclaration,
} from './controller-description.js';
import type { ControllerHost } from './controller-host.js';
import type { TriggerKey } from './trigger-source.js';

export interface ControllerWatchOptions<T = KubeObject> {
  /** All must pass for an event to enqueue. `for()` defaults to ignoring status-only updates. */
  readonly predicates?: readonly Predicate<T>[];
}

export type { ControllerBuilderOptions } from './controller-description.js';

/** What `writes()` may declare besides the verbs. */
export interface ControllerWritesOptions {
  /** The subresource written, e.g. `status` for `patchStatus`/`updateStatus`. @defaultValue the object itself */
  readonly subresource?: string;
}

const WRITE_VERBS: readonly WriteVerb[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];

/**
 * Wires a controller: its primary kind (`for`), kinds it creates and controls (`owns`, mapped to
 * the controlling owner), other kinds mapped by a function (`watches`), and keys from outside the
 * cluster (`reconcileOn`). One method per concept, options in an object. `complete(reconciler)`
 * adds the controller to its host (the manager), which is all the builder knows of it.
 *
 * `T` is the primary kind's object type: `.for(kinds.Deployment)` makes the reconciler's
 * `ctx.get()` a `Promise<Deployment | undefined>`.
 */
export class ControllerBuilder<T extends KubeObject = KubeObject> {
  private primary: ResourceType | undefined;
  private readonly sources: ControllerSource[] = [];
  private readonly eventFilters: Predicate[] = [];
  private readonly triggers: AsyncIterable<TriggerKey>[] = [];
  private readonly writeDeclarations: WriteDeclaration[] = [];
  private options: ControllerBuilderOptions = {};
  private completed = false;

  constructor(
    private readonly host: ControllerHost,
    private name: string,
  ) {
    if (!name) throw new InvalidOptionError('name', 'a controller needs a name');
  }

  /** Renames the controller (its metrics, logs and runnable carry the name). */
  named(name: string): this {
    if (!name) throw new InvalidOptionError('name', 'a controller needs a name');
    this.name = name;
    return this;
  }

  /** The primary kind; with a typed `Kind<T>` (e.g. `kinds.Deployment`) its predicates receive `T`. */
  for<P extends KubeObject = KubeObject>(type: Kind<P>, options: ControllerWatchOptions<P> = {}): ControllerBuilder<P> {
    if (this.primary) throw new InvalidOptionError('for', `controller ${this.name} already has a primary kind`);
    this.primary = type;
    // The informer of `type` only ever hands these predicates objects of that kind.
    this.sources.push({
      type,
      declaredBy: 'for',
      predicates: (options.predicates as readonly Predicate[] | undefined) ?? [DEFAULT_PRIMARY_PREDICATE],
    });
    // Same builder, now knowing its primary type (nothing else about it changes).
    return this as unknown as ControllerBuilder<P>;
  }

  /** A kind this controller creates and controls: its events requeue the controlling owner. Its predicates receive `O`. */
  owns<O extends KubeObject = KubeObject>(type: Kind<O>, options: ControllerWatchOptions<O> = {}): this {
    this.sources.push({ type, declaredBy: 'owns', predicates: (options.predicates ?? []) as readonly Predicate[] });
    return this;
  }

  /** Another kind, mapped to keys by `map`; `map` and the predicates receive `W`. */
  watches<W extends KubeObject = KubeObject>(
    type: Kind<W>,
    map: MapFunction<W>,
    options: ControllerWatchOptions<W> = {},
  ): this {
    this.sources.push({
      type,
      declaredBy: 'watches',
      predicates: (options.predicates ?? []) as readonly Predicate[],
      map: map as MapFunction<KubeObject>,
    });
    return this;
  }

  /**
   * Declares writes the reconciler makes, for RBAC (kubebuilder's `+kubebuilder:rbac` markers):
   * `.writes(kinds.Secret, ['create'])`, `.writes(DATABASE, ['patch'], { subresource: 'status' })`.
   * Reads need no declaration: `for`/`owns`/`watches` already give list and watch, and the
   * manager's client answers reads of those kinds from the cache. Calls accumulate.
   */
  writes(type: ResourceType, verbs: readonly WriteVerb[], options: ControllerWritesOptions = {}): this {
    if (verbs.length === 0)
      throw new InvalidOptionError('writes', `controller ${this.name}: no verbs for ${type.kind}`);
    const unknown = verbs.filter((v) => !WRITE_VERBS.includes(v));
    if (unknown.length > 0)
      throw new InvalidOptionError(
        'writes',
        `controller ${this.name}: ${unknown.join(', ')} on ${type.kind} is not a write verb (one of ${WRITE_VERBS.join(', ')})`,
      );
    if (options.subresource !== undefined && !/^[a-z][a-z0-9]*$/.test(options.subresource)) {
      throw new InvalidOptionError(
        'writes',
        `controller ${this.name}: subresource ${JSON.stringify(options.subresource)} is not a name like "status"`,
      );
    }
    this.writeDeclarations.push({ type, verbs: [...verbs], ...omitUndefined({ subresource: options.subresource }) });
    return this;
  }

  /**
   * A filter every event of every kind source (`for`, `owns`, `watches`) must pass, besides the
   * source's own predicates (controller-runtime's `WithEventFilter`). Calls accumulate (all must pass).
   */
  withEventFilter(predicate: Predicate): this {
    this.eventFilters.push(predicate);
    return this;
  }

  /**
   * Reconciles each key the iterable yields (an `ns/name` key or a reference to the primary
   * kind): a trigger from outside the cluster, like kube-rs `reconcile_on` or controller-runtime's
   * `source.Channel`. Iterated while the controller runs; its `return()` is called when the
   * controller stops. If it throws, the error is logged and that trigger ends; the controller runs on.
   */
  reconcileOn(keys: AsyncIterable<TriggerKey>): this {
    this.triggers.push(keys);
    return this;
  }

  withOptions(options: ControllerBuilderOptions): this {
    this.options = { ...this.options, ...options };
    return this;
  }

  /**
   * Creates the controller and adds it to the host. Its informers are created now when their scope
   * needs no discovery, so the manager's cache sync covers them; otherwise when it starts.
   */
  complete(reconciler: ObjectReconciler<T> | ObjectReconcileFunction<T>): Controller {
    const primary = this.requirePrimary('complete');
    if (this.completed) throw new InvalidOptionError('complete', `controller ${this.name} is already complete`);
    this.completed = true;
    return buildController(this.host, this.describe(primary), reconciler);
  }

  /** What was declared, as a plain read-only description (copies: the builder's later calls do not change it). */
  private describe(primary: ResourceType): ControllerDescription {
    return {
      name: this.name,
      primary,
      sources: [...this.sources],
      eventFilters: [...this.eventFilters],
      triggers: [...this.triggers],
      writes: [...this.writeDeclarations],
      options: this.options,
    };
  }

  private requirePrimary(what: string): ResourceType {
    if (!this.primary) throw new InvalidOptionError('for', `controller ${this.name}: call for(kind) before ${what}()`);
    return this.primary;
  }
}
