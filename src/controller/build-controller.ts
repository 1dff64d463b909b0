/**
 * Turns a controller's description (what `ControllerBuilder` recorded) into a running controller
 * against its target — the host cluster or a fleet's members, one code path for both: the
 * Controller, its console view and shard gate, the handlers each cluster's informers get, the
 * reconcile context with `get()` from the request's cluster, and the runnable that wires them up
 * when it starts.
 */
import type { HandlerRegistration } from '../cache/informer.js';
import { objectKey, type KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { Controller, type ReconcileObserver } from './controller.js';
import type { ControllerDescription, ControllerSource } from './controller-description.js';
import type {
  AttachSources,
  ControllerCluster,
  ControllerConsoleView,
  ControllerRunnable,
  ControllerTarget,
} from './controller-host.js';
import { LOW_PRIORITY, type AddOptions } from '../workqueue/workqueue.js';
import {
  enqueueHandler,
  mapToControllingOwner,
  mapToSelf,
  type KeySink,
  type MapFunction,
} from './enqueue-handlers.js';
import type {
  ObjectReconcileContext,
  ObjectReconcileFunction,
  ObjectReconciler,
  ReconcileContext,
  Reconciler,
  ReconcileRequest,
} from './reconciler.js';
import type { Result } from './result.js';
import { pumpTriggers, type TriggerSink } from './trigger-source.js';
import { tracedSink } from './trace-triggers.js';
import type { HistoryTrigger } from './reconcile-trigger.js';

/** Builds the controller `d` describes against `target` and hands its runnable to the target's runner. */
export function buildController<T extends KubeObject, R extends ReconcileRequest>(
  target: ControllerTarget<R>,
  d: ControllerDescription,
  reconciler: ObjectReconciler<T, R> | ObjectReconcileFunction<T, R>,
): Controller {
  const reconcile: ObjectReconcileFunction<T, R> =
    typeof reconciler === 'function' ? reconciler : (req, ctx) => reconciler.reconcile(req, ctx);
  const { gate } = target;
  // The options' observer hears of the reconciles `reconciler` ran: not of the keys a shard gate skipped.
  const ran = gate && d.options.observer ? new Set<string>() : undefined;
  const withObject: Reconciler = {
    reconcile: (request, ctx) => {
      const resolved = target.resolve(request);
      // The cluster left (or is being replaced): the key is forgotten; a new engagement's initial
      // list enqueues its keys again.
      if (!resolved) return Promise.resolve();
      ran?.add(ctx.reconcileID);
      const { cluster } = resolved;
      const run = (): Promise<Result | void> =>
        cluster.track(ctx.signal, (signal) =>
          reconcile(resolved.request, objectContext<T>(ctx, signal, resolved.request, cluster)),
        );
      // The console's history (writes made inside) and plan mode (each key once) wrap the run.
      const around = target.view?.around;
      return around ? around.call(target.view, queueKey(request), ctx.reconcileID, run) : run();
    },
  };
  const { maxConcurrentReconciles, rateLimiter, reconcileTimeoutMs, priorityQueue, tracing } = d.options;
  const observer = combineObservers(target.view, d.options.observer, ran);
  const controller = new Controller({
    name: d.name,
    reconciler: gate ? gate.wrap(withObject) : withObject,
    clock: target.clock,
    logger: target.logger,
    registry: target.registry,
    gracefulShutdownMs: target.gracefulShutdownMs,
    ...omitUndefined({ maxConcurrentReconciles, rateLimiter, reconcileTimeoutMs, observer, priorityQueue, tracing }),
    ...target.controllerOptions,
  });
  target.view?.attach(controller.queue, controller.workerCount);
  target.add(controllerRunnable(target, d, controller));
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

/** How a source's events become keys; `owns` maps to the controlling owner, which needs the primary's scope. */
function mapOf(
  d: ControllerDescription,
  source: ControllerSource,
  primaryNamespaced: boolean,
): MapFunction<KubeObject> {
  if (source.declaredBy === 'owns') return mapToControllingOwner({ ...d.primary, clusterScoped: !primaryNamespaced });
  return source.map ?? mapToSelf;
}

/**
 * Puts the controller's handlers on one cluster's informers: each source's events become keys of
 * that cluster (prefixed with it in a fleet's one queue). On a failure part way, what was put on
 * is removed before the error goes on.
 */
function sourceAttacher(
  d: ControllerDescription,
  controller: Controller,
  view: ControllerConsoleView | undefined,
): AttachSources {
  const sources = d.sources.map((s) => ({ ...s, predicates: [...s.predicates, ...d.eventFilters] }));
  const ownsSome = sources.some((s) => s.declaredBy === 'owns');
  return async (cluster, signal) => {
    const registrations: HandlerRegistration[] = [];
    try {
      const primaryNamespaced = ownsSome ? await cluster.isNamespaced(d.primary, signal) : true;
      const prefix = cluster.keyPrefix;
      const sink: KeySink = prefix
        ? { add: (key, options) => controller.queue.add(prefix + key, options) }
        : controller.queue;
      for (const source of sources) {
        const sourceSink = controller.traced ? tracedSink(controller, sink, source, cluster) : sink;
        const handler = enqueueHandler(
          noting(sourceSink, view, source, prefix),
          mapOf(d, source, primaryNamespaced),
          source.predicates,
        );
        for (const informer of await cluster.informersFor(source.type, signal))
          registrations.push(informer.addEventHandler(handler, { name: `${d.name}:${source.type.kind}` }));
      }
      return registrations;
    } catch (err) {
      for (const r of registrations) r.remove();
      throw err;
    }
  };
}

/** The queue key of a request: a member cluster's keys carry its name first (`cluster/namespace/name`). */
function queueKey(request: ReconcileRequest): string {
  return request.cluster ? `${request.cluster}/${objectKey(request)}` : objectKey(request);
}

const EXTERNAL: HistoryTrigger = Object.freeze({ type: 'external' });

/** `sink`, telling `view` (when it listens) which source each key came from; two shared trigger objects per source. */
function noting(
  sink: KeySink,
  view: ControllerConsoleView | undefined,
  source: ControllerSource,
  prefix: string,
): KeySink {
  const note = view?.noteTrigger;
  if (!note) return sink;
  const changed: HistoryTrigger = Object.freeze({
    type: 'event',
    source: source.declaredBy,
    kind: source.type.kind,
    listed: false,
  });
  const listed: HistoryTrigger = Object.freeze({ ...changed, listed: true });
  return {
    add(key, options, cause) {
      note.call(view, prefix + key, options?.priority === LOW_PRIORITY ? listed : changed);
      sink.add(key, options, cause);
    },
  };
}

/**
 * Starts the controller once its target attached its handlers (to the host at once, to each member
 * as it connects), with its triggers pumped; detaches them all when it stops.
 */
function controllerRunnable<R extends ReconcileRequest>(
  target: ControllerTarget<R>,
  d: ControllerDescription,
  controller: Controller,
): ControllerRunnable {
  const attach = sourceAttacher(d, controller, target.view);
  const log = target.logger.child({ controller: d.name });
  return {
    async start(signal) {
      let detach: (() => void) | undefined;
      try {
        detach = await target.connect(attach, (key) => enqueueAs(controller, key, 'handover'), signal);
        const traced: TriggerSink = controller.traced
          ? { add: (key, options) => enqueueAs(controller, key, 'external', options) }
          : controller.queue;
        const note = target.view?.noteTrigger;
        const external: TriggerSink = note
          ? {
              add: (key: string, o?: AddOptions) => (note.call(target.view, key, EXTERNAL), traced.add(key, o)),
            }
          : traced;
        const pumps = d.triggers.map((keys) => pumpTriggers(keys, external, signal, log));
        await controller.start(signal);
        await Promise.all(pumps);
      } finally {
        detach?.();
      }
    },
  };
}

/** Queues a key with its cause noted for the trace (when traced). */
function enqueueAs(
  controller: Controller,
  key: string,
  type: 'handover' | 'external',
  options?: Parameters<TriggerSink['add']>[1],
): void {
  if (controller.traced) controller.recordTrigger(key, { type });
  controller.queue.add(key, options);
}

/**
 * The reconcile context: the request's cluster and `get()`, the primary object of the request's key
 * from that cluster's informers the controller's events come from (so a reconcile never misses what
 * triggered it). The cache holds only objects of the `.for` kind, which is what makes the `T` honest.
 */
function objectContext<T>(
  ctx: ReconcileContext,
  signal: AbortSignal,
  request: ReconcileRequest,
  cluster: ControllerCluster,
): ObjectReconcileContext<T> {
  const key = objectKey(request);
  return {
    ...ctx,
    signal,
    cluster: cluster.view,
    async get(options): Promise<T | undefined> {
      for (const informer of cluster.primaryInformers()) {
        if (!informer.hasSynced()) await informer.waitForSync(signal);
        // Read-your-own-writes: the reconciler's own writes of this object, seen before it is read.
        if (options?.freshness !== 'cached') await cluster.observedOwnWrites?.([informer], key, signal);
        const found = informer.reader.get(key);
        if (found !== undefined) return found as T;
      }
      return undefined;
    },
  };
}
