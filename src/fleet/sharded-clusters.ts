/**
 * `shardedClusters`: replicas of a sharded manager divide member clusters among themselves (the
 * ring's unit is a cluster). A provider decorator: it engages in the fleet only the clusters of the
 * inner provider that this replica holds, and is itself a `ClusterProvider`.
 *
 * Who TRIES to hold a cluster is rendezvous hashing over the live ring (`ownerOf(cluster, live)`,
 * the membership Leases of docs/sharding.md, unchanged). Who HOLDS it is a per-cluster Lease
 * `<ring>-cluster-<name>` held with a `LeaderElector`: the Lease is the fence, so two replicas whose
 * views of the ring differ for a moment both try, and only one engages. The elector's fencing is
 * what makes "never two replicas reconciling one cluster" hold: a holder that cannot renew is
 * disengaged at renewDeadline, before anyone may take the Lease at leaseDuration; a holder that
 * gives a cluster up (the ring changed, the inner provider dropped it, shutdown) disengages it, waits
 * until the fleet says its reconciles have ended, and only then releases the Lease.
 */
import type { Registry } from 'prom-client';
import { ignoreNotFound, isAlreadyExists, isConflict } from '../client/api-error.js';
import type { Creator, Getter, ObjectWatcher, PageLister, Patcher, Updater } from '../client/contracts.js';
import { linkedAbortController, sleep, whenAborted } from '../core/abort.js';
import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { silentLogger } from '../core/logger.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { LeaderElector, type LeaderWork } from '../leader-election/leader-elector.js';
import {
  LEASE_TYPE,
  holderOf,
  leaseDurationSeconds,
  releasedLease,
  type Lease,
} from '../leader-election/lease-record.js';
import { getOrCreateGauge } from '../metrics/get-or-create-metric.js';
import { MemberLease } from '../sharding/member-lease.js';
import { ownerOf } from '../sharding/rendezvous.js';
import { RingMembership } from '../sharding/ring-membership.js';
import type { ResolvedSharding } from '../sharding/sharding-options.js';
import type { ClusterEvents, ClusterProvider, MemberCluster } from './cluster-provider.js';

/**
 * Label on every cluster Lease; its value is the ring. Not the membership label
 * (`operator-runtime.io/ring`): the ring's informers would see every cluster Lease renewal.
 */
export const CLUSTER_RING_LABEL = 'operator-runtime.io/cluster-ring';
/** Label on a cluster Lease naming the cluster. */
export const CLUSTER_LABEL = 'operator-runtime.io/cluster';

/** The per-cluster Lease: `<ring>-cluster-<cluster>`. */
export function clusterLeaseName(ring: string, cluster: string): string {
  return `${ring}-cluster-${cluster}`;
}

/** Runs work within this replica's ring membership term: a `MemberLease`'s `run`, or the manager's term. */
export type MembershipRunner = (signal: AbortSignal, work: LeaderWork) => Promise<void>;

export interface ShardedClustersOptions {
  /** The host cluster's client: the membership and cluster Leases (get, list, watch, create, update, patch). */
  readonly client: Getter & PageLister & ObjectWatcher & Creator & Updater & Patcher;
  /** The ring (namespace, member id, identity and the Lease timings of every cluster Lease). */
  readonly sharding: ResolvedSharding;
  /**
   * Runs `work` within this replica's membership term (its signal aborting when the term ends). With
   * the manager's `sharding`, it must be the manager's own term (a work added to it), never a second
   * holder of the same membership Lease. @defaultValue a `MemberLease` of its own, from `sharding`
   */
  readonly membership?: MembershipRunner;
  /**
   * Resolves once the cluster's in-flight reconciles have ended after `disengage(name)`; the cluster's
   * Lease is released only then. Not needed when the fleet's `disengage` returns that promise itself.
   * @defaultValue what `disengage` returned
   */
  readonly whenDisengaged?: (name: string) => Promise<void>;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** For `fleet_owned_clusters{ring}` and the electors' `leader_election_master_status`. */
  readonly registry?: Registry;
  /** Random source in [0, 1) for the electors' jitter and the ring's watch (tests). @defaultValue Math.random */
  readonly random?: () => number;
}

/** One cluster this replica wants: an elector on its Lease, until `stop` aborts. */
interface Slot {
  readonly stop: AbortController;
  readonly done: Promise<void>;
  readonly state: SlotState;
}

interface SlotState {
  /** Engaged in the fleet now (between acquire and disengage). */
  engaged: boolean;
}

/** A provider engaging only the clusters of `inner` this replica holds the cluster Lease of. */
export function shardedClusters(inner: ClusterProvider, options: ShardedClustersOptions): ClusterProvider {
  const s = options.sharding;
  return {
    description: `sharded ${inner.description} (ring ${s.ring})`,
    start: (signal, events) => new ShardedClusters(inner, options, events).start(signal),
    requiredPermissions: () => {
      const reason = `fleet sharding: cluster Leases of ring ${s.ring}`;
      return [
        {
          resource: LEASE_TYPE,
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'],
          namespace: s.namespace,
          reason,
        },
        ...(inner.requiredPermissions?.() ?? []),
      ];
    },
  };
}

