/**
 * `manager.fleetController(name)`: the same declarations as `manager.controller(name)` (shared in
 * `ControllerDeclaration`), built into one controller whose queue holds keys of every member
 * cluster (`cluster/namespace/name`) and whose reconciler is given a `FleetRequest` and that
 * cluster's cache.
 */
import type { Registry } from 'prom-client';
import type { HandlerRegistration } from '../cache/informer.js';
import type { Kind } from '../client/kind.js';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { objectKey, type KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { ControllerView } from '../console/controller-view.js';
import { Controller, type ReconcileObserver, type RequestCodec } from '../controller/controller.js';
import {
  enqueueHandler,
  mapToControllingOwner,
  mapToSelf,
  type KeySink,
  type MapFunction,
} from '../controller/enqueue-handlers.js';
import type { ReconcileContext } from '../controller/reconciler.js';
import type { Result } from '../controller/result.js';
import type { ControllerBuilderOptions } from './controller-description.js';
import { isTerminalError } from '../controller/terminal-error.js';
import { ControllerDeclaration, type ControllerWatchOptions } from './controller-declaration.js';
import type { ControllerDescription, ControllerSource } from './controller-description.js';
import { controllerPermissions } from './controller-permissions.js';
import type { Runnable, RunnableOptions } from './runnable.js';
import type { PermissionRequirement } from '../rbac/permission.js';
import type { ClusterEngagement } from '../fleet/cluster-engagement.js';
import type { Fleet, FleetAttachment } from '../fleet/fleet.js';
import type { FleetReconcileContext, FleetReconcileFunction, FleetReconciler } from '../fleet/fleet-reconciler.js';
import { clusterOfKey, parseFleetKey, type FleetRequest } from '../fleet/fleet-request.js';

/** What a fleet controller needs of the manager that runs it. */
export interface FleetControllerHost {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly gracefulShutdownMs: number;
  readonly fleet: Fleet;
  trackController(name: string): ControllerView | undefined;
  add(runnable: Runnable, options: RunnableOptions): void;
  /** Records what the controller needs RBAC to allow in every member cluster (`Manager.memberPermissions()`). */
  requireMemberPermissions(...requirements: PermissionRequirement[]): void;
}

/** Fleet keys: log lines carry `cluster`, `namespace`, `name`; the reconciler gets a `FleetRequest`. */
export const fleetRequestCodec: RequestCodec = {
  parse: parseFleetKey,
  logFields: (request) => ({
    cluster: (request as FleetRequest).cluster,
    namespace: request.namespace ?? '',
    name: request.name,
  }),
};

/**
 * Workers of a fleet controller: more than one, so that a per-cluster cap below it leaves workers
 * for the other members when one member's reconciles hang (a plain controller has 1).
 * @defaultValue 4
 */
export const DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES = 4;

/**
 * A fleet controller's reconcile timeout. A member that accepts a write and never answers would
 * otherwise hold a worker for as long as the client keeps trying; 60 s is the API server's own
 * limit for a non-long-running request, so a reconcile of a healthy member making a few calls ends
 * well inside it, and work that takes longer belongs in `requeueAfter`. @defaultValue 60,000 ms
 */
export const DEFAULT_FLEET_RECONCILE_TIMEOUT_MS = 60_000;

/**
 * The per-cluster cap when `maxConcurrentReconcilesPerCluster` is not set: half the workers,
 * rounded up — with the default 4 workers, 2, so one member whose reconciles all hang leaves the
 * other members half the workers (and a lone member still gets half). With 1 worker it is 1: there
 * is nothing to cap below, and only the reconcile timeout bounds a hanging member.
 * @defaultValue `Math.ceil(maxConcurrentReconciles / 2)`
 */
export function defaultMaxConcurrentReconcilesPerCluster(maxConcurrentReconciles: number): number {
  return Math.ceil(maxConcurrentReconciles / 2);
}

/** A fleet controller's options: a controller's, and the per-cluster cap. */
export interface FleetControllerOptions extends ControllerBuilderOptions {
  /** @defaultValue {@link DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES} */
  readonly maxConcurrentReconciles?: number;
  /** 0: no timeout. @defaultValue {@link DEFAULT_FLEET_RECONCILE_TIMEOUT_MS} */
  readonly reconcileTimeoutMs?: number;
  /**
   * At most this many reconciles of one member cluster at once: a member at its cap has its keys
   * passed over (they stay queued, in order and at their priorities) until one of its reconciles
   * ends, so one member whose reconciles hang can never occupy every worker. An integer from 1 to
   * `maxConcurrentReconciles` (equal to it: no cap).
   * @defaultValue {@link defaultMaxConcurrentReconcilesPerCluster} (2 with the default 4 workers)
   */
  readonly maxConcurrentReconcilesPerCluster?: number;
}

export class FleetControllerBuilder<T extends KubeObject = KubeObject> extends ControllerDeclaration {
  private perCluster: number | undefined;

  constructor(
    private readonly host: FleetControllerHost,
    name: string,
  ) {
    super(name);
  }

  /** The primary kind, in every member cluster; with a typed `Kind<T>` `ctx.get()` returns `T`. */
  for<P extends KubeObject = KubeObject>(
    type: Kind<P>,
    options: ControllerWatchOptions<P> = {},
  ): FleetControllerBuilder<P> {
    this.declareFor(type, options as ControllerWatchOptions<never>);
    return this as unknown as FleetControllerBuilder<P>;
  }

  /** A controller's options (the fleet defaults differ: see {@link FleetControllerOptions}) and the per-cluster cap. */
  override withOptions(options: FleetControllerOptions): this {
    const { maxConcurrentReconcilesPerCluster, ...rest } = options;
    if (maxConcurrentReconcilesPerCluster !== undefined) this.perCluster = maxConcurrentReconcilesPerCluster;
    return super.withOptions(rest);
  }

  /**
   * Creates the controller and adds it to the manager: leader-only unless `needLeaderElection: false`,
   * or the fleet is `sharded` (each replica then reconciles the clusters whose Lease it holds).
   */
  complete(reconciler: FleetReconciler<T> | FleetReconcileFunction<T>): Controller {
    const d = this.completeDescription();
    if (d.options.cache)
      throw new InvalidOptionError(
        'cache',
        `fleet controller ${d.name}: member caches take no per-controller options yet`,
      );
    if (d.options.sharded)
      throw new InvalidOptionError('sharded', `fleet controller ${d.name}: fleets shard by cluster (fleet.sharded)`);
    return buildFleetController(this.host, d, reconciler, this.perCluster);
  }
}

function buildFleetController<T extends KubeObject>(
  host: FleetControllerHost,
  d: ControllerDescription,
  reconciler: FleetReconciler<T> | FleetReconcileFunction<T>,
  perClusterOption: number | undefined,
): Controller {
  const { fleet } = host;
  const { rateLimiter, priorityQueue } = d.options;
  const maxConcurrentReconciles = d.options.maxConcurrentReconciles ?? DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES;
  const reconcileTimeoutMs = d.options.reconcileTimeoutMs ?? DEFAULT_FLEET_RECONCILE_TIMEOUT_MS;
  const perCluster = perClusterOption ?? defaultMaxConcurrentReconcilesPerCluster(maxConcurrentReconciles);
  // An invalid worker count is the Controller's to report, under its own name.
  const workersValid = Number.isInteger(maxConcurrentReconciles) && maxConcurrentReconciles >= 1;
  if (workersValid && !(Number.isInteger(perCluster) && perCluster >= 1 && perCluster <= maxConcurrentReconciles))
    throw new InvalidOptionError(
      'maxConcurrentReconcilesPerCluster',
      `fleet controller ${d.name}: must be an integer from 1 to maxConcurrentReconciles (${maxConcurrentReconciles}), got ${perCluster}`,
    );
  host.requireMemberPermissions(...controllerPermissions(d));
  for (const source of d.sources) fleet.watchKind(source.type);
  const reconcile: FleetReconcileFunction<T> =
    typeof reconciler === 'function' ? reconciler : (req, ctx) => reconciler.reconcile(req, ctx);
  const consoleView = host.trackController(d.name);
  const observer = combine(consoleView, d.options.observer);
  const controller = new Controller({
    name: d.name,
    clock: host.clock,
    logger: host.logger,
    registry: host.registry,
    gracefulShutdownMs: host.gracefulShutdownMs,
    requests: fleetRequestCodec,
    // Members take turns: a cluster relisting 10,000 objects does not starve one with ten.
    fairnessKey: clusterOfKey,
    // And a member whose reconciles hang holds at most its cap of the workers, not all of them.
    maxConcurrentReconcilesPerGroup: perCluster,
    maxConcurrentReconciles,
    reconcileTimeoutMs,
    reconciler: {
      reconcile: (request, ctx) => {
        const fleetRequest = request as FleetRequest;
        const engagement = fleet.active(fleetRequest.cluster);
        // The cluster left (or is being replaced): the key is forgotten; a new engagement's
        // initial list enqueues its keys again.
        if (!engagement) return Promise.resolve();
        return engagement.track(ctx.signal, async (signal) => {
          const context = fleetContext<T>(ctx, signal, fleetRequest, engagement, d);
          try {
            const result = await reconcile(fleetRequest, context);
            fleet.metrics.reconciled(d.name, engagement.name, resultLabel(result));
            return result;
          } catch (err) {
            fleet.metrics.reconciled(d.name, engagement.name, isTerminalError(err) ? 'terminal_error' : 'error');
            throw err;
          }
        });
      },
    },
    ...omitUndefined({ rateLimiter, observer, priorityQueue }),
  });
  consoleView?.attach(controller.queue, controller.workerCount);
  const sources = d.sources.map((s) => ({ ...s, predicates: [...s.predicates, ...d.eventFilters] }));
  const attachment: FleetAttachment = {
    name: d.name,
    async attach(engagement) {
      const primaryNamespaced = sources.some((s) => s.declaredBy === 'owns')
        ? (await engagement.apiClient.mapper.mapping(d.primary, engagement.signal)).namespaced
        : true;
      const prefix = `${engagement.name}/`;
      const sink: KeySink = { add: (key, options) => controller.queue.add(prefix + key, options) };
      const registrations: HandlerRegistration[] = [];
      for (const source of sources) {
        const handler = enqueueHandler(sink, mapOf(d, source, primaryNamespaced), source.predicates);
        for (const informer of engagement.informersFor(source.type))
          registrations.push(informer.addEventHandler(handler, { name: `${d.name}:${source.type.kind}` }));
      }
      return registrations;
    },
  };
  host.add(
    {
      async start(signal) {
        fleet.controllerStarted(attachment);
        try {
          await controller.start(signal);
        } finally {
          fleet.controllerStopped(attachment);
        }
      },
    },
    { name: `fleet-controller/${d.name}`, needLeaderElection: d.options.needLeaderElection ?? !fleet.sharded },
  );
  return controller;
}

function resultLabel(result: Result | void): 'success' | 'requeue_after' {
  return result && result.kind === 'requeueAfter' ? 'requeue_after' : 'success';
}

/** `owns` maps to the controlling owner in the same cluster (the sink adds the cluster). */
function mapOf(
  d: ControllerDescription,
  source: ControllerSource,
  primaryNamespaced: boolean,
): MapFunction<KubeObject> {
  if (source.declaredBy === 'owns') return mapToControllingOwner({ ...d.primary, clusterScoped: !primaryNamespaced });
  return source.map ?? mapToSelf;
}

function combine(a: ReconcileObserver | undefined, b: ReconcileObserver | undefined): ReconcileObserver | undefined {
  if (!a || !b) return a ?? b;
  return {
    reconciled: (r) => {
      a.reconciled(r);
      b.reconciled(r);
    },
  };
}

/** The context of one reconcile of `request`: its cluster, and `get()` from that cluster's informers only. */
function fleetContext<T>(
  ctx: ReconcileContext,
  signal: AbortSignal,
  request: FleetRequest,
  engagement: ClusterEngagement,
  d: ControllerDescription,
): FleetReconcileContext<T> {
  const key = objectKey(request);
  return {
    ...ctx,
    signal,
    cluster: engagement,
    async get(): Promise<T | undefined> {
      for (const informer of engagement.informersFor(d.primary)) {
        if (!informer.hasSynced()) await informer.waitForSync(signal);
        const found = informer.reader.get(key);
        if (found !== undefined) return found as T;
      }
      return undefined;
    },
  };
}
