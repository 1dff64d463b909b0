/**
 * Turns a controller's description (what `ControllerBuilder` recorded) into a running part of its
 * host: the controller, its console view, its shard gate (in a sharded host), the choice of the
 * informers each source reads, and the runnable that wires them up when it starts.
 */
import type { HandlerRegistration, SharedInformer } from '../cache/informer.js';
import type { Logger } from '../core/logger.js';
import { objectKey, type KubeObject, type ObjectRef } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { Controller, type ReconcileObserver } from '../controller/controller.js';
import { enqueueHandler, mapToControllingOwner, mapToSelf, type MapFunction } from '../controller/enqueue-handlers.js';
import type {
  ObjectReconcileContext,
  ObjectReconcileFunction,
  ObjectReconciler,
  ReconcileContext,
  Reconciler,
} from '../controller/reconciler.js';
import type { ControllerDescription, ControllerSource } from './controller-description.js';
import type { ControllerHost } from './controller-host.js';
import { controllerPermissions } from './controller-permissions.js';
import type { Runnable } from './runnable.js';
import { pumpTriggers } from './trigger-source.js';

/** Builds the controller `d` describes and adds its runnable to `host`. */
export function buildController<T extends KubeObject>(
  host: ControllerHost,
  d: ControllerDescription,
  reconciler: ObjectReconciler<T> | ObjectReconcileFunction<T>,
): Controller {
  host.requirePermissions(...controllerPermissions(d));
  const consoleView = host.trackController(d.name);
  // Set at start: the primary kind's informers (one, or one per cached namespace), read by ctx.get().
  const primary: PrimaryInformers = { current: [] };
  const reconcile: ObjectReconcileFunction<T> =
    typeof reconciler === 'function' ? reconciler : (req, ctx) => reconciler.reconcile(req, ctx);
  // Sharded: the primary informer holds this replica's objects only, and the gate admits only keys it owns now.
  const gate = host.sharding && (d.options.sharded ?? true) ? host.sharding.gateFor(d.primary) : undefined;
  // The options' observer hears of the reconciles `reconciler` ran: not of the keys a shard gate skipped.
  const ran = gate && d.options.observer ? new Set<string>() : undefined;
  const withObject: Reconciler = {
    reconcile: (request, ctx) => {
      ran?.add(ctx.reconcileID);
      return reconcile(request, objectContext<T>(ctx, request, primary));
    },
  };
  const { maxConcurrentReconciles, rateLimiter, reconcileTimeoutMs, priorityQueue } = d.options;
  const observer = combineObservers(consoleView, d.options.observer, ran);
  const controller = new Controller({
    name: d.name,
    reconciler: gate ? gate.wrap(withObject) : withObject,
    clock: host.clock,
    logger: host.logger,
    registry: host.registry,
    gracefulShutdownMs: host.gracefulShutdownMs,
    ...omitUndefined({ maxConcurrentReconciles, rateLimiter, reconcileTimeoutMs, observer, priorityQueue }),
  });
  consoleView?.attach(controller.queue, controller.workerCount);
  const cache = d.options.cache ?? {};
  // A sharded primary kind's informers come at start, once the ring's mode is known (label, server or client).
  for (const source of d.sources) if (!(gate && source.type === d.primary)) host.prepareInformers(source.type, cache);
  const runnable = controllerRunnable(host, d, controller, { gate, primary });
  host.add(runnable, {
    name: `controller/${d.name}`,
    needLeaderElection: d.options.needLeaderElection ?? true,
    sharded: gate !== undefined,
  });
  return controller;
}

/** The console view and the options' observer as one (the latter filtered to reconciles that ran, when `ran` is given). */
function combineObservers(
  view: ReconcileObserver | undefined,
  own: ReconcileObserver | undefined,
  ran: Set<string> | undefined,
): ReconcileObserver | undefined {
  const filtered: ReconcileObserver | undefined =
    own && ran ? { reconciled: (r) => void (ran.delete(r.reconcileID) && own.reconciled(r)) } : own;
  if (!view || !filtered) return view ?? filtered;
  return {
    reconciled: (r) => {
      view.reconciled(r);
      filtered.reconciled(r);
    },
  };
}

