import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../core/object-key.js';
import type { Controller } from '../controller/controller.js';
import type { ObjectReconcileFunction, ObjectReconciler } from '../controller/reconciler.js';
import { buildController } from './build-controller.js';
import { ControllerDeclaration, type ControllerWatchOptions } from './controller-declaration.js';
import type { ControllerHost } from './controller-host.js';
import type { TriggerKey } from './trigger-source.js';

export type { ControllerBuilderOptions } from './controller-description.js';
export type { ControllerWatchOptions, ControllerWritesOptions } from './controller-declaration.js';

/**
 * Wires a controller: its primary kind (`for`), kinds it creates and controls (`owns`, mapped to
 * the controlling owner), other kinds mapped by a function (`watches`), and keys from outside the
 * cluster (`reconcileOn`). One method per concept, options in an object. `complete(reconciler)`
 * adds the controller to its host (the manager), which is all the builder knows of it.
 *
 * `T` is the primary kind's object type: `.for(kinds.Deployment)` makes the reconciler's
 * `ctx.get()` a `Promise<Deployment | undefined>`.
 */
export class ControllerBuilder<T extends KubeObject = KubeObject> extends ControllerDeclaration {
  constructor(
    private readonly host: ControllerHost,
    name: string,
  ) {
    super(name);
  }

  /** The primary kind; with a typed `Kind<T>` (e.g. `kinds.Deployment`) its predicates receive `T`. */
  for<P extends KubeObject = KubeObject>(type: Kind<P>, options: ControllerWatchOptions<P> = {}): ControllerBuilder<P> {
    this.declareFor(type, options as ControllerWatchOptions<never>);
    // Same builder, now knowing its primary type (nothing else about it changes).
    return this as unknown as ControllerBuilder<P>;
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

  /**
   * Creates the controller and adds it to the host. Its informers are created now when their scope
   * needs no discovery, so the manager's cache sync covers them; otherwise when it starts.
   */
  complete(reconciler: ObjectReconciler<T> | ObjectReconcileFunction<T>): Controller {
    return buildController(this.host, this.completeDescription(), reconciler);
  }
}
