import type { HandlerRegistration } from '../cache/informer.js';
import type { ResourceType } from '../client/discovery.js';
import { InvalidOptionError } from '../core/errors.js';
import type { KubeObject } from '../core/object-key.js';
import { Controller } from '../controller/controller.js';
import { enqueueHandler, mapToControllingOwner, mapToSelf, type MapFunction } from '../controller/enqueue-handlers.js';
import { DEFAULT_PRIMARY_PREDICATE, type Predicate } from '../controller/predicates.js';
import type { ReconcileFunction, Reconciler } from '../controller/reconciler.js';
import type { RateLimiter } from '../workqueue/rate-limiter.js';
import type { Manager } from './manager.js';

export interface WatchOptions<T = KubeObject> {
  /** All must pass for an event to enqueue. `for()` defaults to ignoring status-only updates. */
  readonly predicates?: readonly Predicate<T>[];
}

export interface ControllerBuilderOptions {
  /** @defaultValue 1 */
  readonly maxConcurrentReconciles?: number;
  readonly rateLimiter?: RateLimiter;
  /** 0: no timeout. @defaultValue 0 */
  readonly reconcileTimeoutMs?: number;
  /** Run on every replica instead of only on the leader. @defaultValue true */
  readonly needLeaderElection?: boolean;
}

interface Source {
  readonly type: ResourceType;
  readonly predicates: readonly Predicate[];
  /** Resolved at start, once discovery can say whether the primary kind is namespaced. */
  readonly map: (primaryNamespaced: boolean) => MapFunction<KubeObject>;
}

/**
 * Wires a controller: its primary kind (`for`), kinds it creates and controls (`owns`, mapped to
 * the controlling owner), and other kinds mapped by a function (`watches`). One method per concept,
 * options in an object. `complete(reconciler)` adds the controller to the manager.
 */
export class ControllerBuilder {
  private primary: ResourceType | undefined;
  private readonly sources: Source[] = [];
  private options: ControllerBuilderOptions = {};

  constructor(
    private readonly manager: Manager,
    private readonly name: string,
  ) {}

  for(type: ResourceType, options: WatchOptions = {}): this {
    if (this.primary) throw new InvalidOptionError('for', `controller ${this.name} already has a primary kind`);
    this.primary = type;
    this.sources.push({ type, predicates: options.predicates ?? [DEFAULT_PRIMARY_PREDICATE], map: () => mapToSelf });
    return this;
  }

  owns(type: ResourceType, options: WatchOptions = {}): this {
    this.sources.push({
      type,
      predicates: options.predicates ?? [],
      map: (primaryNamespaced) => mapToControllingOwner({ ...this.requirePrimary('owns'), clusterScoped: !primaryNamespaced }),
    });
    return this;
  }

  watches<T extends KubeObject = KubeObject>(type: ResourceType, map: MapFunction<T>, options: WatchOptions<T> = {}): this {
    this.sources.push({ type, predicates: (options.predicates ?? []) as readonly Predicate[], map: () => map as MapFunction<KubeObject> });
    return this;
  }

  withOptions(options: ControllerBuilderOptions): this {
    this.options = { ...this.options, ...options };
    return this;
  }

  /** Creates the controller and adds it to the manager; its informers are created now, so the manager's cache sync covers them. */
  complete(reconciler: Reconciler | ReconcileFunction): Controller {
    const primary = this.requirePrimary('complete');
    const manager = this.manager;
    const consoleView = manager.console?.trackController(this.name);
    const controller = new Controller({
      name: this.name,
      reconciler: typeof reconciler === 'function' ? { reconcile: reconciler } : reconciler,
      clock: manager.clock,
      logger: manager.logger,
      registry: manager.registry,
      gracefulShutdownMs: manager.gracefulShutdownMs,
      ...(this.options.maxConcurrentReconciles !== undefined ? { maxConcurrentReconciles: this.options.maxConcurrentReconciles } : {}),
      ...(this.options.rateLimiter ? { rateLimiter: this.options.rateLimiter } : {}),
      ...(this.options.reconcileTimeoutMs !== undefined ? { reconcileTimeoutMs: this.options.reconcileTimeoutMs } : {}),
      ...(consoleView ? { observer: consoleView } : {}),
    });
    consoleView?.attach(controller.queue, controller.workerCount);
    const sources = [...this.sources];
    for (const source of sources) manager.cache.informersFor(source.type);

    manager.add(
      {
        async start(signal) {
          const registrations: HandlerRegistration[] = [];
          try {
            const primaryNamespaced = sources.some((s) => s.type !== primary) ? await manager.isNamespaced(primary, signal) : true;
            for (const source of sources) {
              const handler = enqueueHandler(controller.queue, source.map(primaryNamespaced), source.predicates);
              for (const informer of manager.cache.informersFor(source.type)) {
                registrations.push(informer.addEventHandler(handler, { name: `${controller.name}:${source.type.kind}` }));
              }
            }
            await controller.start(signal);
          } finally {
            for (const r of registrations) r.remove();
          }
        },
      },
      { name: `controller/${this.name}`, needLeaderElection: this.options.needLeaderElection ?? true },
    );
    return controller;
  }

  private requirePrimary(what: string): ResourceType {
    if (!this.primary) throw new InvalidOptionError('for', `controller ${this.name}: call for(kind) before ${what}()`);
    return this.primary;
  }
}
