/**
 * `LeaderElector`: client-go's Lease-based leader election, with fencing. One candidate at a time
 * holds the Lease; the holder renews it every retryPeriod and stops its leader-only work (aborts the
 * signal it handed out) as soon as renewDeadline has passed since the start of its last successful
 * renew. Candidates take over only once the record has not changed for leaseDuration on their own
 * monotonic clock, so the gap leaseDuration - renewDeadline is the margin in which the old leader's
 * work stops before anyone else can start. Every write carries the resourceVersion it read.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import { linkedAbortController, sleep } from '../core/abort.js';
import { AbortedError, AlreadyStartedError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { silentLogger } from '../core/logger.js';
import { ignoreNotFound, isAlreadyExists, isConflict, isNotFound } from '../client/api-error.js';
import { registerLeaderElectionMetrics } from './leader-election-metrics.js';
import {
  JITTER_FACTOR,
  checkIdentityOptions,
  defaultIdentity,
  resolveTimings,
  type LeaderElectorOptions,
  type LeaderElectorTimings,
  type LeadershipEndReason,
  type LeaseClient,
} from './leader-elector-options.js';
import { LeadershipLostError } from './leadership-lost-error.js';
import type { PermissionRequirement } from '../rbac/permission.js';
import {
  LEASE_TYPE,
  acquiredLease,
  holderOf,
  newLease,
  releasedLease,
  renewedLease,
  resourceVersionOf,
  type Lease,
} from './lease-record.js';

/** Leader-only work: runs under `leaderSignal`, which aborts when leadership ends. */
export type LeaderWork = (leaderSignal: AbortSignal) => void | Promise<void>;

/** One term of leadership. */
interface Term {
  /** Handed to leader-only work; aborted when it must stop. */
  readonly leader: AbortController;
  /** Aborted once the Lease can no longer be counted as ours (deadline passed, or lost). */
  readonly held: AbortController;
  /** Monotonic time until which we may lead: start of the last successful write + renewDeadline. */
  deadlineMs: number;
  deadlineTimer: TimerHandle | undefined;
  /** The Lease as we last wrote it; the fast path renews it with its resourceVersion. */
  lease: Lease;
  reason: LeadershipEndReason | undefined;
  work: Promise<void>;
}

type Attempt =
  | { readonly kind: 'acquired'; readonly lease: Lease; readonly writeStartMs: number }
  | { readonly kind: 'retry'; readonly delayMs: number };

export class LeaderElector {
  readonly identity: string;
  readonly name: string;
  readonly namespace: string;
  readonly timings: LeaderElectorTimings;
  private readonly options: LeaderElectorOptions;
  private readonly client: LeaseClient;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: () => number;
  /** The last record seen, and when (our monotonic clock) its resourceVersion last changed. */
  private observed: { rv: string; atMs: number; lease: Lease } | undefined;
  private reportedLeader = '';
  /** resourceVersion of the last write of ours that we saw succeed. */
  private lastWrittenRv: string | undefined;
  private term: Term | undefined;
  private started = false;
  private slowPathRenews = 0;

  /** Validates the options (throws `InvalidOptionError` naming the bad one); starts nothing. */
  constructor(options: LeaderElectorOptions) {
    checkIdentityOptions(options);
    this.timings = resolveTimings(options);
    this.options = options;
    this.client = options.client;
    this.name = options.name;
    this.namespace = options.namespace;
    this.identity = options.identity ?? defaultIdentity();
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.log = (options.logger ?? silentLogger).child({
      component: 'leader-election',
      lease: `${this.namespace}/${this.name}`,
      identity: this.identity,
    });
  }

  /**
   * Whether this candidate leads now. False as soon as the renew deadline has passed, even if the
   * timer that aborts the leader signal has not run yet (a blocked event loop).
   */
  isLeader(): boolean {
    const t = this.term;
    return t !== undefined && !t.leader.signal.aborted && this.clock.monotonicNow() < t.deadlineMs;
  }

