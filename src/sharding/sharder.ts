/**
 * The sharder: the one writer of assignments (it runs as a leader-only runnable). It watches the
 * ring's membership Leases and the metadata of every object of each sharded primary kind, and moves
 * each object, one key at a time, towards the member rendezvous hashing picks among the live ones:
 *
 * | shard label       | drain label | action                                                          |
 * |-------------------|-------------|-----------------------------------------------------------------|
 * | none              | any         | assign the desired member (and clear a stray drain label)       |
 * | live, = desired   | none        | nothing                                                         |
 * | live, ≠ desired   | none        | set the drain label: the owner finishes, then removes its label |
 * | live              | set         | wait for the owner's acknowledgement                            |
 * | dead (confirmed)  | any         | assign the desired member directly                              |
 *
 * "Dead" is judged on the sharder's own clock (see `RingMembership`) and confirmed by a quorum read
 * of the member's Lease; fencing guarantees the member stopped before that can happen. Every write
 * carries the resourceVersion it was decided on, so a write based on a stale view fails (409) and the
 * key is decided again: two sharders at once (a split brain of leader election) stay safe too.
 */
import { clientListerWatcher } from '../cache/client-lister-watcher.js';
import { SharedInformer } from '../cache/informer.js';
import { isConflict, isNotFound } from '../client/api-error.js';
import { LEASE_TYPE } from '../leader-election/lease-record.js';
import type { Client } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import { sleep } from '../core/abort.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { keyOf, type KubeObject } from '../core/object-key.js';
import { requeueAfter, type Result } from '../core/result.js';
import { Controller } from '../controller/controller.js';
import type { Registry } from 'prom-client';
import { ownerOf } from './rendezvous.js';
import { bucketOf, bucketOwner } from './buckets.js';
import { RingMembership } from './ring-membership.js';
import type { ShardingMetrics } from './sharding-metrics.js';
import { drainLabel, shardLabel, type ResolvedShardingMode, type ResolvedSharding } from './sharding-options.js';

/** Value of the drain label (its presence is what counts). */
export const DRAIN_VALUE = 'true';

/** A dead member's Lease is deleted once unchanged for this many lease durations. @defaultValue 10 */
export const STALE_LEASE_FACTOR = 10;

/**
 * Keys the sharder decides at once per kind: a burst of new objects (or a join) is one label patch
 * each, and they must not queue behind each other. Each key is still decided by one worker at a time.
 * @defaultValue 4
 */
export const SHARDER_WORKERS = 4;

export interface SharderOptions {
  readonly client: Pick<Client, 'get' | 'listPage' | 'watch' | 'patch'>;
  /** Where the membership Leases are read (and stale ones deleted). */
  readonly leaseClient: Pick<Client, 'get' | 'listPage' | 'watch' | 'delete'>;
  readonly sharding: ResolvedSharding;
  /** The sharded primary kinds (read at start: controllers register theirs while the manager is built). */
  readonly kinds: () => readonly ResourceType[];
  /** Watch only these namespaces (the manager's); all when omitted. */
  readonly namespaces?: readonly string[];
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry?: Registry;
  readonly metrics: ShardingMetrics;
  /**
   * The ring's mode: `server` assigns by hash bucket of the uid (what the replicas' range informers
   * select), the others object by object. Awaited at start.
   */
  readonly mode: (signal: AbortSignal) => Promise<ResolvedShardingMode>;
}

interface KindLoop {
  readonly type: ResourceType;
  readonly informers: SharedInformer<KubeObject>[];
  readonly controller: Controller;
}

export class Sharder {
  private readonly shard: string;
  private readonly drain: string;
  private readonly log: Logger;
  /** When the drain of a key was requested (monotonic ms), for the hand-over duration. */
  private readonly drainStarted = new Map<string, number>();

  constructor(private readonly options: SharderOptions) {
    this.shard = shardLabel(options.sharding.ring);
    this.drain = drainLabel(options.sharding.ring);
    this.log = options.logger.child({ component: 'sharder', ring: options.sharding.ring });
  }