class ShardedClusters {
  private readonly clock: Clock;
  private readonly log: Logger;
  /** What the inner provider has engaged, latest first-hand. */
  private readonly known = new Map<string, MemberCluster>();
  private readonly slots = new Map<string, Slot>();
  /** A slot being given up: the next one for that cluster starts only after it. */
  private readonly stopping = new Map<string, Promise<void>>();
  private live: readonly string[] = [];
  /** Within our membership term, after the ring synced. */
  private active = false;
  private memberSignal: AbortSignal | undefined;
  private ring: RingMembership | undefined;
  /** Members seen leaving the ring (crashed or released): whose cluster Leases may be reclaimed. */
  private readonly departed = new Set<string>();
  private readonly owned: { inc(): void; dec(): void };

  constructor(
    private readonly inner: ClusterProvider,
    private readonly options: ShardedClustersOptions,
    private readonly events: ClusterEvents,
  ) {
    this.clock = options.clock ?? realClock;
    const s = options.sharding;
    this.log = (options.logger ?? silentLogger).child({
      component: 'fleet-sharding',
      ring: s.ring,
      member: s.memberId,
    });
    const gauge = options.registry
      ? getOrCreateGauge(options.registry, {
          name: 'fleet_owned_clusters',
          help: 'Member clusters this replica holds the cluster Lease of and has engaged',
          labelNames: ['ring'],
        })
      : undefined;
    gauge?.set({ ring: s.ring }, 0);
    this.owned = {
      inc: () => gauge?.inc({ ring: s.ring }),
      dec: () => gauge?.dec({ ring: s.ring }),
    };
  }

  async start(signal: AbortSignal): Promise<void> {
    const s = this.options.sharding;
    const membership =
      this.options.membership ??
      ((sig: AbortSignal, work: LeaderWork) =>
        new MemberLease({
          client: this.options.client,
          sharding: s,
          clock: this.clock,
          logger: this.options.logger ?? silentLogger,
          ...omitUndefined({ registry: this.options.registry, random: this.options.random }),
        }).run(sig, work));
    const innerEvents: ClusterEvents = {
      engage: (cluster) => this.innerEngaged(cluster),
      disengage: (name) => this.innerDisengaged(name),
    };
    const providing = this.inner.start(signal, innerEvents);
    const member = membership(signal, (memberSignal) => this.memberTerm(memberSignal));
    // Either settles first on shutdown; a rejection of either (membership lost) stops the manager.
    await Promise.all([providing, member]);
  }

  private async memberTerm(memberSignal: AbortSignal): Promise<void> {
    const s = this.options.sharding;
    const ring = new RingMembership({
      client: this.options.client,
      ring: s.ring,
      namespace: s.namespace,
      leaseDurationMs: s.leaseDurationMs,
      clock: this.clock,
      logger: this.log,
      ...omitUndefined({ random: this.options.random }),
      onChange: (change) => {
        for (const m of change.left) this.departed.add(m);
        for (const m of change.joined) this.departed.delete(m);
        this.live = change.live;
        this.reconcile();
      },
    });
    this.ring = ring;
    const watching = ring.start(memberSignal);
    try {
      await ring.waitForSync(memberSignal);
      this.live = ring.liveMembers();
      this.memberSignal = memberSignal;
      this.active = true;
      this.log.info({ live: this.live.length }, 'dividing member clusters');
      this.reconcile();
      await whenAborted(memberSignal);
    } catch {
      // waitForSync rejects once the term ends: nothing was started.
    } finally {
      this.active = false;
      this.memberSignal = undefined;
      this.reconcile();
      this.ring = undefined;
      await Promise.all([...this.slots.values()].map((slot) => slot.done));
      await Promise.all([...this.stopping.values()]);
      await watching;
    }
  }

  private innerEngaged(cluster: MemberCluster): void {
    this.known.set(cluster.name, cluster);
    // A new revision or labels of a cluster we hold: pass it on (the fleet replaces the engagement).
    if (this.slots.get(cluster.name)?.state.engaged) this.events.engage(cluster);
    this.reconcile();
  }

  private innerDisengaged(name: string): void {
    this.known.delete(name);
    this.reconcile();
  }

  /** Wanted: known, within our term, and ours by rendezvous over the live ring. */
  private wants(name: string): boolean {
    const self = this.options.sharding.memberId;
    return this.active && this.known.has(name) && this.live.includes(self) && ownerOf(name, this.live) === self;
  }

  /** Starts a slot for every wanted cluster without one, stops every slot no longer wanted. */
  private reconcile(): void {
    for (const [name, slot] of this.slots) {
      if (this.wants(name)) continue;
      this.slots.delete(name);
      this.log.info({ cluster: name }, 'giving the cluster up');
      slot.stop.abort();
      const done = slot.done.finally(() => {
        if (this.stopping.get(name) === done) this.stopping.delete(name);
      });
      this.stopping.set(name, done);
    }
    for (const name of this.known.keys()) {
      if (this.slots.has(name) || !this.wants(name)) continue;
      const linked = linkedAbortController(this.memberSignal);
      const previous = this.stopping.get(name) ?? Promise.resolve();
      const state = { engaged: false };
      const done = previous
        .then(() => this.hold(name, linked.controller.signal, state))
        .finally(() => linked.dispose());
      this.slots.set(name, { stop: linked.controller, done, state });
    }
  }

