/** Options of `LeaderElector`, their defaults, and the checks client-go makes on them at construction. */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Creator, Getter, Updater } from '../client/contracts.js';

/** What the elector needs of a client: `KubeClient`, or any `Client` (the fake one in tests). */
export type LeaseClient = Getter & Creator & Updater;

/** Why a term of leadership ended. */
export type LeadershipEndReason =
  /** The `start()` signal aborted while leading. */
  | 'shutdown'
  /** No renew succeeded within renewDeadlineMs of the last successful one. */
  | 'renew-deadline-exceeded'
  /** The Lease names another holder, or was deleted. */
  | 'lease-lost';

/** @defaultValue for `leaseDurationMs` (client-go's and controller-runtime's). */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
/** @defaultValue for `renewDeadlineMs`. */
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
/** @defaultValue for `retryPeriodMs`. */
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
/**
 * Candidates wait retryPeriodMs × [1, JITTER_FACTOR) between attempts, so replicas started together
 * spread out; renewDeadlineMs must leave room for one such wait (client-go's check uses the same 1.2).
 */
export const JITTER_FACTOR = 1.2;

export interface LeaderElectorOptions {
  /** Reads and writes the Lease. */
  readonly client: LeaseClient;
  /** Name of the Lease (also the `name` label of the metrics). */
  readonly name: string;
  readonly namespace: string;
  /** This candidate's identity in `holderIdentity`; unique per replica. @defaultValue `${hostname}_${uuid}` */
  readonly identity?: string;
  /**
   * How long candidates wait, measured on their own clock from when they last saw the Lease record
   * change, before taking it over. @defaultValue DEFAULT_LEASE_DURATION_MS
   */
  readonly leaseDurationMs?: number;
  /**
   * How long the leader keeps leading without a successful renew, measured from the start of the last
   * one that succeeded. Must be below leaseDurationMs: the difference is the margin in which
   * leader-only work stops before anyone else can acquire. @defaultValue DEFAULT_RENEW_DEADLINE_MS
   */
  readonly renewDeadlineMs?: number;
  /** Interval between renews, and (jittered) between a candidate's attempts. @defaultValue DEFAULT_RETRY_PERIOD_MS */
  readonly retryPeriodMs?: number;
  /**
   * After losing leadership, go back to being a candidate instead of rejecting `start()` with
   * `LeadershipLostError`. @defaultValue false
   */
  readonly reenterCandidacy?: boolean;
  /** Give the Lease up (empty holder) when `start()`'s signal aborts while leading. @defaultValue true */
  readonly releaseOnCancel?: boolean;
  /**
   * How long `start()` waits for the promise returned by `onStartedLeading` to settle once leadership
   * ends. On shutdown the Lease is released only if it settled within this time (and the elector keeps
   * renewing meanwhile). @defaultValue leaseDurationMs - renewDeadlineMs
   */
  readonly workStopTimeoutMs?: number;
  /**
   * Called on becoming leader with a signal that aborts when leadership ends (renew deadline missed,
   * Lease lost, shutdown). Leader-only work runs under that signal; a returned promise is awaited (see
   * workStopTimeoutMs) before releasing the Lease or leaving `start()`.
   */
  readonly onStartedLeading?: (leaderSignal: AbortSignal) => void | Promise<void>;
  /** Called once per term, right after the leader signal aborted. */
  readonly onStoppedLeading?: (reason: LeadershipEndReason) => void;
  /** Called when the Lease is seen naming a different holder (this candidate included). */
  readonly onNewLeader?: (identity: string) => void;
  /** Registry for `leader_election_master_status` and `leader_election_slowpath_total`. None: no metrics. */
  readonly registry?: Registry;
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Random source in [0, 1) for the candidates' jitter (tests). @defaultValue Math.random */
  readonly random?: () => number;
}

/** The durations after defaults and checks. */
export interface LeaderElectorTimings {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly workStopTimeoutMs: number;
}

/** `hostname_<random>`, as client-go's callers build it: unique even for two replicas on one host. */
export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

/**
 * Applies defaults and rejects what client-go rejects (leaseDuration > renewDeadline >
 * 1.2 × retryPeriod, all > 0), with an `InvalidOptionError` naming the option.
 */
export function resolveTimings(options: LeaderElectorOptions): LeaderElectorTimings {
  const leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
  const renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
  const retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
  positive('leaseDurationMs', leaseDurationMs);
  positive('renewDeadlineMs', renewDeadlineMs);
  positive('retryPeriodMs', retryPeriodMs);
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new InvalidOptionError(
      'renewDeadlineMs',
      `must be less than leaseDurationMs (${leaseDurationMs}), got ${renewDeadlineMs}`,
    );
  }
  if (!(renewDeadlineMs > JITTER_FACTOR * retryPeriodMs)) {
    throw new InvalidOptionError(
      'retryPeriodMs',
      `${JITTER_FACTOR} × retryPeriodMs (${retryPeriodMs}) must be less than renewDeadlineMs (${renewDeadlineMs})`,
    );
  }
  const workStopTimeoutMs = options.workStopTimeoutMs ?? leaseDurationMs - renewDeadlineMs;
  if (!(workStopTimeoutMs >= 0 && Number.isFinite(workStopTimeoutMs))) {
    throw new InvalidOptionError('workStopTimeoutMs', `must be a finite number >= 0, got ${workStopTimeoutMs}`);
  }
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs, workStopTimeoutMs };
}

/** Checks the non-duration options. */
export function checkIdentityOptions(options: LeaderElectorOptions): void {
  if (!options.client) throw new InvalidOptionError('client', 'a client is required');
  nonEmpty('name', options.name);
  nonEmpty('namespace', options.namespace);
  if (options.identity !== undefined) nonEmpty('identity', options.identity);
}

function positive(option: string, value: number): void {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
    throw new InvalidOptionError(option, `must be a finite number of milliseconds > 0, got ${String(value)}`);
  }
}

function nonEmpty(option: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0)
    throw new InvalidOptionError(option, 'must be a non-empty string');
}