  private desiredOwner: (key: string, obj: KubeObject, live: readonly string[]) => string | undefined = (key, _obj, live) => ownerOf(key, live);

  async start(signal: AbortSignal): Promise<void> {
    const { sharding, clock } = this.options;
    let mode: ResolvedShardingMode;
    try {
      mode = await this.options.mode(signal);
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    if (mode === 'server') this.desiredOwner = (_key, obj, live) => bucketOwner(bucketOf(obj), live);
    const loops: KindLoop[] = [];
    const membership = new RingMembership({
      client: this.options.leaseClient,
      ring: sharding.ring,
      namespace: sharding.namespace,
      leaseDurationMs: sharding.leaseDurationMs,
      clock,
      logger: this.log,
      onChange: () => {
        this.options.metrics.rebalances.inc({ ring: sharding.ring });
        for (const loop of loops) for (const informer of loop.informers) for (const obj of informer.reader.list()) loop.controller.queue.add(keyOf(obj));
      },
    });
    for (const type of this.options.kinds()) loops.push(this.kindLoop(type, membership));
    this.log.info({ kinds: loops.map((l) => l.type.kind), mode }, 'sharder starting');
    const runs: Promise<void>[] = [membership.start(signal)];
    for (const loop of loops) for (const informer of loop.informers) runs.push(informer.start(signal));
    try {
      await membership.waitForSync(signal);
      await Promise.all(loops.flatMap((l) => l.informers.map((i) => i.waitForSync(signal))));
      // Replicas started together join within a renew period of each other: assigning at the first
      // member seen would hand everything to it only to drain most of it again.
      await sleep(clock, sharding.retryPeriodMs, signal);
    } catch {
      // Aborted before the first sync: fall through and wait for everything to stop.
    }
    if (!signal.aborted) {
      for (const loop of loops) runs.push(loop.controller.start(signal));
      runs.push(this.sweepStaleLeases(membership, signal));
    }
    await Promise.all(runs);
  }

  private kindLoop(type: ResourceType, membership: RingMembership): KindLoop {
    const scopes = this.options.namespaces?.length ? this.options.namespaces.map((namespace) => ({ namespace })) : [{}];
    const informers = scopes.map(
      (scope) =>
        new SharedInformer<KubeObject>(clientListerWatcher(this.options.client, { apiVersion: type.apiVersion, kind: type.kind, metadataOnly: true, ...scope }), {
          clock: this.options.clock,
          logger: this.log,
          name: `sharder ${type.apiVersion} ${type.kind}${'namespace' in scope ? ` ns=${scope.namespace}` : ''}`,
        }),
    );
    const find = (key: string): KubeObject | undefined => {
      for (const informer of informers) {
        const obj = informer.reader.get(key);
        if (obj) return obj;
      }
      return undefined;
    };
    const controller = new Controller({
      name: `sharder-${type.kind.toLowerCase()}`,
      maxConcurrentReconciles: SHARDER_WORKERS,
      clock: this.options.clock,
      logger: this.log,
      ...(this.options.registry ? { registry: this.options.registry } : {}),
      reconciler: {
        reconcile: async (request, ctx) => {
          const key = request.namespace ? `${request.namespace}/${request.name}` : request.name;
          const obj = find(key);
          if (!obj) {
            this.drainStarted.delete(key);
            return;
          }
          return this.assign(type, key, obj, membership, ctx.signal);
        },
      },
    });
    const enqueue = (obj: KubeObject): void => controller.queue.add(keyOf(obj));
    for (const informer of informers) informer.addEventHandler({ add: enqueue, update: (_old, obj) => enqueue(obj) }, { name: 'sharder' });
    return { type, informers, controller };
  }

  /**
   * Deletes membership Leases dead and unchanged for {@link STALE_LEASE_FACTOR} lease durations, each
   * conditioned on the resourceVersion seen (a member that came back and renewed keeps its Lease).
   * A member whose Lease is gone counts as dead, so this never hands anyone's keys on early.
   */
  private async sweepStaleLeases(membership: RingMembership, signal: AbortSignal): Promise<void> {
    const { sharding, clock } = this.options;
    for (;;) {
      try {
        await sleep(clock, sharding.leaseDurationMs, signal);
      } catch {
        return;
      }
      for (const stale of membership.staleLeases(STALE_LEASE_FACTOR * sharding.leaseDurationMs)) {
        try {
          await this.options.leaseClient.delete(LEASE_TYPE, stale.name, { namespace: sharding.namespace, preconditions: { resourceVersion: stale.resourceVersion }, signal });
          this.log.info({ lease: stale.name, member: stale.memberId }, 'deleted the membership Lease of a long-gone member');
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err) && !signal.aborted) this.log.warn({ err, lease: stale.name }, 'could not delete a stale membership Lease');
        }
      }
    }
  }

  /** One step of the table above for one object. */
  private async assign(type: ResourceType, key: string, obj: KubeObject, membership: RingMembership, signal: AbortSignal): Promise<Result | void> {
    const live = membership.liveMembers();
    const desired = this.desiredOwner(key, obj, live);
    if (desired === undefined) return; // no live member: a join enqueues every key again
    const labels = obj.metadata?.labels ?? {};
    const current = labels[this.shard];
    const draining = labels[this.drain] !== undefined;
    if (current === undefined || current === '') return this.write(type, key, obj, desired, this.drainStarted.has(key) ? 'drained' : 'new', signal);
    if (live.includes(current)) {
      if (current === desired && !draining) return;
      if (draining) return; // the owner acknowledges by removing its label, which enqueues the key
      if (!this.drainStarted.has(key)) this.drainStarted.set(key, this.options.clock.monotonicNow());
      if (await this.patch(type, obj, { [this.drain]: DRAIN_VALUE }, signal)) this.log.debug({ key, from: current, to: desired }, 'drain requested');
      return;
    }
    // Not live by our clock: confirm with a fresh read of its Lease before taking its keys.
    const first = membership.expiry(current);
    if (!first.expired) return requeueAfter(first.remainingMs + 1);
    const confirmed = await membership.confirmExpired(current, signal);
    if (!confirmed.expired) return requeueAfter(confirmed.remainingMs + 1);
    return this.write(type, key, obj, desired, 'owner-dead', signal, current);
  }

  private async write(type: ResourceType, key: string, obj: KubeObject, to: string, reason: 'new' | 'drained' | 'owner-dead', signal: AbortSignal, from?: string): Promise<void> {
    if (!(await this.patch(type, obj, { [this.shard]: to, [this.drain]: null }, signal))) return;
    const started = this.drainStarted.get(key);
    if (reason === 'drained' && started !== undefined) {
      this.options.metrics.handoverSeconds.observe({ ring: this.options.sharding.ring }, (this.options.clock.monotonicNow() - started) / 1000);
    }
    this.drainStarted.delete(key);
    if (reason !== 'new') this.options.metrics.moves.inc({ ring: this.options.sharding.ring, reason });
    if (reason === 'owner-dead') this.log.info({ key, from, to }, 'reassigned a key of a dead member');
    else this.log.debug({ key, to, reason }, 'assigned');
  }

  /**
   * A label patch conditioned on the resourceVersion the decision was made on. False when the object
   * changed or went meanwhile: its next event enqueues the key, which is then decided again.
   */
  private async patch(type: ResourceType, obj: KubeObject, labels: Record<string, string | null>, signal: AbortSignal): Promise<boolean> {
    const namespace = obj.metadata?.namespace;
    try {
      await this.options.client.patch(type, obj.metadata!.name!, { metadata: { resourceVersion: obj.metadata?.resourceVersion, labels } }, { type: 'merge', signal, ...(namespace ? { namespace } : {}) });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      if (isConflict(err)) {
        this.log.debug({ name: obj.metadata?.name, namespace }, 'object changed since decided: deciding again on its next event');
        return false;
      }
      throw err;
    }
  }
}
