import type { HandlerRegistration, SharedInformer } from '../cache/informer.js';
import type { ResourceType } from '../client/discovery.js';
import type { Kind } from '../client/kind.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { objectKey, type KubeObject, type ObjectRef } from '../core/object-key.js';
import { Controller, type ReconcileObserver } from '../controller/controller.js';
import { enqueueHandler, mapToControllingOwner, mapToSelf, type MapFunction } from '../controller/enqueue-handlers.js';
import { DEFAULT_PRIMARY_PREDICATE, type Predicate } from '../controller/predicates.js';
import type { ObjectReconcileContext, ObjectReconcileFunction, ObjectReconciler, ReconcileContext, Reconciler } from '../controller/reconciler.js';
import type { PermissionRequirement, WriteVerb } from '../rbac/permission.js';
import type { RateLimiter } from '../workqueue/rate-limiter.js';
import type { ControllerCacheOptions, ControllerHost } from './controller-host.js';
import { pumpTriggers, type TriggerKey } from './trigger-source.js';

export interface WatchOptions<T = KubeObject> {
  /** All must pass for an event to enqueue. `for()` defaults to ignoring status-only updates. */
  readonly predicates?: readonly Predicate<T>[];
}

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
}

/** What `writes()` may declare besides the verbs. */
export interface WritesOptions {
  /** The subresource written, e.g. `status` for `patchStatus`/`updateStatus`. @defaultValue the object itself */
  readonly subresource?: string;
}

const WRITE_VERBS: readonly WriteVerb[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];

