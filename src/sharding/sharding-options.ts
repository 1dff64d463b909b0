/** Options of a sharded manager, their defaults, the label names of the protocol, and their checks. */
import { randomUUID } from 'node:crypto';
import type { Client } from '../client/contracts.js';
import { InvalidOptionError } from '../core/errors.js';
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  defaultIdentity,
} from '../leader-election/leader-elector-options.js';
import { memberIdOf } from './member-id.js';

/**
 * How a replica's primary informers hold only its share:
 * - `label`: each replica watches the objects labelled with its member id (every Kubernetes version);
 * - `server`: each replica's informers select its hash ranges of `metadata.uid` (`shardSelector`,
 *   Kubernetes 1.36 alpha `ShardedListAndWatch`); objects are still labelled for the hand-over;
 * - `client`: every replica watches every object and drops the others' (memory does not divide);
 * - `auto`: `server` when the server is probed to honour it, else `label`.
 */
export type ShardingMode = 'auto' | 'server' | 'label' | 'client';

/** The mode a ring runs in once `auto` is resolved. */
export type ResolvedShardingMode = Exclude<ShardingMode, 'auto'>;

export interface ShardingOptions {
  /** The ring's name: membership Leases are labelled `operator-runtime.io/ring=<ring>`; a DNS label. */
  readonly ring: string;
  /** Where the membership Leases live. */
  readonly namespace: string;
  /** This replica's identity, unique in the ring. @defaultValue `hostname_<uuid>` */
  readonly identity?: string;
  /**
   * How long the sharder waits, on its own clock, after it last saw a member's Lease change before it
   * takes the member's keys away. @defaultValue {@link DEFAULT_LEASE_DURATION_MS} (leader election's)
   */
  readonly leaseDurationMs?: number;
  /**
   * A member that could not renew its Lease for this long stops reconciling (in-flight reconciles are
   * aborted). Below leaseDurationMs: the difference is the margin for that stop.
   * @defaultValue {@link DEFAULT_RENEW_DEADLINE_MS} (leader election's)
   */
  readonly renewDeadlineMs?: number;
  /** How often a member renews its Lease. @defaultValue {@link DEFAULT_RETRY_PERIOD_MS} (leader election's) */
  readonly retryPeriodMs?: number;
  /** @defaultValue 'auto' */
  readonly mode?: ShardingMode;
  /**
   * The client for the membership Leases when they live on another API server than the sharded
   * objects (a CRD-only API server serves no Leases). @defaultValue the manager's client
   */
  readonly leaseClient?: Client;
}

/** The options after defaults and checks. */
export interface ResolvedSharding {
  readonly ring: string;
  readonly namespace: string;
  readonly identity: string;
  /**
   * This incarnation's name in the ring: the value of the shard label and the Lease name's suffix,
   * label-safe, and new for every `Sharding` (process start) even with the same identity. See
   * {@link resolveShardingOptions}.
   */
  readonly memberId: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly mode: ShardingMode;
}

/** Label on every membership Lease; its value is the ring's name. */
export const RING_LABEL = 'operator-runtime.io/ring';
/** Label on membership Leases naming the member id (the identity itself may not be a valid label value). */
export const MEMBER_LABEL = 'operator-runtime.io/member';

/** The label carrying the member a primary object is assigned to: `shard.operator-runtime.io/<ring>`. */
export function shardLabel(ring: string): string {
  return `shard.operator-runtime.io/${ring}`;
}

/** The label the sharder sets to ask the owner to hand the object over: `drain.shard.operator-runtime.io/<ring>`. */
export function drainLabel(ring: string): string {
  return `drain.shard.operator-runtime.io/${ring}`;
}

/**
 * The label the sharder writes with the shard label when it grants an object to a member:
 * `grant.shard.operator-runtime.io/<ring>`. A member owns an object only while both name it, so
 * editing one label can never hand an object to someone else (docs/sharding.md).
 */
export function grantLabel(ring: string): string {
  return `grant.shard.operator-runtime.io/${ring}`;
}

/**
 * The label an owner writes when it has let go of an object (no reconcile in flight, none admitted
 * until it is granted again): `released.shard.operator-runtime.io/<ring>=<memberId>`. The sharder
 * takes an object without an owner for released only with this acknowledgement from the member it
 * last saw holding it.
 */