  /**
   * RBAC for its Lease, in its namespace only: `create` (no name can be given for a create), and
   * `get`/`update` of this Lease by name — all the election calls.
   */
  requiredPermissions(): readonly PermissionRequirement[] {
    const reason = `leader election: Lease ${this.namespace}/${this.name}`;
    return [
      { resource: LEASE_TYPE, verbs: ['create'], namespace: this.namespace, reason },
      { resource: LEASE_TYPE, verbs: ['get', 'update'], namespace: this.namespace, resourceNames: [this.name], reason },
    ];
  }

  /** The holder named by the last Lease record seen; undefined when none was seen or nobody holds it. */
  getLeader(): string | undefined {
    return holderOf(this.observed?.lease) || undefined;
  }

  /**
   * Runs the election until `signal` aborts. Resolves after a shutdown (having released the Lease if
   * it was leading and `releaseOnCancel`). When leadership is lost (renew deadline missed, Lease
   * taken or deleted) it rejects with `LeadershipLostError` once leader-only work has stopped or
   * `workStopTimeoutMs` passed, so the process can exit non-zero — or, with `reenterCandidacy`,
   * goes back to being a candidate. Never rejects for API errors: it keeps retrying.
   */
  start(signal: AbortSignal): Promise<void> {
    return this.run(signal);
  }

  /**
   * `start(signal)` with one more leader-only hook, called after `options.onStartedLeading` on every
   * term (the shape of the manager's `LeaderElection` seam).
   */
  async run(signal: AbortSignal, onStartedLeading?: LeaderWork): Promise<void> {
    if (this.started) throw new AlreadyStartedError('this LeaderElector was already started');
    this.started = true;
    // Left attached after start() ends, so the series reads 0 rather than vanishing.
    if (this.options.registry) {
      registerLeaderElectionMetrics(this.options.registry, this.name, {
        isLeader: () => this.isLeader(),
        slowPathRenews: () => this.slowPathRenews,
      });
    }

    for (;;) {
      const acquired = await this.acquire(signal);
      if (!acquired) return;
      const reason = await this.lead(acquired, signal, onStartedLeading);
      if (reason === 'shutdown') return;
      if (!this.options.reenterCandidacy) throw new LeadershipLostError(this.leaseKey, reason);
      if (signal.aborted) return;
      this.log.info({ reason }, 're-entering candidacy');
    }
  }

  private get leaseKey(): string {
    return `${this.namespace}/${this.name}`;
  }

  // ---- candidate -------------------------------------------------------------------------------

  /** Tries until it holds the Lease (returns it) or `signal` aborts (returns undefined). */
  private async acquire(signal: AbortSignal): Promise<{ lease: Lease; writeStartMs: number } | undefined> {
    this.log.info({}, 'attempting to acquire the leader lease');
    let delayMs = 0;
    let rereadAtOnce = true;
    for (;;) {
      if (delayMs > 0) {
        try {
          await sleep(this.clock, delayMs, signal);
        } catch {
          return undefined;
        }
      }
      if (signal.aborted) return undefined;
      const attempt = await this.tryAcquire(signal);
      if (attempt.kind === 'acquired') return attempt;
      // A conflict is re-read at once, but not twice in a row: never a hot loop.
      delayMs = attempt.delayMs === 0 && !rereadAtOnce ? this.jitteredRetryMs() : attempt.delayMs;
      rereadAtOnce = delayMs !== 0;
    }
  }

