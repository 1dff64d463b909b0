/**
 * The sharder: the one writer of assignments (it runs as a leader-only runnable). It watches the
 * ring's membership Leases and the metadata of every object of each sharded primary kind, and moves
 * each object, one key at a time, towards the member rendezvous hashing picks among the live ones.
 *
 * A member owns an object only while the shard label **and** the grant label name it (a "grant");
 * the sharder writes both at once, and the owner gives an object up by taking its name off and
 * writing the released label with its member id. So no single edited label can create a grant, and
 * anything that is not a grant is treated as a hand-over still pending:
 *
 * | labels                                   | action                                                        |
 * |------------------------------------------|---------------------------------------------------------------|
 * | granted to live X, X = desired, no drain | nothing                                                       |
 * | granted to live X, X ≠ desired, no drain | set the drain label: the owner finishes, then releases        |
 * | granted to live X, draining              | wait for the owner's release                                  |
 * | granted to X, dead (confirmed)           | grant the desired member directly                             |
 * | not a grant; no live member may hold it  | grant the desired member                                      |
 * | not a grant; one live member may hold it | grant it back to that member (draining if it should move)     |
 * | not a grant; several may hold it         | drain, and name in the shard label one that must release      |
 *
 * The members that "may hold" an object are those named in its shard or grant label and the one
 * this sharder last saw it granted to, unless that one wrote its release since; dead ones are not
 * counted once their death is confirmed. So a label removed or changed by someone else while the
 * owner reconciles makes no other member start: the owner is still counted until it released.
 *
 * "Dead" is judged on the sharder's own clock (see `RingMembership`) and confirmed by a quorum read
 * of the member's Lease; fencing guarantees the member stopped before that can happen. Every write
 * carries the resourceVersion it was decided on, so a write based on a stale view fails (409) and the
 * key is decided again: two sharders at once (a split brain of leader election) stay safe too.
 *
 * An object the API server refuses to relabel (422 after its CRD was tightened, 403 from an
 * admission policy…) cannot be assigned: it is reported (a Warning Event on it, the
 * `sharding_unassignable_objects` gauge) and retried with the controller's per-key backoff.
 */
