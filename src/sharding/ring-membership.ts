/**
 * The sharder's view of a ring: which members are live, judged as client-go's leader election
 * judges a Lease. A member is live while its Lease names a holder and has changed within
 * leaseDuration on the OBSERVER's monotonic clock (the renewTime inside is the member's clock and is
 * never compared with ours). A released Lease (empty holder: the member stopped its work first) is
 * dead at once; a Lease never seen, or deleted, is dead only leaseDuration after we last saw it
 * change (or first looked for it).
 */
import { clientListerWatcher } from '../cache/client-lister-watcher.js';
import { SharedInformer } from '../cache/informer.js';
import type { ListerWatcher } from '../cache/lister-watcher.js';
import { deletedObject, type Tombstone } from '../cache/tombstone.js';
import { ignoreNotFound } from '../client/api-error.js';
import type { Getter, ObjectWatcher, PageLister } from '../client/contracts.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { LEASE_TYPE, holderOf, resourceVersionOf, type Lease } from '../leader-election/lease-record.js';
import { MEMBER_LABEL, RING_LABEL, memberLeaseName } from './sharding-options.js';

export interface RingMembershipOptions {
  readonly client: Getter & PageLister & ObjectWatcher;
  readonly ring: string;
  readonly namespace: string;
  readonly leaseDurationMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Random source in [0, 1) for the Lease watch's timeout and backoff (tests). @defaultValue Math.random */
  readonly random?: () => number;
  /** Called when the live set changes, with the new set (sorted) and who joined and left. */
  readonly onChange?: (change: MembershipChange) => void;
}

export interface MembershipChange {
  readonly live: readonly string[];
  readonly joined: readonly string[];
  readonly left: readonly string[];
}

/** A membership Lease nobody has renewed for long: the sharder deletes it. */
export interface StaleLease {
  readonly memberId: string;
  readonly name: string;
  readonly resourceVersion: string;
}

interface Observation {
  /** The Lease's name, once seen. */
  name: string;
  /** resourceVersion of the Lease when last seen; '' when it does not exist. */
  rv: string;
  /** Our monotonic time when `rv` last changed (or when we first looked for a missing Lease). */
  atMs: number;
  holder: string;
  exists: boolean;
  /** The holder's promise in seconds, or ours, whichever is longer. */
  durationMs: number;
}

export class RingMembership {
  private readonly observations = new Map<string, Observation>();
  private readonly informer: SharedInformer<Lease>;
  private live: readonly string[] = [];
  private expiryTimer: TimerHandle | undefined;

  constructor(private readonly options: RingMembershipOptions) {
    const spec = {
      apiVersion: LEASE_TYPE.apiVersion,
      kind: LEASE_TYPE.kind,
      namespace: options.namespace,
      labelSelector: `${RING_LABEL}=${options.ring}`,
    };
    // The client returns Lease objects for this kind.
    this.informer = new SharedInformer<Lease>(clientListerWatcher(options.client, spec) as ListerWatcher<Lease>, {
      clock: options.clock,
      logger: options.logger,
      name: `ring ${options.ring} leases`,
      ...(options.random ? { random: options.random } : {}),
    });
    this.informer.addEventHandler(
      {
        add: (lease) => this.observe(lease),
        update: (_old, lease) => this.observe(lease),
        delete: (lease) => this.forget(lease),
      },
      { name: 'ring-membership' },
    );
  }

  /** Watches the ring's Leases until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    try {
      await this.informer.start(signal);
    } finally {
      this.expiryTimer?.cancel();
    }
  }

  waitForSync(signal: AbortSignal): Promise<void> {
    return this.informer.waitForSync(signal);
  }

  /** Live member ids, sorted. */
  liveMembers(): readonly string[] {
    return this.live;
  }

  /** The identity a member's Lease names (for logs). */
  identityOf(memberId: string): string | undefined {
    return this.observations.get(memberId)?.holder || undefined;
  }