export function releasedLabel(ring: string): string {
  return `released.shard.operator-runtime.io/${ring}`;
}

/** Every label of the assignment protocol of `ring` (the ones only the operator may write). */
export function assignmentLabels(ring: string): readonly string[] {
  return [shardLabel(ring), grantLabel(ring), drainLabel(ring), releasedLabel(ring)];
}

/** The name of a member's Lease: `<ring>-<memberId>`. */
export function memberLeaseName(ring: string, memberId: string): string {
  return `${ring}-${memberId}`;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Room left in a 63-character label name after `drain.` (the longer prefix is in the DNS part, which allows 253). */
const MAX_RING_LENGTH = 63 - 17;

/**
 * Applies defaults and checks the options, throwing `InvalidOptionError` naming the bad one. The member
 * id hashes the identity with a random incarnation: objects labelled for a member that released its
 * Lease are handed on at once, which is safe only if no later process (a restarted pod with the same
 * name) can take that label for its own. `random` (tests) draws the incarnation instead of a UUID, so
 * a seeded simulation replays with the same member ids.
 */
export function resolveShardingOptions(options: ShardingOptions, random?: () => number): ResolvedSharding {
  if (typeof options.ring !== 'string' || !DNS_LABEL.test(options.ring) || options.ring.length > MAX_RING_LENGTH) {
    throw new InvalidOptionError(
      'sharding.ring',
      `must be a DNS label (lower-case letters, digits, '-') of at most ${MAX_RING_LENGTH} characters, got ${JSON.stringify(options.ring)}`,
    );
  }
  if (typeof options.namespace !== 'string' || !DNS_LABEL.test(options.namespace)) {
    throw new InvalidOptionError(
      'sharding.namespace',
      `must be a namespace name, got ${JSON.stringify(options.namespace)}`,
    );
  }
  if (options.identity !== undefined && (typeof options.identity !== 'string' || options.identity === '')) {
    throw new InvalidOptionError('sharding.identity', 'must be a non-empty string');
  }
  const mode = options.mode ?? 'auto';
  if (!['auto', 'server', 'label', 'client'].includes(mode)) {
    throw new InvalidOptionError(
      'sharding.mode',
      `must be 'auto', 'server', 'label' or 'client', got ${JSON.stringify(mode)}`,
    );
  }
  const leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
  const renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
  const retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
  // The member's LeaderElector checks the timings again (same rules); checking here names the sharding option.
  for (const [name, value] of [
    ['leaseDurationMs', leaseDurationMs],
    ['renewDeadlineMs', renewDeadlineMs],
    ['retryPeriodMs', retryPeriodMs],
  ] as const) {
    if (!(Number.isFinite(value) && value > 0))
      throw new InvalidOptionError(
        `sharding.${name}`,
        `must be a finite number of milliseconds > 0, got ${String(value)}`,
      );
  }
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new InvalidOptionError(
      'sharding.renewDeadlineMs',
      `must be less than leaseDurationMs (${leaseDurationMs}), got ${renewDeadlineMs}`,
    );
  }
  const identity = options.identity ?? defaultIdentity();
  return {
    ring: options.ring,
    namespace: options.namespace,
    identity,
    memberId: memberIdOf(`${identity}#${random ? incarnationFrom(random) : randomUUID()}`),
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    mode,
  };
}

/** 128 bits from `random` as hex: an incarnation for a seeded run. */
function incarnationFrom(random: () => number): string {
  let hex = '';
  for (let i = 0; i < 4; i++)
    hex += Math.floor(random() * 2 ** 32)
      .toString(16)
      .padStart(8, '0');
  return hex;
}

/** What a sharded manager tells about its ring membership (`manager.sharding`). */
export interface ShardMembership {
  /** The ring's name (`ShardingOptions.ring`). */
  readonly ring: string;
  /** This replica's member id: the value of the shard label on the objects it owns. */
  readonly memberId: string;
  /** The informer mode, once resolved (`auto` is resolved when the replica joins the ring). */
  readonly mode: ResolvedShardingMode | undefined;
  /** Whether this replica holds its membership Lease now. */
  isMember(): boolean;
  /** The sharded primary kinds (one per controller with `.for(kind)`), known once the controllers are built. */
  kinds(): readonly { readonly apiVersion: string; readonly kind: string }[];
}