  /** Holds the cluster's Lease until the slot stops, engaging the cluster in the fleet while it is held. */
  private async hold(name: string, signal: AbortSignal, slot: SlotState): Promise<void> {
    const s = this.options.sharding;
    const leaseName = clusterLeaseName(s.ring, name);
    const log = this.log.child({ cluster: name, lease: leaseName });
    if (!(await this.ensureLease(name, leaseName, signal, log))) return;
    await this.reclaimFromDeparted(leaseName, signal, log);
    const elector = new LeaderElector({
      client: this.options.client,
      name: leaseName,
      namespace: s.namespace,
      identity: s.identity,
      leaseDurationMs: s.leaseDurationMs,
      renewDeadlineMs: s.renewDeadlineMs,
      retryPeriodMs: s.retryPeriodMs,
      // A lost Lease (renew deadline missed) makes us a candidate again, once the cluster is disengaged.
      reenterCandidacy: true,
      clock: this.clock,
      logger: log,
      ...omitUndefined({ registry: this.options.registry, random: this.options.random }),
      onStartedLeading: (leaderSignal) => this.engaged(name, slot, leaderSignal, log),
    });
    try {
      await elector.start(signal);
    } catch (err) {
      if (!signal.aborted) log.error({ err }, 'cluster lease election failed');
    }
  }

  /** Leader-only work of a cluster Lease: engaged from acquiring it until its signal aborts, then drained. */
  private async engaged(name: string, slot: SlotState, leaderSignal: AbortSignal, log: Logger): Promise<void> {
    const cluster = this.known.get(name);
    if (!cluster || leaderSignal.aborted) return;
    slot.engaged = true;
    this.owned.inc();
    log.info({}, 'holding the cluster: engaged');
    this.events.engage(cluster);
    try {
      await whenAborted(leaderSignal);
    } finally {
      slot.engaged = false;
      const drained = Promise.all([
        Promise.resolve(this.events.disengage(name) as unknown),
        this.options.whenDisengaged?.(name),
      ]);
      await drained.catch((err: unknown) => log.warn({ err }, 'waiting for the cluster to disengage failed'));
      this.owned.dec();
      log.info({ reason: String((leaderSignal.reason as Error | undefined)?.message ?? '') }, 'cluster disengaged');
    }
  }

  /**
   * A fresh elector waits a whole leaseDuration from its first look before taking a Lease, which
   * after a crash would come on top of the leaseDuration the ring took to declare the member dead.
   * But a member's cluster work runs within its membership term, fenced by that Lease: once its
   * membership Lease is confirmed expired (a quorum read, as the sharder confirms before moving
   * keys), its clusters are disengaged. So a cluster Lease whose holder is such a departed member
   * (and no live member has its identity) is released for the elector to take at once.
   */
  private async reclaimFromDeparted(leaseName: string, signal: AbortSignal, log: Logger): Promise<void> {
    const ring = this.ring;
    if (!ring) return;
    const namespace = this.options.sharding.namespace;
    try {
      const lease = await ignoreNotFound(this.options.client.get<Lease>(LEASE_TYPE, leaseName, { namespace, signal }));
      const holder = holderOf(lease);
      if (!lease || holder === '' || this.live.some((m) => ring.identityOf(m) === holder)) return;
      const member = [...this.departed].find((m) => ring.identityOf(m) === holder);
      if (member === undefined || !(await ring.confirmExpired(member, signal)).expired) return;
      await this.options.client.update(releasedLease(lease, this.clock.now()), { signal });
      log.info({ holder, departedMember: member }, 'cluster lease held by a departed ring member: released it');
    } catch (err) {
      // A conflict is the holder or another replica writing: the elector sorts it out from here.
      if (!signal.aborted && !isConflict(err)) log.warn({ err }, 'could not reclaim the cluster lease');
    }
  }

  /** Creates the cluster Lease labelled (no holder) so it can be found by ring; the elector takes it from there. */
  private async ensureLease(name: string, leaseName: string, signal: AbortSignal, log: Logger): Promise<boolean> {
    const s = this.options.sharding;
    const lease: Lease = {
      ...LEASE_TYPE,
      metadata: {
        name: leaseName,
        namespace: s.namespace,
        labels: { [CLUSTER_RING_LABEL]: s.ring, [CLUSTER_LABEL]: name },
      },
      spec: { leaseDurationSeconds: leaseDurationSeconds(s.leaseDurationMs) },
    };
    for (;;) {
      if (signal.aborted) return false;
      try {
        await this.options.client.create(lease, { signal });
        return true;
      } catch (err) {
        if (isAlreadyExists(err)) return true;
        if (!signal.aborted) log.warn({ err }, 'could not create the cluster lease: retrying');
        try {
          await sleep(this.clock, s.retryPeriodMs, signal);
        } catch {
          return false;
        }
      }
    }
  }
}
