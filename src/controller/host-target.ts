/**
 * The host cluster as a controller target: a fleet of one. Every request is the host's; the
 * sources' informers come from the host's cache (a sharded primary kind's from sharding, behind its
 * gate); the controller runs as one runnable of the manager.
 */
import type { SharedInformer } from '../cache/informer.js';
import { InvalidOptionError } from '../core/errors.js';
import type { KubeObject } from '../core/object-key.js';
import type { ControllerDescription } from './controller-description.js';
import type { ControllerCluster, ControllerHost, ControllerTarget } from './controller-host.js';
import { controllerPermissions } from './controller-permissions.js';
import type { ReconcileRequest } from './reconciler.js';

/** Records the controller's permissions, prepares its informers and returns the host as its target. */
export function hostTarget(host: ControllerHost, d: ControllerDescription): ControllerTarget<ReconcileRequest> {
  if (d.options.maxConcurrentReconcilesPerCluster !== undefined)
    throw new InvalidOptionError(
      'maxConcurrentReconcilesPerCluster',
      `controller ${d.name}: fleet controllers only (a host controller has one cluster)`,
    );
  host.requirePermissions(...controllerPermissions(d));
  const view = host.trackController(d.name);
  const cache = d.options.cache ?? {};
  const sharding = host.sharding;
  // Sharded: the primary informer holds this replica's objects only, and the gate admits only keys it owns now.
  const gate = sharding && (d.options.sharded ?? true) ? sharding.gateFor(d.primary) : undefined;
  // A sharded primary kind's informers come at start, once the ring's mode is known (label, server or client).
  for (const source of d.sources) if (!(gate && source.type === d.primary)) host.prepareInformers(source.type, cache);
  // Set at start: the primary kind's informers (one, or one per cached namespace), read by ctx.get().
  let primary: readonly SharedInformer<KubeObject>[] = [];
  const { apiVersion, kind } = d.primary;
  const cluster: ControllerCluster = {
    view: host.cluster,
    keyPrefix: '',
    isNamespaced: (type, signal) => host.isNamespaced(type, signal),
    async informersFor(type, signal) {
      if (type !== d.primary) return host.informersFor(type, cache, signal);
      primary =
        gate && sharding
          ? await sharding.primaryInformers(d.primary, (labelSelector) =>
              host.informersFor(
                d.primary,
                labelSelector ? { ...cache, shardSelector: { apiVersion, kind, labelSelector } } : cache,
                signal,
              ),
            )
          : await host.informersFor(type, cache, signal);
      return primary;
    },
    primaryInformers: () => primary,
    ...(host.observedOwnWrites ? { observedOwnWrites: host.observedOwnWrites.bind(host) } : {}),
    track: (signal, reconcile) => reconcile(signal),
  };
  return {
    clock: host.clock,
    logger: host.logger,
    registry: host.registry,
    gracefulShutdownMs: host.gracefulShutdownMs,
    view,
    controllerOptions: {},
    ...(gate ? { gate } : {}),
    resolve: (request) => ({ request, cluster }),
    async connect(attach, enqueue, signal) {
      const registrations = await attach(cluster, signal);
      const detachGate = gate?.attach(primary, signal, enqueue);
      return () => {
        for (const r of registrations) r.remove();
        detachGate?.();
      };
    },
    add: (runnable) =>
      host.add(runnable, {
        name: `controller/${d.name}`,
        needLeaderElection: d.options.needLeaderElection ?? true,
        sharded: gate !== undefined,
      }),
  };
}