interface Source {
  readonly type: ResourceType;
  /** Which builder method added it (for `Manager.permissions()` reasons). */
  readonly declaredBy: 'for' | 'owns' | 'watches';
  readonly predicates: readonly Predicate[];
  /** Resolved at start, once discovery can say whether the primary kind is namespaced. */
  readonly map: (primaryNamespaced: boolean) => MapFunction<KubeObject>;
}

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
  private readonly sources: Source[] = [];
  private readonly eventFilters: Predicate[] = [];
  private readonly triggers: AsyncIterable<TriggerKey>[] = [];
  private readonly writeDeclarations: { readonly type: ResourceType; readonly verbs: readonly WriteVerb[]; readonly subresource?: string }[] = [];
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
  for<P extends KubeObject = KubeObject>(type: Kind<P>, options: WatchOptions<P> = {}): ControllerBuilder<P> {
    if (this.primary) throw new InvalidOptionError('for', `controller ${this.name} already has a primary kind`);
    this.primary = type;
    // The informer of `type` only ever hands these predicates objects of that kind.
    this.sources.push({ type, declaredBy: 'for', predicates: (options.predicates as readonly Predicate[] | undefined) ?? [DEFAULT_PRIMARY_PREDICATE], map: () => mapToSelf });
    // Same builder, now knowing its primary type (nothing else about it changes).
    return this as unknown as ControllerBuilder<P>;
  }

  /** A kind this controller creates and controls: its events requeue the controlling owner. Its predicates receive `O`. */
  owns<O extends KubeObject = KubeObject>(type: Kind<O>, options: WatchOptions<O> = {}): this {
    this.sources.push({
      type,
      declaredBy: 'owns',
      predicates: (options.predicates ?? []) as readonly Predicate[],
      map: (primaryNamespaced) => mapToControllingOwner({ ...this.requirePrimary('owns'), clusterScoped: !primaryNamespaced }),
    });
    return this;
  }

  /** Another kind, mapped to keys by `map`; `map` and the predicates receive `W`. */
  watches<W extends KubeObject = KubeObject>(type: Kind<W>, map: MapFunction<W>, options: WatchOptions<W> = {}): this {
    this.sources.push({ type, declaredBy: 'watches', predicates: (options.predicates ?? []) as readonly Predicate[], map: () => map as MapFunction<KubeObject> });
    return this;
  }

  /**
   * Declares writes the reconciler makes, for RBAC (kubebuilder's `+kubebuilder:rbac` markers):
   * `.writes(kinds.Secret, ['create'])`, `.writes(DATABASE, ['patch'], { subresource: 'status' })`.
   * Reads need no declaration: `for`/`owns`/`watches` already give list and watch, and the
   * manager's client answers reads of those kinds from the cache. Calls accumulate.
   */
  writes(type: ResourceType, verbs: readonly WriteVerb[], options: WritesOptions = {}): this {
    if (verbs.length === 0) throw new InvalidOptionError('writes', `controller ${this.name}: no verbs for ${type.kind}`);
    const unknown = verbs.filter((v) => !WRITE_VERBS.includes(v));
    if (unknown.length > 0) throw new InvalidOptionError('writes', `controller ${this.name}: ${unknown.join(', ')} on ${type.kind} is not a write verb (one of ${WRITE_VERBS.join(', ')})`);
    if (options.subresource !== undefined && !/^[a-z][a-z0-9]*$/.test(options.subresource)) {
      throw new InvalidOptionError('writes', `controller ${this.name}: subresource ${JSON.stringify(options.subresource)} is not a name like "status"`);
    }
    this.writeDeclarations.push({ type, verbs: [...verbs], ...(options.subresource !== undefined ? { subresource: options.subresource } : {}) });
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
    const host = this.host;
    host.requirePermissions(...this.permissions(primary));
    const consoleView = host.trackController(this.name);
    // Set at start: the primary kind's informers (one, or one per cached namespace), read by ctx.get().
    let primaryInformers: SharedInformer<KubeObject>[] = [];
    const reconcile: ObjectReconcileFunction<T> = typeof reconciler === 'function' ? reconciler : (req, ctx) => reconciler.reconcile(req, ctx);
    // Sharded: the primary informer holds this replica's objects only, and the gate admits only keys it owns now.
    const gate = host.sharding && (this.options.sharded ?? true) ? host.sharding.gateFor(primary) : undefined;
    // The options' observer hears of the reconciles `reconciler` ran: not of the keys a shard gate skipped.
    const ran = gate && this.options.observer ? new Set<string>() : undefined;
    const withObject: Reconciler = {
      reconcile: (request, ctx) => {
        ran?.add(ctx.reconcileID);
        return reconcile(request, objectContext<T>(ctx, request, () => primaryInformers));
      },
    };
    const observer = combineObservers(consoleView, this.options.observer, ran);
    const controller = new Controller({
      name: this.name,
      reconciler: gate ? gate.wrap(withObject) : withObject,
      clock: host.clock,
      logger: host.logger,
      registry: host.registry,
      gracefulShutdownMs: host.gracefulShutdownMs,
      ...(this.options.maxConcurrentReconciles !== undefined ? { maxConcurrentReconciles: this.options.maxConcurrentReconciles } : {}),
      ...(this.options.rateLimiter ? { rateLimiter: this.options.rateLimiter } : {}),
      ...(this.options.reconcileTimeoutMs !== undefined ? { reconcileTimeoutMs: this.options.reconcileTimeoutMs } : {}),
      ...(observer ? { observer } : {}),
    });
    consoleView?.attach(controller.queue, controller.workerCount);
    const filters = [...this.eventFilters];
    const sources = this.sources.map((s) => ({ ...s, predicates: [...s.predicates, ...filters] }));
    const triggers = [...this.triggers];
    const cache = this.options.cache ?? {};
    // A sharded primary kind's informers come at start, once the ring's mode is known (label, server or client).
    for (const source of sources) if (!(gate && source.type === primary)) host.prepareInformers(source.type, cache);
    const sharding = host.sharding;
    const informersOf = (source: Source, signal: AbortSignal): Promise<SharedInformer<KubeObject>[]> =>
      gate && sharding && source.type === primary
        ? sharding.primaryInformers(primary, (labelSelector) => host.informersFor(primary, labelSelector ? { ...cache, shardSelector: { apiVersion: primary.apiVersion, kind: primary.kind, labelSelector } } : cache, signal))
        : host.informersFor(source.type, cache, signal);
    const log: Logger = host.logger.child({ controller: this.name });

    host.add(
      {
        async start(signal) {
          const registrations: HandlerRegistration[] = [];
          let detachGate: (() => void) | undefined;
          try {
            const primaryNamespaced = sources.some((s) => s.type !== primary) ? await host.isNamespaced(primary, signal) : true;
            for (const source of sources) {
              const handler = enqueueHandler(controller.queue, source.map(primaryNamespaced), source.predicates);
              const informers = await informersOf(source, signal);
              if (source.type === primary) primaryInformers = informers;
              for (const informer of informers) {
                registrations.push(informer.addEventHandler(handler, { name: `${controller.name}:${source.type.kind}` }));
              }
            }
            if (gate) detachGate = gate.attach(primaryInformers, signal, (key) => controller.queue.add(key));
            const pumps = triggers.map((keys) => pumpTriggers(keys, controller.queue, signal, log));
            await controller.start(signal);
            await Promise.all(pumps);
          } finally {
            for (const r of registrations) r.remove();
            detachGate?.();
          }
        },
      },
      { name: `controller/${this.name}`, needLeaderElection: this.options.needLeaderElection ?? true, sharded: gate !== undefined },
    );
    return controller;
  }

  /**
   * What this controller needs RBAC to allow: list and watch on every kind it watches, what
   * `writes` declares, and `update` on the primary's `finalizers` when it writes objects of a kind
   * it owns (`setControllerReference` sets `blockOwnerDeletion`, which the
   * OwnerReferencesPermissionEnforcement admission plugin allows only to whoever may update the
   * owner's finalizers).
   */
  private permissions(primary: ResourceType): PermissionRequirement[] {
    const who = `controller ${this.name}`;
    const out: PermissionRequirement[] = this.sources.map((s) => ({ resource: s.type, verbs: ['list', 'watch'], reason: `${who}: ${s.declaredBy} ${s.type.kind}` }));
    for (const w of this.writeDeclarations) {
      out.push({ resource: w.type, verbs: w.verbs, ...(w.subresource !== undefined ? { subresource: w.subresource } : {}), reason: `${who}: writes ${w.type.kind}${w.subresource ? `/${w.subresource}` : ''}` });
    }
    const sameKind = (a: ResourceType, b: ResourceType): boolean => a.apiVersion === b.apiVersion && a.kind === b.kind;
    const ownedWritten = this.sources.filter((s) => s.declaredBy === 'owns' && this.writeDeclarations.some((w) => w.subresource === undefined && sameKind(w.type, s.type) && w.verbs.some((v) => v === 'create' || v === 'update' || v === 'patch')));
    if (ownedWritten.length > 0) {
      out.push({ resource: primary, verbs: ['update'], subresource: 'finalizers', reason: `${who}: blocking ownerReferences to ${primary.kind} on ${ownedWritten.map((s) => s.type.kind).join(', ')}` });
    }
    return out;
  }

  private requirePrimary(what: string): ResourceType {
    if (!this.primary) throw new InvalidOptionError('for', `controller ${this.name}: call for(kind) before ${what}()`);
    return this.primary;
  }
}