/** The sharding host's gate of a primary kind (its type, without importing sharding's internals). */
type ShardGate = ReturnType<NonNullable<ControllerHost['sharding']>['gateFor']>;

interface PrimaryInformers {
  current: readonly SharedInformer<KubeObject>[];
}

type InformersOf = (source: ControllerSource, signal: AbortSignal) => Promise<SharedInformer<KubeObject>[]>;

/** Which informers a source reads: a sharded primary kind's come from sharding, the rest from the host. */
function informersOf(host: ControllerHost, d: ControllerDescription, gate: ShardGate | undefined): InformersOf {
  const cache = d.options.cache ?? {};
  const sharding = host.sharding;
  const { apiVersion, kind } = d.primary;
  return (source, signal) =>
    gate && sharding && source.type === d.primary
      ? sharding.primaryInformers(d.primary, (labelSelector) =>
          host.informersFor(
            d.primary,
            labelSelector ? { ...cache, shardSelector: { apiVersion, kind, labelSelector } } : cache,
            signal,
          ),
        )
      : host.informersFor(source.type, cache, signal);
}

/** How a source's events become keys; `owns` needs the primary's scope, resolved at start. */
function mapOf(
  d: ControllerDescription,
  source: ControllerSource,
  primaryNamespaced: boolean,
): MapFunction<KubeObject> {
  if (source.declaredBy === 'owns') return mapToControllingOwner({ ...d.primary, clusterScoped: !primaryNamespaced });
  return source.map ?? mapToSelf;
}

/**
 * Starts the controller once its event handlers are on the informers, with its gate attached and
 * its triggers pumped; removes them all when it stops.
 */
function controllerRunnable(
  host: ControllerHost,
  d: ControllerDescription,
  controller: Controller,
  wiring: { readonly gate: ShardGate | undefined; readonly primary: PrimaryInformers },
): Runnable {
  const { gate, primary } = wiring;
  const sources = d.sources.map((s) => ({ ...s, predicates: [...s.predicates, ...d.eventFilters] }));
  const informers = informersOf(host, d, gate);
  const log: Logger = host.logger.child({ controller: d.name });
  return {
    async start(signal) {
      const registrations: HandlerRegistration[] = [];
      let detachGate: (() => void) | undefined;
      try {
        const primaryNamespaced = sources.some((s) => s.type !== d.primary)
          ? await host.isNamespaced(d.primary, signal)
          : true;
        for (const source of sources) {
          const handler = enqueueHandler(controller.queue, mapOf(d, source, primaryNamespaced), source.predicates);
          const found = await informers(source, signal);
          if (source.type === d.primary) primary.current = found;
          for (const informer of found) {
            registrations.push(informer.addEventHandler(handler, { name: `${controller.name}:${source.type.kind}` }));
          }
        }
        if (gate) detachGate = gate.attach(primary.current, signal, (key) => controller.queue.add(key));
        const pumps = d.triggers.map((keys) => pumpTriggers(keys, controller.queue, signal, log));
        await controller.start(signal);
        await Promise.all(pumps);
      } finally {
        for (const r of registrations) r.remove();
        detachGate?.();
      }
    },
  };
}

/**
 * The reconcile context with `get()`: the primary object of `request`'s key from the informers
 * the controller's events come from (so a reconcile never misses what triggered it). The cache
 * holds only objects of the `.for` kind, which is what makes the `T` honest.
 */
function objectContext<T>(
  ctx: ReconcileContext,
  request: ObjectRef,
  primary: PrimaryInformers,
): ObjectReconcileContext<T> {
  const key = objectKey(request);
  return {
    ...ctx,
    async get(): Promise<T | undefined> {
      for (const informer of primary.current) {
        if (!informer.hasSynced()) await informer.waitForSync(ctx.signal);
        const found = informer.reader.get(key);
        if (found !== undefined) return found as T;
      }
      return undefined;
    },
  };
}
