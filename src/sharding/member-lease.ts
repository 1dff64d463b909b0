/**
 * A replica's membership in a ring: its own Lease `<ring>-<memberId>`, labelled with the ring and the
 * member id, held with a `LeaderElector` (the replica is the only candidate for it). The elector
 * brings the timing and fencing of leader election unchanged: the Lease is renewed every
 * retryPeriod, and the sharded work (handed a signal) is told to stop once renewDeadline has passed
 * without a successful renew, before any observer can count the Lease as expired. On shutdown the
 * work stops first, then the Lease is released, which tells the sharder at once that the keys are free.
 */
import { isAlreadyExists } from '../client/api-error.js';
import type { Creator, Getter, Patcher, Updater } from '../client/contracts.js';
import { sleep } from '../core/abort.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { LeaderElector, type LeaderWork } from '../leader-election/leader-elector.js';
import { LEASE_TYPE, leaseDurationSeconds, type Lease } from '../leader-election/lease-record.js';
import type { Registry } from 'prom-client';
import { MEMBER_LABEL, RING_LABEL, memberLeaseName, type ResolvedSharding } from './sharding-options.js';

export interface MemberLeaseOptions {
  readonly client: Getter & Creator & Updater & Patcher;
  readonly sharding: ResolvedSharding;
  readonly clock: Clock;
  readonly logger: Logger;
  /** For the elector's `leader_election_master_status{name="<ring>-<memberId>"}`. */
  readonly registry?: Registry;
  /** Random source in [0, 1) for the elector's jitter (tests). @defaultValue Math.random */
  readonly random?: () => number;
}

export class MemberLease {
  readonly name: string;
  private readonly elector: LeaderElector;
  private readonly log: Logger;

  constructor(private readonly options: MemberLeaseOptions) {
    const s = options.sharding;
    this.name = memberLeaseName(s.ring, s.memberId);
    this.log = options.logger.child({ component: 'sharding', ring: s.ring, member: s.memberId });
    this.elector = new LeaderElector({
      client: options.client,
      name: this.name,
      namespace: s.namespace,
      identity: s.identity,
      leaseDurationMs: s.leaseDurationMs,
      renewDeadlineMs: s.renewDeadlineMs,
      retryPeriodMs: s.retryPeriodMs,
      clock: options.clock,
      logger: options.logger,
      ...omitUndefined({ registry: options.registry, random: options.random }),
    });
  }

  /** Whether the membership Lease is held now (false once the renew deadline passed). */
  isHeld(): boolean {
    return this.elector.isLeader();
  }

  /**
   * Creates the labelled Lease if needed, then holds it until `signal` aborts, running `work` while
   * it is held. Rejects with `LeadershipLostError` (code `ERR_LEADERSHIP_LOST`) when the Lease could
   * not be renewed in time, after `work` stopped.
   */
  async run(signal: AbortSignal, work: LeaderWork): Promise<void> {
    if (!(await this.ensureLease(signal))) return;
    this.log.info({ lease: this.name, identity: this.options.sharding.identity }, 'joining the ring');
    await this.elector.run(signal, work);
  }

  /** The elector would create an unlabelled Lease: create it with our labels first (no holder yet). */
  private async ensureLease(signal: AbortSignal): Promise<boolean> {
    const s = this.options.sharding;
    const labels = { [RING_LABEL]: s.ring, [MEMBER_LABEL]: s.memberId };
    for (;;) {
      if (signal.aborted) return false;
      try {
        const lease: Lease = {
          ...LEASE_TYPE,
          metadata: { name: this.name, namespace: s.namespace, labels },
          spec: { leaseDurationSeconds: leaseDurationSeconds(s.leaseDurationMs) },
        };
        await this.options.client.create(lease, { signal });
        return true;
      } catch (createErr) {
        let err = createErr;
        if (isAlreadyExists(createErr)) {
          // Ours from an earlier run with the same identity: make sure the sharder can find it.
          try {
            await this.options.client.patch(
              LEASE_TYPE,
              this.name,
              { metadata: { labels } },
              { type: 'merge', namespace: s.namespace, signal },
            );
            return true;
          } catch (patchErr) {
            err = patchErr;
          }
        }
        if (!signal.aborted) this.log.warn({ err }, 'could not create the membership lease: retrying');
        try {
          await sleep(this.options.clock, s.retryPeriodMs, signal);
        } catch {
          return false;
        }
      }
    }
  }
}