  private async tryAcquire(signal: AbortSignal): Promise<Attempt> {
    const bounded = this.boundedSignal([signal], this.timings.renewDeadlineMs);
    try {
      const current = await ignoreNotFound(
        this.client.get<Lease>(LEASE_TYPE, this.name, { namespace: this.namespace, signal: bounded.signal }),
      );
      if (!current) {
        const writeStartMs = this.clock.monotonicNow();
        const fresh = newLease({
          name: this.name,
          namespace: this.namespace,
          identity: this.identity,
          leaseDurationMs: this.timings.leaseDurationMs,
          nowMs: this.clock.now(),
        });
        const created = await this.client.create(fresh, { signal: bounded.signal });
        this.observeOwnWrite(created);
        return { kind: 'acquired', lease: created, writeStartMs };
      }
      this.observe(current);
      const holder = holderOf(current);
      // An empty holder was released: take it at once. So is a record we wrote ourselves (a term that
      // ended with its work stopped). Our name on a record we did not write is another process with
      // our identity (a restarted pod whose predecessor may still run): wait like for anyone else.
      const ours = holder === this.identity && resourceVersionOf(current) === this.lastWrittenRv;
      if (holder !== '' && !ours) {
        const remainingMs = this.observed!.atMs + this.leaseDurationOf(current) - this.clock.monotonicNow();
        // Wake up right when it expires rather than up to a retry period later.
        if (remainingMs > 0) return { kind: 'retry', delayMs: Math.min(this.jitteredRetryMs(), remainingMs) };
        this.log.info(
          { holder, observedUnchangedMs: this.clock.monotonicNow() - this.observed!.atMs },
          'lease expired: taking it over',
        );
      }
      const writeStartMs = this.clock.monotonicNow();
      const updated = await this.client.update(
        acquiredLease(current, this.identity, this.timings.leaseDurationMs, this.clock.now()),
        { signal: bounded.signal },
      );
      this.observeOwnWrite(updated);
      return { kind: 'acquired', lease: updated, writeStartMs };
    } catch (err) {
      if (isConflict(err) || isAlreadyExists(err)) {
        // Someone else wrote between our read and our write: read again, never overwrite.
        this.log.debug({ err }, 'lease changed while acquiring: re-reading');
        return { kind: 'retry', delayMs: 0 };
      }
      if (!signal.aborted) this.log.warn({ err }, 'could not read or acquire the leader lease');
      return { kind: 'retry', delayMs: this.jitteredRetryMs() };
    } finally {
      bounded.done();
    }
  }

  /**
   * Notes a record. Only a change of resourceVersion restarts the candidate's lease clock: the
   * timestamps inside the record come from the holder's clock and are never compared with ours.
   */
  private observe(lease: Lease): void {
    const rv = resourceVersionOf(lease);
    if (this.observed === undefined || this.observed.rv !== rv)
      this.observed = { rv, atMs: this.clock.monotonicNow(), lease };
    else this.observed.lease = lease;
    const holder = holderOf(lease);
    if (holder !== '' && holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      this.log.info(
        { leader: holder },
        holder === this.identity ? 'this candidate is the new leader' : 'new leader observed',
      );
      this.callHook('onNewLeader', () => this.options.onNewLeader?.(holder));
    }
  }

  private observeOwnWrite(lease: Lease): void {
    this.lastWrittenRv = resourceVersionOf(lease);
    this.observe(lease);
  }

  /** The holder's own promise or ours, whichever is longer: never take over earlier than either expects. */
  private leaseDurationOf(lease: Lease): number {
    return Math.max(this.timings.leaseDurationMs, (lease.spec?.leaseDurationSeconds ?? 0) * 1000);
  }

  private jitteredRetryMs(): number {
    return this.timings.retryPeriodMs * (1 + (JITTER_FACTOR - 1) * this.random());
  }

  // ---- leader ----------------------------------------------------------------------------------

  private async lead(
    acquired: { lease: Lease; writeStartMs: number },
    signal: AbortSignal,
    extraWork: LeaderWork | undefined,
  ): Promise<LeadershipEndReason> {
    const term: Term = {
      leader: new AbortController(),
      held: new AbortController(),
      deadlineMs: acquired.writeStartMs + this.timings.renewDeadlineMs,
      deadlineTimer: undefined,
      lease: acquired.lease,
      reason: undefined,
      work: Promise.resolve(),
    };
    this.term = term;
    this.armDeadline(term);
    this.log.info({ leaseTransitions: acquired.lease.spec?.leaseTransitions ?? 0 }, 'became leader');
    term.work = this.startWork(term.leader.signal, extraWork);

    const untilShutdown = linkedAbortController(signal, term.held.signal);
    await this.renewLoop(term, untilShutdown.controller.signal);
    untilShutdown.dispose();

    if (term.held.signal.aborted) {
      // Lost: the leader signal is already aborted. Leave only once the work has stopped.
      const stopped = await this.settle(term.work, this.timings.workStopTimeoutMs, undefined);
      if (!stopped) {
        this.log.error(
          { workStopTimeoutMs: this.timings.workStopTimeoutMs },
          'leader-only work has not stopped after leadership was lost',
        );
        // Leading again while the old term's work still runs would run it twice.
        if (this.options.reenterCandidacy) await this.settle(term.work, Infinity, signal);
      }
      this.closeTerm(term);
      return term.reason ?? 'lease-lost';
    }

    // Shutdown while holding the Lease: stop the work, keep renewing until it has stopped, then release.
    this.endTerm(term, 'shutdown');
    const stopRenewing = new AbortController();
    const whileStopping = linkedAbortController(stopRenewing.signal, term.held.signal);
    const renewing = this.renewLoop(term, whileStopping.controller.signal);
    const stopped = await this.settle(term.work, this.timings.workStopTimeoutMs, term.held.signal);
    stopRenewing.abort();
    await renewing;
    whileStopping.dispose();
    const stillHeld = !term.held.signal.aborted;
    this.closeTerm(term);
    if (!stopped) {
      this.log.warn(
        { workStopTimeoutMs: this.timings.workStopTimeoutMs },
        'leader-only work did not stop in time: not releasing the lease, it expires instead',
      );
    } else if (!stillHeld) {
      this.log.warn({}, 'lease could not be renewed while leader-only work stopped: nothing to release');
    } else if (this.options.releaseOnCancel ?? true) {
      await this.release(term);
    }
    return 'shutdown';
  }

