/**
 * `Sharding`: what a manager built with the `sharding` option holds. It gives each sharded
 * controller the gate of its primary kind and the label selector of its primary informer, runs this
 * replica's membership Lease (under which the manager runs the sharded controllers), and provides the
 * sharder, a leader-only runnable. The protocol and why it is safe: docs/sharding.md.
 */
import type { Registry } from 'prom-client';
import type { Client } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { LeaderWork } from '../leader-election/leader-elector.js';
import { MemberLease } from './member-lease.js';
import { ShardGate } from './shard-gate.js';
import { Sharder } from './sharder.js';
import { registerShardingMetrics, type ShardingMetrics } from './sharding-metrics.js';
import { drainLabel, resolveShardingOptions, shardLabel, type ResolvedShardingMode, type ResolvedShardingOptions, type ShardingOptions } from './sharding-options.js';

/** An RBAC need of sharding, in the shape of the manager's `PermissionRequirement`. */
export interface ShardingPermission {
  readonly resource: ResourceType;
  readonly verbs: readonly ('get' | 'list' | 'watch' | 'create' | 'update' | 'patch')[];
  readonly namespace?: string;
  readonly reason: string;
}

/** What the controller builder needs of sharding. */
export interface ShardingHost {
  /** The gate of a sharded primary kind (one per kind, shared by its controllers); registers the kind with the sharder. */
  gateFor(type: ResourceType): ShardGate;
  /** The label selector this replica's primary informers add, or undefined when they watch every object. */
  primaryLabelSelector(): string | undefined;
}

export interface ShardingDependencies {
  readonly client: Client;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  /** The manager's cached namespaces; the sharder watches only these. */
  readonly namespaces?: readonly string[];
}

export class Sharding implements ShardingHost {
  readonly options: ResolvedShardingOptions;
  readonly mode: ResolvedShardingMode;
  private readonly gates = new Map<string, ShardGate>();
  private readonly metrics: ShardingMetrics;
  private readonly memberLease: MemberLease;
  private readonly log: Logger;

  /** Checks the options (throws `InvalidOptionError` naming the bad one); starts nothing. */
  constructor(options: ShardingOptions, private readonly deps: ShardingDependencies) {
    this.options = resolveShardingOptions(options);
    this.mode = resolveMode(this.options.mode);
    this.log = deps.logger.child({ component: 'sharding', ring: this.options.ring, member: this.options.memberId });
    this.metrics = registerShardingMetrics(deps.registry, {
      ring: this.options.ring,
      mode: () => this.mode,
      ownedByKind: () => new Map([...this.gates.values()].map((g) => [g.type.kind, g.ownedCount()])),
    }).metrics;
    this.memberLease = new MemberLease({ client: deps.client, sharding: this.options, clock: deps.clock, logger: deps.logger, registry: deps.registry });
  }

  /** This replica's member id: the value of the shard label on the objects it owns. */
  get memberId(): string {
    return this.options.memberId;
  }

  gateFor(type: ResourceType): ShardGate {
    const id = `${type.apiVersion}/${type.kind}`;
    let gate = this.gates.get(id);
    if (!gate) {
      gate = new ShardGate({
        type: { apiVersion: type.apiVersion, kind: type.kind },
        memberId: this.options.memberId,
        shardLabel: shardLabel(this.options.ring),
        drainLabel: drainLabel(this.options.ring),
        client: this.deps.client,
        clock: this.deps.clock,
        logger: this.deps.logger,
        retryPeriodMs: this.options.retryPeriodMs,
      });
      this.gates.set(id, gate);
    }
    return gate;
  }

  primaryLabelSelector(): string | undefined {
    return this.mode === 'label' ? `${shardLabel(this.options.ring)}=${this.options.memberId}` : undefined;
  }

  /**
   * What RBAC must allow: the ring's Leases in `namespace` (each replica creates and renews its own;
   * the sharder lists and watches all), and `patch` on each sharded primary kind (the sharder writes
   * the assignment labels, owners remove theirs when they hand a key over).
   */
  requiredPermissions(): readonly ShardingPermission[] {
    const ring = `sharding ring ${this.options.ring}`;
    return [
      { resource: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' }, verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'], namespace: this.options.namespace, reason: `${ring}: membership Leases` },
      ...[...this.gates.values()].map((g): ShardingPermission => ({ resource: g.type, verbs: ['patch'], reason: `${ring}: assignment labels on ${g.type.kind}` })),
    ];
  }

  /** Whether this replica holds its membership Lease now. */
  isMember(): boolean {
    return this.memberLease.isHeld();
  }

  /**
   * Holds the membership Lease until `signal` aborts, running `work` (the sharded controllers) while
   * it is held. Rejects with code `ERR_LEADERSHIP_LOST` when it could not be renewed in time, after
   * `work` stopped.
   */
  runMember(signal: AbortSignal, work: LeaderWork): Promise<void> {
    if (this.mode === 'client') {
      this.log.warn({ mode: this.mode }, 'sharding filters events in the client: every replica still caches every object of the sharded kinds');
    }
    this.log.info({ mode: this.mode, kinds: [...this.gates.values()].map((g) => g.type.kind) }, 'sharding on');
    return this.memberLease.run(signal, work);
  }

  /** The sharder, to be run as a leader-only runnable. */
  sharder(): { start(signal: AbortSignal): Promise<void> } {
    return new Sharder({
      client: this.deps.client,
      sharding: this.options,
      kinds: () => [...this.gates.values()].map((g) => g.type),
      ...(this.deps.namespaces?.length ? { namespaces: this.deps.namespaces } : {}),
      clock: this.deps.clock,
      logger: this.deps.logger,
      registry: this.deps.registry,
      metrics: this.metrics,
    });
  }
}

function resolveMode(mode: ShardingOptions['mode']): ResolvedShardingMode {
  switch (mode ?? 'auto') {
    case 'server':
      throw new InvalidOptionError('sharding.mode', "'server' (shardSelector list/watch) is not available in this build yet; use 'label' or 'auto'");
    case 'client':
      return 'client';
    default:
      return 'label';
  }
}