/** One observer for the controller: the console view (every reconcile) and the options' (only those in `ran`, when given). */
function combineObservers(view: ReconcileObserver | undefined, own: ReconcileObserver | undefined, ran: Set<string> | undefined): ReconcileObserver | undefined {
  const filtered: ReconcileObserver | undefined = own && ran ? { reconciled: (r) => void (ran.delete(r.reconcileID) && own.reconciled(r)) } : own;
  if (!view || !filtered) return view ?? filtered;
  return {
    reconciled: (r) => {
      view.reconciled(r);
      filtered.reconciled(r);
    },
  };
}

/**
 * The reconcile context with `get()`: the primary object of `request`'s key from the informers
 * the controller's events come from (so a reconcile never misses what triggered it). The cache
 * holds only objects of the `.for` kind, which is what makes the `T` honest.
 */
function objectContext<T>(ctx: ReconcileContext, request: ObjectRef, informers: () => readonly SharedInformer<KubeObject>[]): ObjectReconcileContext<T> {
  const key = objectKey(request);
  return {
    ...ctx,
    async get(): Promise<T | undefined> {
      for (const informer of informers()) {
        if (!informer.hasSynced()) await informer.waitForSync(ctx.signal);
        const found = informer.reader.get(key);
        if (found !== undefined) return found as T;
      }
      return undefined;
    },
  };
}