  private startWork(leaderSignal: AbortSignal, extraWork: LeaderWork | undefined): Promise<void> {
    const hooks = [this.options.onStartedLeading, extraWork].filter((h): h is LeaderWork => h !== undefined);
    return Promise.all(
      hooks.map(async (hook) => {
        try {
          await hook(leaderSignal);
        } catch (err) {
          // Work that ends by throwing once told to stop is the normal case.
          if (!leaderSignal.aborted) this.log.error({ err }, 'onStartedLeading failed');
        }
      }),
    ).then(() => undefined);
  }

  private async renewLoop(term: Term, stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      try {
        await sleep(this.clock, this.timings.retryPeriodMs, stop);
      } catch {
        return;
      }
      await this.renew(term, stop);
    }
  }

  private async renew(term: Term, stop: AbortSignal): Promise<void> {
    // Bounded by the deadline: a hung API server cannot make a renew outlive it.
    const bounded = this.boundedSignal([stop, term.held.signal], term.deadlineMs - this.clock.monotonicNow());
    try {
      let writeStartMs = this.clock.monotonicNow();
      let lease: Lease;
      try {
        lease = await this.client.update(
          renewedLease(term.lease, this.identity, this.timings.leaseDurationMs, this.clock.now()),
          { signal: bounded.signal },
        );
      } catch (err) {
        if (!isConflict(err)) throw err;
        // Slow path: our copy is stale (another writer, or the answer to our last write was lost).
        this.slowPathRenews++;
        const current = await this.client.get<Lease>(LEASE_TYPE, this.name, {
          namespace: this.namespace,
          signal: bounded.signal,
        });
        this.observe(current);
        const holder = holderOf(current);
        if (holder !== this.identity) {
          this.loseTerm(term, 'lease-lost', { holder });
          return;
        }
        writeStartMs = this.clock.monotonicNow();
        lease = await this.client.update(
          renewedLease(current, this.identity, this.timings.leaseDurationMs, this.clock.now()),
          { signal: bounded.signal },
        );
      }
      if (term.held.signal.aborted) return;
      if (this.clock.monotonicNow() >= term.deadlineMs) {
        // The deadline timer is late (a blocked event loop); the deadline still rules.
        this.loseTerm(term, 'renew-deadline-exceeded');
        return;
      }
      this.observeOwnWrite(lease);
      term.lease = lease;
      term.deadlineMs = writeStartMs + this.timings.renewDeadlineMs;
      this.armDeadline(term);
      this.log.debug({}, 'renewed the leader lease');
    } catch (err) {
      if (term.held.signal.aborted || stop.aborted) return;
      if (isNotFound(err)) {
        this.loseTerm(term, 'lease-lost', { holder: '' });
        return;
      }
      this.log.warn(
        { err, remainingMs: Math.round(term.deadlineMs - this.clock.monotonicNow()) },
        'failed to renew the leader lease',
      );
    } finally {
      bounded.done();
    }
  }

  private armDeadline(term: Term): void {
    term.deadlineTimer?.cancel();
    term.deadlineTimer = this.clock.setTimer(term.deadlineMs - this.clock.monotonicNow(), () =>
      this.loseTerm(term, 'renew-deadline-exceeded'),
    );
  }

  /** The Lease is no longer ours to count on: fence at once. */
  private loseTerm(
    term: Term,
    reason: Exclude<LeadershipEndReason, 'shutdown'>,
    details: Record<string, unknown> = {},
  ): void {
    if (term.held.signal.aborted) return;
    term.deadlineTimer?.cancel();
    term.held.abort(new LeadershipLostError(this.leaseKey, reason));
    this.endTerm(term, reason, details);
  }

  /** Tells leader-only work to stop (first), then reports it; once per term. */
  private endTerm(term: Term, reason: LeadershipEndReason, details: Record<string, unknown> = {}): void {
    if (term.leader.signal.aborted) return;
    term.reason = reason;
    term.leader.abort(
      reason === 'shutdown'
        ? new AbortedError('leader election stopped')
        : new LeadershipLostError(this.leaseKey, reason),
    );
    if (reason === 'shutdown') this.log.info({ reason }, 'stopped leading');
    else this.log.error({ reason, ...details }, 'lost leadership: leader-only work told to stop');
    this.callHook('onStoppedLeading', () => this.options.onStoppedLeading?.(reason));
  }

  private closeTerm(term: Term): void {
    term.deadlineTimer?.cancel();
    if (this.term === term) this.term = undefined;
  }

  /** Gives the Lease up with the resourceVersion we wrote; re-reads once on a conflict. Never throws. */
  private async release(term: Term): Promise<void> {
    const bounded = this.boundedSignal([], this.timings.renewDeadlineMs);
    try {
      let current = term.lease;
      for (let attempt = 0; ; attempt++) {
        try {
          const released = await this.client.update(releasedLease(current, this.clock.now()), {
            signal: bounded.signal,
          });
          this.observeOwnWrite(released);
          this.log.info({}, 'released the leader lease');
          return;
        } catch (err) {
          if (!isConflict(err) || attempt > 0) throw err;
          const fresh = await this.client.get<Lease>(LEASE_TYPE, this.name, {
            namespace: this.namespace,
            signal: bounded.signal,
          });
          this.observe(fresh);
          if (holderOf(fresh) !== this.identity) {
            this.log.info({ holder: holderOf(fresh) }, 'lease no longer ours: nothing to release');
            return;
          }
          current = fresh;
        }
      }
    } catch (err) {
      this.log.warn({ err }, 'could not release the leader lease: it expires instead');
    } finally {
      bounded.done();
    }
  }

  // ---- helpers ---------------------------------------------------------------------------------

  /** A signal that aborts with its parents or after `timeoutMs` on our clock. */
  private boundedSignal(parents: AbortSignal[], timeoutMs: number): { signal: AbortSignal; done: () => void } {
    const linked = linkedAbortController(...parents);
    const timer = this.clock.setTimer(Math.max(0, timeoutMs), () =>
      linked.controller.abort(new AbortedError(`Lease request timed out after ${Math.round(timeoutMs)} ms`)),
    );
    return {
      signal: linked.controller.signal,
      done: () => {
        timer.cancel();
        linked.dispose();
      },
    };
  }

  /** True if `work` settles within `timeoutMs`; false on timeout or when `abort` aborts. */
  private settle(work: Promise<void>, timeoutMs: number, abort: AbortSignal | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let timer: TimerHandle | undefined;
      const finish = (settled: boolean): void => {
        timer?.cancel();
        abort?.removeEventListener('abort', onAbort);
        resolve(settled);
      };
      const onAbort = (): void => finish(false);
      if (abort?.aborted) return finish(false);
      abort?.addEventListener('abort', onAbort, { once: true });
      if (Number.isFinite(timeoutMs)) timer = this.clock.setTimer(timeoutMs, () => finish(false));
      work.then(
        () => finish(true),
        () => finish(true),
      );
    });
  }

  private callHook(hook: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err, hook }, 'leader election hook threw');
    }
  }
}