import { clientListerWatcher } from '../cache/client-lister-watcher.js';
import { SharedInformer } from '../cache/informer.js';
import { ApiError, isConflict, isNotFound } from '../client/api-error.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { LEASE_TYPE } from '../leader-election/lease-record.js';
import type { Deleter, Getter, ObjectWatcher, PageLister, Patcher } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import { sleep } from '../core/abort.js';
import type { Clock } from '../core/clock.js';
import { OperatorRuntimeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { keyOf, type KubeObject } from '../core/object-key.js';
import { requeueAfter, type Result } from '../core/result.js';
import { Controller } from '../controller/controller.js';
import type { Registry } from 'prom-client';
import { ownerOf } from './rendezvous.js';
import { bucketOf, bucketOwner } from './buckets.js';
import { RingMembership } from './ring-membership.js';
import type { ShardingMetrics } from './sharding-metrics.js';
import {
  drainLabel,
  grantLabel,
  releasedLabel,
  shardLabel,
  type ResolvedShardingMode,
  type ResolvedSharding,
} from './sharding-options.js';

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

/** Where the sharder reports an object it cannot assign (the manager's `EventRecorder` has this shape). */
export interface SharderEvents {
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** Reason of the Warning Event on an object the API server refuses to relabel. */
export const UNASSIGNABLE_EVENT_REASON = 'ShardAssignmentFailed';

/**
 * Thrown by a sharder worker when the API server refuses the label write that would assign an
 * object (a client error other than a conflict or not-found): the controller retries it with
 * backoff, and the object counts in `sharding_unassignable_objects` until a write succeeds.
 */
export class ShardAssignmentError extends OperatorRuntimeError {
  declare readonly code: 'ERR_SHARD_ASSIGNMENT';
  readonly key: string;

  constructor(kind: string, key: string, cause: unknown) {
    super(
      'ERR_SHARD_ASSIGNMENT',
      `cannot assign ${kind} ${key}: the API server refused its shard labels (${cause instanceof Error ? cause.message : String(cause)})`,
      { cause },
    );
    this.key = key;
  }
}

export interface SharderOptions {
  readonly client: Getter & PageLister & ObjectWatcher & Patcher;
  /** Where the membership Leases are read (and stale ones deleted). */
  readonly leaseClient: Getter & PageLister & ObjectWatcher & Deleter;
  readonly sharding: ResolvedSharding;
  /** The sharded primary kinds (read at start: controllers register theirs while the manager is built). */
  readonly kinds: () => readonly ResourceType[];
  /** Watch only these namespaces (the manager's); all when omitted. */
  readonly namespaces?: readonly string[];
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry?: Registry;
  readonly metrics: ShardingMetrics;
  /** Where objects that cannot be assigned are reported; logged only when omitted. */
  readonly events?: SharderEvents;
  /**
   * The ring's mode: `server` assigns by hash bucket of the uid (what the replicas' range informers
   * select), the others object by object. Awaited at start.
   */
  readonly mode: (signal: AbortSignal) => Promise<ResolvedShardingMode>;
  /** Random source in [0, 1) for its watches' timeouts and backoff (tests). @defaultValue Math.random */
  readonly random?: () => number;
}

interface KindLoop {
  readonly type: ResourceType;
  readonly informers: SharedInformer<KubeObject>[];
  readonly controller: Controller;
  /** The member each key was last seen granted to (until it releases it): who may still hold it. */
  readonly lastOwner: Map<string, string>;
  /** Keys whose label writes the API server refused, until one succeeds or the object goes. */
  readonly unassignable: Set<string>;
}

const named = (value: string | undefined): string | undefined =>
  value === undefined || value === '' ? undefined : value;

export class Sharder {
  private readonly shard: string;
  private readonly drain: string;
  private readonly grant: string;
  private readonly released: string;
  private readonly log: Logger;
  private readonly loops: KindLoop[] = [];
  /** When the drain of a key was requested (monotonic ms), for the hand-over duration. */
  private readonly drainStarted = new Map<string, number>();

  constructor(private readonly options: SharderOptions) {
    this.shard = shardLabel(options.sharding.ring);
    this.drain = drainLabel(options.sharding.ring);
    this.grant = grantLabel(options.sharding.ring);
    this.released = releasedLabel(options.sharding.ring);
    this.log = options.logger.child({ component: 'sharder', ring: options.sharding.ring });
  }

  private desiredOwner: (key: string, obj: KubeObject, live: readonly string[]) => string | undefined = (
    key,
    _obj,
    live,
  ) => ownerOf(key, live);

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
    const loops = this.loops;
    const membership = new RingMembership({
      client: this.options.leaseClient,
      ring: sharding.ring,
      namespace: sharding.namespace,
      leaseDurationMs: sharding.leaseDurationMs,
      clock,
      logger: this.log,
      ...omitUndefined({ random: this.options.random }),
      onChange: () => {
        this.options.metrics.rebalances.inc({ ring: sharding.ring });
        for (const loop of loops)
          for (const informer of loop.informers)
            for (const obj of informer.reader.list()) loop.controller.queue.add(keyOf(obj));
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
        new SharedInformer<KubeObject>(
          clientListerWatcher(this.options.client, {
            apiVersion: type.apiVersion,
            kind: type.kind,
            metadataOnly: true,
            ...scope,
          }),
          {
            clock: this.options.clock,
            logger: this.log,
            ...omitUndefined({ random: this.options.random }),
            name: `sharder ${type.apiVersion} ${type.kind}${'namespace' in scope ? ` ns=${scope.namespace}` : ''}`,
          },
        ),
    );
    const find = (key: string): KubeObject | undefined => {
      for (const informer of informers) {
        const obj = informer.reader.get(key);
        if (obj) return obj;
      }
      return undefined;
    };
    // eslint-disable-next-line prefer-const -- the reconciler below closes over it
    let loop: KindLoop;
    const controller = new Controller({
      name: `sharder-${type.kind.toLowerCase()}`,
      maxConcurrentReconciles: SHARDER_WORKERS,
      clock: this.options.clock,
      logger: this.log,
      ...omitUndefined({ registry: this.options.registry }),
      reconciler: {
        reconcile: async (request, ctx) => {
          const key = request.namespace ? `${request.namespace}/${request.name}` : request.name;
          const obj = find(key);
          if (!obj) {
            this.drainStarted.delete(key);
            loop.lastOwner.delete(key);
            loop.unassignable.delete(key);
            return;
          }
          return this.assign(loop, key, obj, membership, ctx.signal);
        },
      },
    });
    const enqueue = (obj: KubeObject): void => controller.queue.add(keyOf(obj));
    for (const informer of informers)
      informer.addEventHandler({ add: enqueue, update: (_old, obj) => enqueue(obj) }, { name: 'sharder' });
    loop = { type, informers, controller, lastOwner: new Map(), unassignable: new Set() };
    return loop;
  }

  /** Objects the API server currently refuses to relabel, by kind (the `sharding_unassignable_objects` gauge). */
  unassignableByKind(): ReadonlyMap<string, number> {
    return new Map(this.loops.map((l) => [l.type.kind, l.unassignable.size]));
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
          await this.options.leaseClient.delete(LEASE_TYPE, stale.name, {
            namespace: sharding.namespace,
            preconditions: { resourceVersion: stale.resourceVersion },
            signal,
          });
          this.log.info(
            { lease: stale.name, member: stale.memberId },
            'deleted the membership Lease of a long-gone member',
          );
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err) && !signal.aborted)
            this.log.warn({ err, lease: stale.name }, 'could not delete a stale membership Lease');
        }
      }
    }
  }

  /** One step of the table above for one object. */
  private async assign(
    loop: KindLoop,
    key: string,
    obj: KubeObject,
    membership: RingMembership,
    signal: AbortSignal,
  ): Promise<Result | void> {
    const live = membership.liveMembers();
    const desired = this.desiredOwner(key, obj, live);
    if (desired === undefined) return; // no live member: a join enqueues every key again
    const labels = obj.metadata?.labels ?? {};
    const shard = named(labels[this.shard]);
    const grant = named(labels[this.grant]);
    const draining = labels[this.drain] !== undefined;
    const released = named(labels[this.released]);

    if (shard !== undefined && shard === grant) {
      // A grant (both labels agree: one edited label cannot make one).
      loop.lastOwner.set(key, shard);
      if (live.includes(shard)) {
        if (draining || shard === desired) return; // draining: the owner's release enqueues the key
        if (!this.drainStarted.has(key)) this.drainStarted.set(key, this.options.clock.monotonicNow());
        if (await this.patch(loop, key, obj, { [this.drain]: DRAIN_VALUE }, signal))
          this.log.debug({ key, from: shard, to: desired }, 'drain requested');
        return;
      }
      const dead = await this.confirmDead(shard, membership, signal);
      if (dead !== true) return dead;
      return this.write(loop, key, obj, desired, 'owner-dead', signal, shard);
    }

    // Not a grant: no member admits the key now. Who may still be reconciling it?
    let last = loop.lastOwner.get(key);
    if (last !== undefined && last === released) last = undefined; // it acknowledged
    const candidates = [...new Set([shard, grant, last].filter((m): m is string => m !== undefined))];
    const holders: string[] = [];
    for (const member of candidates) {
      if (live.includes(member)) {
        holders.push(member);
        continue;
      }
      const dead = await this.confirmDead(member, membership, signal);
      if (dead !== true) return dead;
    }
    if (holders.length === 0) {
      const reason =
        candidates.length > 0 ? 'owner-dead' : released !== undefined || this.drainStarted.has(key) ? 'drained' : 'new';
      return this.write(loop, key, obj, desired, reason, signal, candidates[0] ?? released);
    }
    if (holders.length === 1) {
      // The one member that may hold it gets it back (draining if it should move), never another.
      const holder = holders[0]!;
      const drain = holder !== desired;
      if (drain && !this.drainStarted.has(key)) this.drainStarted.set(key, this.options.clock.monotonicNow());
      const legacy = shard === holder && grant === undefined && last === undefined; // labelled before grants existed
      if (
        await this.patch(
          loop,
          key,
          obj,
          {
            [this.shard]: holder,
            [this.grant]: holder,
            [this.drain]: drain ? DRAIN_VALUE : null,
            [this.released]: null,
          },
          signal,
        )
      ) {
        loop.lastOwner.set(key, holder);
        if (legacy) this.log.debug({ key, owner: holder }, 'granted a key to the owner its shard label names');
        else
          this.log.warn(
            { key, owner: holder, shardLabel: shard ?? null, grantLabel: grant ?? null },
            'the shard labels of a key were changed by someone other than the operator: restored its owner’s grant (see docs/sharding.md)',
          );
      }
      return;
    }
    // Several members may hold it. Each named in the shard label sees it and releases its name; one
    // that is not cannot see it (label mode), so it is named there, draining, to release too.
    if (shard !== undefined && holders.includes(shard)) {
      if (!draining) await this.patch(loop, key, obj, { [this.drain]: DRAIN_VALUE }, signal);
      return;
    }
    const next = holders.find((m) => m !== grant) ?? holders[0]!;
    if (await this.patch(loop, key, obj, { [this.shard]: next, [this.drain]: DRAIN_VALUE }, signal)) {
      this.log.warn(
        { key, holders },
        'the shard labels of a key were changed by someone other than the operator: waiting for every member that may hold it to release it',
      );
    }
    return;
  }

  /** True when `member` is dead by our clock and by a fresh read of its Lease; else when to look again. */
  private async confirmDead(member: string, membership: RingMembership, signal: AbortSignal): Promise<true | Result> {
    const first = membership.expiry(member);
    if (!first.expired) return requeueAfter(first.remainingMs + 1);
    const confirmed = await membership.confirmExpired(member, signal);
    if (!confirmed.expired) return requeueAfter(confirmed.remainingMs + 1);
    return true;
  }

  private async write(
    loop: KindLoop,
    key: string,
    obj: KubeObject,
    to: string,
    reason: 'new' | 'drained' | 'owner-dead',
    signal: AbortSignal,
    from?: string,
  ): Promise<void> {
    if (
      !(await this.patch(
        loop,
        key,
        obj,
        { [this.shard]: to, [this.grant]: to, [this.drain]: null, [this.released]: null },
        signal,
      ))
    )
      return;
    loop.lastOwner.set(key, to);
    const started = this.drainStarted.get(key);
    if (reason === 'drained' && started !== undefined) {
      this.options.metrics.handoverSeconds.observe(
        { ring: this.options.sharding.ring },
        (this.options.clock.monotonicNow() - started) / 1000,
      );
    }
    this.drainStarted.delete(key);
    if (reason !== 'new') this.options.metrics.moves.inc({ ring: this.options.sharding.ring, reason });
    if (reason === 'owner-dead') this.log.info({ key, from, to }, 'reassigned a key of a dead member');
    else this.log.debug({ key, to, reason }, 'assigned');
  }

  /**
   * A label patch conditioned on the resourceVersion the decision was made on. False when the object
   * changed or went meanwhile: its next event enqueues the key, which is then decided again. A write
   * the server refuses for the object itself (a 4xx other than conflict, not-found and throttling) is
   * reported and thrown as `ShardAssignmentError`, so the controller retries it with backoff.
   */
  private async patch(
    loop: KindLoop,
    key: string,
    obj: KubeObject,
    labels: Record<string, string | null>,
    signal: AbortSignal,
  ): Promise<boolean> {
    const namespace = obj.metadata?.namespace;
    try {
      await this.options.client.patch(
        loop.type,
        obj.metadata!.name!,
        { metadata: { resourceVersion: obj.metadata?.resourceVersion, labels } },
        { type: 'merge', signal, ...omitUndefined({ namespace: namespace || undefined }) },
      );
      loop.unassignable.delete(key);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      if (isConflict(err)) {
        this.log.debug(
          { name: obj.metadata?.name, namespace },
          'object changed since decided: deciding again on its next event',
        );
        return false;
      }
      if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429 && !signal.aborted) {
        loop.unassignable.add(key);
        const error = new ShardAssignmentError(loop.type.kind, key, err);
        this.log.warn(
          { key, kind: loop.type.kind, status: err.status, reason: err.reason, message: err.message },
          'the API server refuses the shard labels of an object: it is reconciled by no replica until this is fixed (docs/sharding.md, "Objects that cannot be assigned")',
        );
        this.options.events?.event(
          { apiVersion: loop.type.apiVersion, kind: loop.type.kind, metadata: obj.metadata ?? {} },
          'Warning',
          UNASSIGNABLE_EVENT_REASON,
          `Cannot assign this object to a replica of ring ${this.options.sharding.ring}, so no replica reconciles it: the API server refused its shard labels: ${err.message}. Fix what the server rejects (for example make the object valid for its CRD's current schema); it is retried with backoff.`,
        );
        throw error;
      }
      throw err;
    }
  }
}