  /** Whether the member counts as dead now; how long until it would, if not. */
  expiry(memberId: string): { readonly expired: boolean; readonly remainingMs: number } {
    const now = this.options.clock.monotonicNow();
    let o = this.observations.get(memberId);
    if (!o) {
      // A member named by a label whose Lease we never saw: start its clock now.
      o = { name: '', rv: '', atMs: now, holder: '', exists: false, durationMs: this.options.leaseDurationMs };
      this.observations.set(memberId, o);
    }
    if (o.exists && o.holder === '') return { expired: true, remainingMs: 0 };
    const remainingMs = o.atMs + o.durationMs - now;
    return { expired: remainingMs <= 0, remainingMs: Math.max(0, remainingMs) };
  }

  /**
   * Re-reads the member's Lease from the API server (a quorum read) before its keys are taken away,
   * so a watch that lags behind the member's renewals never makes a live member look dead.
   */
  async confirmExpired(
    memberId: string,
    signal: AbortSignal,
  ): Promise<{ readonly expired: boolean; readonly remainingMs: number }> {
    const lease = await ignoreNotFound(
      this.options.client.get<Lease>(LEASE_TYPE, memberLeaseName(this.options.ring, memberId), {
        namespace: this.options.namespace,
        signal,
      }),
    );
    if (lease) this.observe(lease);
    else {
      const o = this.observations.get(memberId);
      if (o) o.exists = false;
    }
    return this.expiry(memberId);
  }

  /**
   * Leases of members that are dead and have not changed for `unchangedForMs` on our clock: restarted
   * pods get new identities, so without deleting these the ring's Leases would only ever grow.
   */
  staleLeases(unchangedForMs: number): StaleLease[] {
    const now = this.options.clock.monotonicNow();
    const out: StaleLease[] = [];
    for (const [memberId, o] of this.observations) {
      if (!o.exists || !o.name || now - o.atMs < unchangedForMs || !this.expiry(memberId).expired) continue;
      out.push({ memberId, name: o.name, resourceVersion: o.rv });
    }
    return out;
  }

  private memberOf(lease: Lease): string | undefined {
    return lease.metadata?.labels?.[MEMBER_LABEL];
  }

  private observe(lease: Lease): void {
    const memberId = this.memberOf(lease);
    if (!memberId) return;
    const rv = resourceVersionOf(lease);
    const durationMs = Math.max(this.options.leaseDurationMs, (lease.spec?.leaseDurationSeconds ?? 0) * 1000);
    const o = this.observations.get(memberId);
    if (!o || o.rv !== rv) {
      this.observations.set(memberId, {
        name: lease.metadata?.name ?? '',
        rv,
        atMs: this.options.clock.monotonicNow(),
        holder: holderOf(lease),
        exists: true,
        durationMs,
      });
    } else {
      o.exists = true;
    }
    this.recompute();
  }

  private forget(deleted: Lease | Tombstone<Lease>): void {
    const memberId = this.memberOf(deletedObject(deleted));
    const o = memberId ? this.observations.get(memberId) : undefined;
    // Keep when it last changed: deleting a Lease renews nobody, and its holder may still work until then.
    if (o) o.exists = false;
    this.recompute();
  }

  /** Recomputes the live set, reports a change, and wakes up again at the next expiry. */
  private recompute(): void {
    this.expiryTimer?.cancel();
    this.expiryTimer = undefined;
    const live: string[] = [];
    let nextExpiryMs = Infinity;
    for (const [memberId, o] of this.observations) {
      if (!o.exists) continue;
      const e = this.expiry(memberId);
      if (e.expired) continue;
      live.push(memberId);
      nextExpiryMs = Math.min(nextExpiryMs, e.remainingMs);
    }
    live.sort();
    if (Number.isFinite(nextExpiryMs))
      this.expiryTimer = this.options.clock.setTimer(nextExpiryMs + 1, () => this.recompute());
    const before = new Set(this.live);
    const after = new Set(live);
    const joined = live.filter((m) => !before.has(m));
    const left = this.live.filter((m) => !after.has(m));
    if (joined.length === 0 && left.length === 0) return;
    this.live = live;
    this.options.logger.info(
      { live: live.length, joined: joined.map((m) => this.label(m)), left: left.map((m) => this.label(m)) },
      'ring membership changed',
    );
    this.options.onChange?.({ live, joined, left });
  }

  private label(memberId: string): string {
    const identity = this.identityOf(memberId);
    return identity ? `${memberId} (${identity})` : memberId;
  }
}
