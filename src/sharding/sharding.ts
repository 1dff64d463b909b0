/**
 * `Sharding`: what a manager built with the `sharding` option holds. It gives each sharded
 * controller the gate of its primary kind and the informers of its share, runs this replica's
 * membership Lease (under which the manager runs the sharded controllers), and provides the
 * sharder, a leader-only runnable. The protocol and why it is safe: docs/sharding.md.
 */
import type { Registry } from 'prom-client';
import type { SharedInformer } from '../cache/informer.js';
import type { Client } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { kindKey, type KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { LeaderWork } from '../leader-election/leader-elector.js';
import { MemberLease } from './member-lease.js';
import { RangeCache } from './range-cache.js';
import { RingMembership } from './ring-membership.js';
import { probeShardSelectorSupport } from './server-support.js';
import { ShardGate } from './shard-gate.js';
import { Sharder } from './sharder.js';
import { EventRecorder, RECORDER_PERMISSION } from '../controller/event-recorder.js';
import { registerShardingMetrics, type ShardingMetrics } from './sharding-metrics.js';
import {
  drainLabel,
  grantLabel,
  releasedLabel,
  resolveShardingOptions,
  shardLabel,
  type ResolvedShardingMode,
  type ResolvedSharding,
  type ShardingOptions,
  type ShardMembership,
} from './sharding-options.js';

/** An RBAC need of sharding, in the shape of the manager's `PermissionRequirement`. */
export interface ShardingPermission {
  readonly resource: ResourceType;
  readonly verbs: readonly ('get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete')[];
  readonly namespace?: string;
  readonly reason: string;
}

/** Informers of a kind from the manager's cache, narrowed by a label selector when one is given. */
export type CacheInformers = (labelSelector: string | undefined) => Promise<SharedInformer<KubeObject>[]>;

/** What the controller builder needs of sharding. */
export interface ShardingHost {
  /** The gate of a sharded primary kind (one per kind, shared by its controllers); registers the kind with the sharder. */
  gateFor(type: ResourceType): ShardGate;
  /**
   * The informers holding this replica's share of a sharded primary kind: from the manager's cache
   * with the shard label selector (label mode) or none (client mode), or sharding's own hash-range
   * informers (server mode). Called when the controller starts, once the mode is resolved.
   */
  primaryInformers(type: ResourceType, fromCache: CacheInformers): Promise<SharedInformer<KubeObject>[]>;
}

export interface ShardingDependencies {
  /** Reads and writes the primary objects (and the Leases, unless the options name a `leaseClient`). */
  readonly client: Client;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  /** The manager's cached namespaces; the sharder and the range informers watch only these. */
  readonly namespaces?: readonly string[];
  /**
   * Random source in [0, 1) for the member id's incarnation, the membership elector's jitter and the
   * sharder's watches (tests: a seeded source replays a run). @defaultValue Math.random (and a UUID
   * for the incarnation)
   */
  readonly random?: () => number;
}

export class Sharding implements ShardingHost, ShardMembership {
  readonly options: ResolvedSharding;
  private readonly gates = new Map<string, ShardGate>();
  private readonly rangeCaches = new Map<string, RangeCache>();
  private readonly metrics: ShardingMetrics;
  private readonly memberLease: MemberLease;
  private readonly leaseClient: Client;
  private readonly log: Logger;
  private resolvedMode: ResolvedShardingMode | undefined;
  /** The last sharder built (the leader runs it): the source of the unassignable-objects gauge. */
  private currentSharder: Sharder | undefined;
  private resolving: Promise<ResolvedShardingMode> | undefined;

  /** Checks the options (throws `InvalidOptionError` naming the bad one); starts nothing. */
  constructor(
    options: ShardingOptions,
    private readonly deps: ShardingDependencies,
  ) {
    this.options = resolveShardingOptions(options, deps.random);
    if (this.options.mode !== 'auto') this.resolvedMode = this.options.mode;
    this.leaseClient = options.leaseClient ?? deps.client;
    this.log = deps.logger.child({ component: 'sharding', ring: this.options.ring, member: this.options.memberId });
    this.metrics = registerShardingMetrics(deps.registry, {
      ring: this.options.ring,
      mode: () => this.resolvedMode,
      ownedByKind: () => new Map([...this.gates.values()].map((g) => [g.type.kind, g.ownedCount()])),
      unassignableByKind: () => this.currentSharder?.unassignableByKind() ?? new Map(),
    }).metrics;
    this.memberLease = new MemberLease({
      client: this.leaseClient,
      sharding: this.options,
      clock: deps.clock,
      logger: deps.logger,
      registry: deps.registry,
      ...omitUndefined({ random: deps.random }),
    });
  }

  get ring(): string {
    return this.options.ring;
  }

  /** This replica's member id: the value of the shard label on the objects it owns. */
  get memberId(): string {
    return this.options.memberId;
  }

  /** The informer mode, once resolved (`auto` is resolved when the replica joins the ring). */
  get mode(): ResolvedShardingMode | undefined {
    return this.resolvedMode;
  }

  gateFor(type: ResourceType): ShardGate {
    const id = kindKey(type);
    let gate = this.gates.get(id);
    if (!gate) {
      // Keeps a custom kind's plural and scope: RBAC and the generated admission policy need its resource name offline.
      const { plural, scope } = type as { plural?: unknown; scope?: unknown };
      gate = new ShardGate({
        type: {
          apiVersion: type.apiVersion,
          kind: type.kind,
          ...(typeof plural === 'string' ? { plural } : {}),
          ...(typeof scope === 'string' ? { scope } : {}),
        },
        memberId: this.options.memberId,
        shardLabel: shardLabel(this.options.ring),
        drainLabel: drainLabel(this.options.ring),
        grantLabel: grantLabel(this.options.ring),
        releasedLabel: releasedLabel(this.options.ring),
        client: this.deps.client,
        clock: this.deps.clock,
        logger: this.deps.logger,
        failedAckWaitMs: this.options.retryPeriodMs,
        isMember: () => this.memberLease.isHeld(),
      });
      this.gates.set(id, gate);
    }
    return gate;
  }

  async primaryInformers(type: ResourceType, fromCache: CacheInformers): Promise<SharedInformer<KubeObject>[]> {
    switch (this.resolvedMode) {
      case 'server':
        return this.rangeCacheFor(type).informers;
      case 'client':
        return fromCache(undefined);
      default:
        return fromCache(`${shardLabel(this.options.ring)}=${this.options.memberId}`);
    }
  }

  /**
   * What RBAC must allow: the ring's Leases in `namespace` (each replica creates and renews its own;
   * the sharder lists and watches all), and `patch` on each sharded primary kind (the sharder writes
   * the assignment labels, owners remove theirs when they hand a key over).
   */
  requiredPermissions(): readonly ShardingPermission[] {
    const ring = `sharding ring ${this.options.ring}`;
    return [
      {
        resource: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' },
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        namespace: this.options.namespace,
        reason: `${ring}: membership Leases (the sharder deletes long-dead members')`,
      },
      ...[...this.gates.values()].map((g): ShardingPermission => ({
        resource: g.type,
        verbs: ['patch'],
        reason: `${ring}: assignment labels on ${g.type.kind}`,
      })),
      ...(this.gates.size > 0
        ? [
            {
              ...RECORDER_PERMISSION,
              reason: `${ring}: Events on objects the sharder cannot assign`,
            } satisfies ShardingPermission,
          ]
        : []),
    ];
  }

  /** Whether this replica holds its membership Lease now. */
  isMember(): boolean {
    return this.memberLease.isHeld();
  }

  /**
   * Resolves the mode (`auto`: `server` when the API server honours `shardSelector` for every sharded
   * kind, else `label`), then holds the membership Lease until `signal` aborts, running `work` (the
   * sharded controllers) while it is held. Rejects with code `ERR_LEADERSHIP_LOST` when it could not
   * be renewed in time, after `work` stopped.
   */
  async runMember(signal: AbortSignal, work: LeaderWork): Promise<void> {
    let mode: ResolvedShardingMode;
    try {
      mode = await this.resolveMode(signal);
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    if (mode === 'client') {
      this.log.warn(
        { mode },
        'sharding filters events in the client: every replica still caches every object of the sharded kinds',
      );
    }
    this.log.info({ mode, kinds: [...this.gates.values()].map((g) => g.type.kind) }, 'sharding on');
    if (mode !== 'server') return this.memberLease.run(signal, work);
    // Server mode: the range informers and this replica's view of the ring run with the sharded work.
    return this.memberLease.run(signal, async (memberSignal) => {
      const caches = [...this.gates.values()].map((g) => this.rangeCacheFor(g.type));
      const ring = new RingMembership({
        client: this.leaseClient,
        ring: this.options.ring,
        namespace: this.options.namespace,
        leaseDurationMs: this.options.leaseDurationMs,
        clock: this.deps.clock,
        logger: this.log,
        ...omitUndefined({ random: this.deps.random }),
        onChange: (change) => {
          for (const c of caches) c.setLiveMembers(change.live);
        },
      });
      await Promise.all([ring.start(memberSignal), ...caches.map((c) => c.start(memberSignal)), work(memberSignal)]);
    });
  }

  /** The sharder, to be run as a leader-only runnable. */
  sharder(): { start(signal: AbortSignal): Promise<void> } {
    this.currentSharder = new Sharder({
      client: this.deps.client,
      leaseClient: this.leaseClient,
      sharding: this.options,
      kinds: () => [...this.gates.values()].map((g) => g.type),
      ...(this.deps.namespaces?.length ? { namespaces: this.deps.namespaces } : {}),
      clock: this.deps.clock,
      logger: this.deps.logger,
      registry: this.deps.registry,
      metrics: this.metrics,
      mode: (signal) => this.resolveMode(signal),
      ...omitUndefined({ random: this.deps.random }),
      events: new EventRecorder({
        client: this.deps.client,
        component: `sharder-${this.options.ring}`,
        clock: this.deps.clock,
        logger: this.deps.logger,
      }),
    });
    return this.currentSharder;
  }

  /** The sharded primary kinds registered so far (one gate each). */
  kinds(): readonly ResourceType[] {
    return [...this.gates.values()].map((g) => g.type);
  }

  private rangeCacheFor(type: ResourceType): RangeCache {
    const id = kindKey(type);
    let cache = this.rangeCaches.get(id);
    if (!cache) {
      cache = new RangeCache({
        client: this.deps.client,
        type,
        ...(this.deps.namespaces?.length ? { namespaces: this.deps.namespaces } : {}),
        memberId: this.options.memberId,
        shardLabel: shardLabel(this.options.ring),
        clock: this.deps.clock,
        logger: this.deps.logger,
        registry: this.deps.registry,
      });
      this.rangeCaches.set(id, cache);
      const rangeCache = cache;
      this.gateFor(type).setExistsElsewhere((key) => rangeCache.isLabelledOurs(key));
    }
    return cache;
  }

  /** The mode, probing the server once for `auto` (the sharder and the member share the answer). */
  private resolveMode(signal: AbortSignal): Promise<ResolvedShardingMode> {
    if (this.resolvedMode) return Promise.resolve(this.resolvedMode);
    this.resolving ??= this.probe(signal).then((mode) => (this.resolvedMode = mode));
    return this.resolving;
  }

  private async probe(signal: AbortSignal): Promise<ResolvedShardingMode> {
    const namespace = this.deps.namespaces?.[0];
    for (const gate of this.gates.values()) {
      try {
        const support = await probeShardSelectorSupport(this.deps.client, gate.type, {
          ...omitUndefined({ namespace: namespace || undefined }),
          signal,
        });
        this.log.info({ kind: gate.type.kind, ...support }, 'probed server-side shardSelector support');
        if (!support.honoured) return 'label';
      } catch (err) {
        if (signal.aborted) throw err;
        this.log.warn({ err, kind: gate.type.kind }, 'could not probe server-side shardSelector support: using labels');
        return 'label';
      }
    }
    return this.gates.size > 0 ? 'server' : 'label';
  }
}
