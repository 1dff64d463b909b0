import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../core/object-key.js';
import { buildController } from './build-controller.js';
import type { Controller } from './controller.js';
import { ControllerDeclaration, type ControllerWatchOptions } from './controller-declaration.js';
import type { ControllerDescription } from './controller-description.js';
import type { ControllerHost, ControllerTarget } from './controller-host.js';
import { hostTarget } from './host-target.js';
import type { ObjectReconcileFunction, ObjectReconciler, ReconcileRequest } from './reconciler.js';
import type { TriggerKey } from './trigger-source.js';

export type { ControllerBuilderOptions } from './controller-description.js';
export type { ControllerWatchOptions, ControllerWritesOptions } from './controller-declaration.js';

/** Makes the target of one completed controller (the host's, or a fleet's), recording its permissions. */
export type ControllerTargetFactory<R extends ReconcileRequest> = (d: ControllerDescription) => ControllerTarget<R>;

/**
 * Wires a controller: its primary kind (`for`), kinds it creates and controls (`owns`, mapped to
 * the controlling owner), other kinds mapped by a function (`watches`), and keys from outside the
 * cluster (`reconcileOn`). One method per concept, options in an object. `complete(reconciler)`
 * adds the controller to its target, which is all the builder knows of where it runs.
 *
 * One builder for the host and for a fleet (the host is a fleet of one): `manager.controller()`
 * reconciles the host cluster's objects, `manager.fleetController()` every member's, through the
 * same code. `T` is the primary kind's object type: `.for(kinds.Deployment)` makes the
 * reconciler's `ctx.get()` a `Promise<Deployment | undefined>`. `R` is the request the reconciler
 * is given: a fleet controller's always names its cluster (`FleetRequest`).
 */
export class ControllerBuilder<
  T extends KubeObject = KubeObject,
  R extends ReconcileRequest = ReconcileRequest,
> extends ControllerDeclaration {
  private readonly target: ControllerTargetFactory<R>;

  /**
   * `host`: the host cluster's manager; or the factory of another target (a fleet's). Users get a
   * builder from `manager.controller()` or `manager.fleetController()`.
   * @internal
   */
  constructor(host: ControllerHost | ControllerTargetFactory<R>, name: string) {
    super(name);
    // Built from a ControllerHost, it is a host builder (`R` is `ReconcileRequest`, the default):
    // the manager's `controller()` never names another `R`.
    this.target = typeof host === 'function' ? host : (d) => hostTarget(host, d) as unknown as ControllerTarget<R>;
  }

  /** The primary kind; with a typed `Kind<T>` (e.g. `kinds.Deployment`) its predicates receive `T`. */
  for<P extends KubeObject = KubeObject>(
    type: Kind<P>,
    options: ControllerWatchOptions<P> = {},
  ): ControllerBuilder<P, R> {
    this.declareFor(type, options as ControllerWatchOptions<never>);
    // Same builder, now knowing its primary type (nothing else about it changes).
    return this as unknown as ControllerBuilder<P, R>;
  }

  /**
   * Reconciles each key the iterable yields (an `ns/name` key or a reference to the primary
   * kind): a trigger from outside the cluster, like kube-rs `reconcile_on` or controller-runtime's
   * `source.Channel`. Iterated while the controller runs; its `return()` is called when the
   * controller stops. If it throws, the error is logged and that trigger ends; the controller runs on.
   * Host controllers only: a fleet controller refuses it when it completes.
   */
  reconcileOn(keys: AsyncIterable<TriggerKey>): this {
    this.triggers.push(keys);
    return this;
  }

  /**
   * Creates the controller and adds it to its target. A host controller's informers are created now
   * when their scope needs no discovery, so the manager's cache sync covers them; otherwise when it
   * starts. A fleet controller's handlers go on each member's informers as it connects.
   */
  complete(reconciler: ObjectReconciler<T, R> | ObjectReconcileFunction<T, R>): Controller {
    const d = this.completeDescription();
    return buildController(this.target(d), d, reconciler);
  }
}
