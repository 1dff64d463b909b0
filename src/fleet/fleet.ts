/**
 * The fleet runtime (multicluster-runtime's multi-cluster manager, as one part of our manager):
 * it hears the provider's engage/disengage, keeps one `ClusterEngagement` per member cluster, and
 * puts every running fleet controller's handlers on each member's informers. The manager runs it
 * as one member of its every-replica group (`start(signal)`, a Runnable) (member caches run on every replica, as the host's
 * caches do); fleet controllers are ordinary leader-only runnables that register here when they
 * start.
 */
import type { Registry } from 'prom-client';
import type { HandlerRegistration } from '../cache/informer.js';
import type { KindLabelSelector } from '../cache/informer-cache.js';
import type { ResourceType } from '../client/discovery.js';
import { whenAborted } from '../core/abort.js';
import type { Clock } from '../core/clock.js';
import { AlreadyStartedError, InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { PermissionRequirement } from '../rbac/permission.js';
import { ClusterEngagement, type EngagementContext, type FleetClusterHealth } from './cluster-engagement.js';
import { validateClusterName, type ClusterEvents, type MemberCluster } from './cluster-provider.js';
import { DEFAULT_CLUSTER_SYNC_TIMEOUT_MS, DEFAULT_FLEET_MAX_CLUSTERS, type FleetOptions } from './fleet-options.js';
import { FleetMetrics, countRefusal } from './fleet-metrics.js';
import type { ClusterView } from './fleet-reconciler.js';

/** What a fleet controller gives the fleet: how to put its handlers on one member's informers. */
export interface FleetAttachment {
  readonly name: string;
  /** Resolves with the registrations made on `engagement`'s informers (removed on detach). */
  attach(engagement: ClusterEngagement): Promise<HandlerRegistration[]>;
}

/** The read-only view of the fleet the manager exposes as `manager.fleet`. */
export interface FleetView {
  /** Every member cluster connected now (its client and cache usable). */
  clusters(): ClusterView[];
  /** The connected member cluster named, if any. */
  cluster(name: string): ClusterView | undefined;
  /** Every engaged member, connected or not, with its state (no credential in it). */
  health(): FleetClusterHealth[];
  /** True when every engaged member is `ready` (what `/readyz` checks with `readiness: 'all-clusters'`). */
  allReady(): boolean;
}

export interface FleetHost {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly ownWritesWaitMs?: number;
  readonly labelSelectorsByKind?: readonly KindLabelSelector[];
}

export class Fleet implements ClusterEvents, FleetView {
  readonly metrics: FleetMetrics;
  private readonly log: Logger;
  private readonly context: EngagementContext;
  /** Engaged before start: engaged at start, the last engage of a name winning. */
  private readonly pending = new Map<string, MemberCluster>();
  private readonly engagements = new Map<string, ClusterEngagement>();
  /** Members refused for `maxClusters`, by name: engaged in name order as others leave. */
  private readonly waiting = new Map<string, MemberCluster>();
  private readonly maxClusters: number;
  private readonly registry: Registry;
  /** Per cluster name, the previous engagement's stop: a replacement starts only after it. */
  private readonly leaving = new Map<string, Promise<void>>();
  private readonly kinds = new Map<string, ResourceType>();
  private readonly running = new Set<FleetAttachment>();
  private signal: AbortSignal | undefined;
  private stopped = false;

  constructor(
    private readonly options: FleetOptions,
    host: FleetHost,
  ) {
    if (!options.provider) throw new InvalidOptionError('fleet.provider', 'a fleet needs a cluster provider');
    const timeout = options.clusterSyncTimeoutMs ?? DEFAULT_CLUSTER_SYNC_TIMEOUT_MS;
    if (!(Number.isFinite(timeout) && timeout > 0))
      throw new InvalidOptionError('fleet.clusterSyncTimeoutMs', 'must be a number > 0');
    const readiness = options.readiness ?? 'host';
    if (readiness !== 'host' && readiness !== 'all-clusters')
      throw new InvalidOptionError('fleet.readiness', "must be 'host' or 'all-clusters'");
    const maxClusters = options.maxClusters ?? DEFAULT_FLEET_MAX_CLUSTERS;
    if (!(Number.isInteger(maxClusters) && maxClusters > 0))
      throw new InvalidOptionError('fleet.maxClusters', 'must be a whole number > 0');
    this.maxClusters = maxClusters;
    this.registry = host.registry;
    this.log = host.logger.child({ component: 'fleet' });
    this.metrics = new FleetMetrics(host.registry, () =>
      [...this.engagements.values()].map((e) => ({ name: e.name, state: e.state(), synced: e.synced })),
    );
    this.context = {
      clock: host.clock,
      logger: host.logger,
      registry: host.registry,
      clusterSyncTimeoutMs: timeout,
      ...omitUndefined({ ownWritesWaitMs: host.ownWritesWaitMs, labelSelectorsByKind: host.labelSelectorsByKind }),
      kinds: () => [...this.kinds.values()],
      connected: (engagement) => {
        for (const controller of this.running) this.attachOne(controller, engagement);
      },
    };
  }

  /** Whether replicas divide the clusters (`sharded`): fleet controllers then run on every replica. */
  get sharded(): boolean {
    return this.options.sharded ?? false;
  }

  get readiness(): 'host' | 'all-clusters' {
    return this.options.readiness ?? 'host';
  }

  /** The provider's host-cluster permissions (a Secret informer, say). */
  providerPermissions(): readonly PermissionRequirement[] {
    return this.options.provider.requiredPermissions?.() ?? [];
  }

  /** A kind some fleet controller watches: every member's informers of it start at connect. */
  watchKind(type: ResourceType): void {
    this.kinds.set(`${type.apiVersion}/${type.kind}`, type);
  }

  engage(cluster: MemberCluster): void {
    // Refused at once, before anything of it exists: the provider logs the error with the name.
    validateClusterName(cluster.name);
    if (this.stopped) return;
    if (!this.signal) {
      this.pending.set(cluster.name, cluster);
      return;
    }
    const current = this.engagements.get(cluster.name);
    if (!current && (this.waiting.has(cluster.name) || this.engagements.size >= this.maxClusters)) {
      this.refuse(cluster);
      return;
    }
    if (current && current.revision === cluster.revision) {
      current.labels = { ...cluster.labels };
      return;
    }
    const previous = current
      ? this.retire(current, `revision ${cluster.revision} replaces ${current.revision}`)
      : undefined;
    const engagement = new ClusterEngagement(cluster, this.context, this.signal);
    this.engagements.set(cluster.name, engagement);
    this.log.info({ cluster: cluster.name, revision: cluster.revision }, 'engaging member cluster');
    const before = previous ?? this.leaving.get(cluster.name) ?? Promise.resolve();
    // Its series are removed before the new engagement writes any under the same name.
    void before.then(() => {
      if (this.engagements.get(cluster.name) === engagement) engagement.start();
    });
  }

  /** Resolves once the cluster's in-flight reconciles have ended and its caches stopped (sharding releases its Lease then). */
  disengage(name: string): Promise<void> {
    this.pending.delete(name);
    if (this.waiting.delete(name))
      this.log.info({ cluster: name }, 'waiting member cluster left before it was engaged');
    const current = this.engagements.get(name);
    if (!current) return this.whenLeft(name);
    const left = this.retire(current, 'the provider disengaged it');
    this.admitWaiting();
    return left;
  }

  /** Resolves once the named cluster's last engagement has fully stopped (for tests and the fleet's own sequencing). */
  async whenLeft(name: string): Promise<void> {
    await this.leaving.get(name);
  }

  clusters(): ClusterView[] {
    return [...this.engagements.values()].filter((e) => e.active);
  }

  cluster(name: string): ClusterView | undefined {
    return this.active(name);
  }

  health(): FleetClusterHealth[] {
    return [...this.engagements.values()].map((e) => e.health());
  }

  allReady(): boolean {
    return [...this.engagements.values()].every((e) => e.state() === 'ready');
  }

  /** The engagement whose keys may be reconciled now, or undefined (the cluster left or is not connected yet). */
  active(name: string): ClusterEngagement | undefined {
    const e = this.engagements.get(name);
    return e?.active ? e : undefined;
  }

  /** A fleet controller started: its handlers go on every connected member now and every later one. */
  controllerStarted(controller: FleetAttachment): void {
    this.running.add(controller);
    for (const e of this.engagements.values()) if (e.active) this.attachOne(controller, e);
  }

  controllerStopped(controller: FleetAttachment): void {
    this.running.delete(controller);
    for (const e of this.engagements.values()) e.detach(controller.name);
  }

  /** Runs the provider and the engaged members until `signal` aborts; then stops every member. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.signal) throw new AlreadyStartedError('the fleet was already started');
    this.signal = signal;
    for (const cluster of this.pending.values()) this.engage(cluster);
    this.pending.clear();
    this.log.info({ provider: this.options.provider.description }, 'starting cluster provider');
    try {
      await Promise.all([this.options.provider.start(signal, this), whenAborted(signal)]);
    } finally {
      this.stopped = true;
      this.waiting.clear();
      for (const e of [...this.engagements.values()]) void this.retire(e, 'the manager is stopping');
      await Promise.all([...this.leaving.values()]);
      this.metrics.close();
    }
  }

  /** Keeps a member beyond `maxClusters` waiting; reports it once (a new revision of it replaces it quietly). */
  private refuse(cluster: MemberCluster): void {
    const known = this.waiting.has(cluster.name);
    this.waiting.set(cluster.name, cluster);
    if (known) return;
    countRefusal(this.registry, 'fleet', 'max_clusters');
    this.log.warn(
      { cluster: cluster.name, maxClusters: this.maxClusters, waiting: this.waiting.size },
      'member cluster refused: the fleet holds maxClusters members; it is engaged once others leave',
    );
  }

  /** Engages waiting members, in name order, while there is room. */
  private admitWaiting(): void {
    while (!this.stopped && this.waiting.size > 0 && this.engagements.size < this.maxClusters) {
      const name = [...this.waiting.keys()].reduce((a, b) => (b < a ? b : a));
      const cluster = this.waiting.get(name)!;
      this.waiting.delete(name);
      this.log.info({ cluster: name }, 'waiting member cluster engaged: another left');
      this.engage(cluster);
    }
  }

  private retire(engagement: ClusterEngagement, reason: string): Promise<void> {
    if (this.engagements.get(engagement.name) === engagement) this.engagements.delete(engagement.name);
    const done = engagement
      .stop(reason)
      .then(() => this.metrics.removeCluster(engagement.name, engagement.informerNames()));
    const settled = done.catch((err: unknown) =>
      this.log.error({ err, cluster: engagement.name }, 'disengaging member cluster failed'),
    );
    this.leaving.set(engagement.name, settled);
    void settled.then(() => {
      if (this.leaving.get(engagement.name) === settled) this.leaving.delete(engagement.name);
    });
    return settled;
  }

  private attachOne(controller: FleetAttachment, engagement: ClusterEngagement): void {
    controller.attach(engagement).then(
      (registrations) => {
        // Stopped or left while attaching: remove what was just put on.
        if (!this.running.has(controller) || !engagement.active) for (const r of registrations) r.remove();
        else engagement.attached(controller.name, registrations);
      },
      (err: unknown) => {
        if (engagement.active)
          this.log.error({ err, cluster: engagement.name, controller: controller.name }, 'attaching handlers failed');
      },
    );
  }
}
