/**
 * A fleet as a controller target: one controller whose queue holds keys of every member cluster
 * (`cluster/namespace/name`), whose handlers go on each member's informers as it connects, and
 * whose reconciles of a member run through its engagement (aborted and awaited when it leaves).
 * `manager.fleetController(name)` builds with it; the build itself is the host's (`buildController`).
 */
import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { RequestCodec } from '../controller/controller.js';
import type { ControllerDescription } from '../controller/controller-description.js';
import type {
  ControllerCluster,
  ControllerConsoleView,
  ControllerRunnable,
  ControllerRunnableOptions,
  ControllerTarget,
} from '../controller/controller-host.js';
import { controllerPermissions } from '../controller/controller-permissions.js';
import {
  DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES,
  DEFAULT_FLEET_RECONCILE_TIMEOUT_MS,
  defaultMaxConcurrentReconcilesPerCluster,
} from '../controller/fleet-controller-options.js';
import type { Result } from '../controller/result.js';
import { isTerminalError } from '../controller/terminal-error.js';
import type { PermissionRequirement } from '../rbac/permission.js';
import type { ClusterEngagement } from './cluster-engagement.js';
import type { Fleet, FleetAttachment } from './fleet.js';
import { clusterOfKey, parseFleetKey, type FleetRequest } from './fleet-request.js';

/** What a fleet controller needs of the manager that runs it. */
export interface FleetControllerHost {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly gracefulShutdownMs: number;
  readonly fleet: Fleet;
  trackController(name: string): ControllerConsoleView | undefined;
  add(runnable: ControllerRunnable, options: ControllerRunnableOptions): void;
  /** Records what the controller needs RBAC to allow in every member cluster (`Manager.memberPermissions()`). */
  requireMemberPermissions(...requirements: PermissionRequirement[]): void;
}

/** Fleet keys: log lines carry `cluster`, `namespace`, `name`; the reconciler gets a `FleetRequest`. */
export const fleetRequestCodec: RequestCodec = {
  parse: parseFleetKey,
  logFields: (request) => ({ cluster: request.cluster ?? '', namespace: request.namespace ?? '', name: request.name }),
};

/** Validates a fleet controller's options, records its member permissions and returns the fleet as its target. */
export function fleetTarget(host: FleetControllerHost, d: ControllerDescription): ControllerTarget<FleetRequest> {
  const { fleet } = host;
  if (d.options.cache)
    throw new InvalidOptionError(
      'cache',
      `fleet controller ${d.name}: member caches take no per-controller options yet`,
    );
  if (d.options.sharded)
    throw new InvalidOptionError('sharded', `fleet controller ${d.name}: fleets shard by cluster (fleet.sharded)`);
  if (d.triggers.length > 0)
    throw new InvalidOptionError('reconcileOn', `fleet controller ${d.name}: a trigger's key names no member cluster`);
  const maxConcurrentReconciles = d.options.maxConcurrentReconciles ?? DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES;
  const reconcileTimeoutMs = d.options.reconcileTimeoutMs ?? DEFAULT_FLEET_RECONCILE_TIMEOUT_MS;
  const perCluster =
    d.options.maxConcurrentReconcilesPerCluster ?? defaultMaxConcurrentReconcilesPerCluster(maxConcurrentReconciles);
  // An invalid worker count is the Controller's to report, under its own name.
  const workersValid = Number.isInteger(maxConcurrentReconciles) && maxConcurrentReconciles >= 1;
  if (workersValid && !(Number.isInteger(perCluster) && perCluster >= 1 && perCluster <= maxConcurrentReconciles))
    throw new InvalidOptionError(
      'maxConcurrentReconcilesPerCluster',
      `fleet controller ${d.name}: must be an integer from 1 to maxConcurrentReconciles (${maxConcurrentReconciles}), got ${perCluster}`,
    );
  host.requireMemberPermissions(...controllerPermissions(d));
  for (const source of d.sources) fleet.watchKind(source.type);
  // One per engagement, so a replaced member's new engagement is a new cluster to the controller.
  const clusters = new WeakMap<ClusterEngagement, ControllerCluster>();
  const clusterOf = (engagement: ClusterEngagement): ControllerCluster => {
    let cluster = clusters.get(engagement);
    if (!cluster) {
      cluster = memberCluster(engagement, d, fleet);
      clusters.set(engagement, cluster);
    }
    return cluster;
  };
  return {
    clock: host.clock,
    logger: host.logger,
    registry: host.registry,
    gracefulShutdownMs: host.gracefulShutdownMs,
    view: host.trackController(d.name),
    controllerOptions: {
      requests: fleetRequestCodec,
      // Members take turns: a cluster relisting 10,000 objects does not starve one with ten.
      fairnessKey: clusterOfKey,
      // And a member whose reconciles hang holds at most its cap of the workers, not all of them.
      maxConcurrentReconcilesPerGroup: perCluster,
      maxConcurrentReconciles,
      reconcileTimeoutMs,
    },
    resolve(request) {
      const { cluster: name } = request;
      const engagement = name === undefined ? undefined : fleet.active(name);
      return engagement && { request: { ...request, cluster: engagement.name }, cluster: clusterOf(engagement) };
    },
    connect(attach) {
      const attachment: FleetAttachment = {
        name: d.name,
        attach: (engagement) => attach(clusterOf(engagement), engagement.signal),
      };
      fleet.controllerStarted(attachment);
      return Promise.resolve(() => fleet.controllerStopped(attachment));
    },
    add: (runnable) =>
      host.add(runnable, {
        name: `fleet-controller/${d.name}`,
        needLeaderElection: d.options.needLeaderElection ?? !fleet.sharded,
      }),
  };
}

/** One engaged member as a cluster of the controller: its informers, its reconciles tracked and counted. */
function memberCluster(engagement: ClusterEngagement, d: ControllerDescription, fleet: Fleet): ControllerCluster {
  return {
    view: engagement,
    keyPrefix: `${engagement.name}/`,
    isNamespaced: async (type, signal) => (await engagement.apiClient.mapper.mapping(type, signal)).namespaced,
    informersFor: (type) => Promise.resolve(engagement.informersFor(type)),
    primaryInformers: () => engagement.informersFor(d.primary),
    observedOwnWrites: (informers, key, signal) => engagement.observedOwnWrites(informers, key, signal),
    track: (signal, reconcile) =>
      engagement.track(signal, async (tracked) => {
        try {
          const result = await reconcile(tracked);
          fleet.metrics.reconciled(d.name, engagement.name, resultLabel(result));
          return result;
        } catch (err) {
          fleet.metrics.reconciled(d.name, engagement.name, isTerminalError(err) ? 'terminal_error' : 'error');
          throw err;
        }
      }),
  };
}

function resultLabel(result: Result | void): 'success' | 'requeue_after' {
  return result && result.kind === 'requeueAfter' ? 'requeue_after' : 'success';
}
