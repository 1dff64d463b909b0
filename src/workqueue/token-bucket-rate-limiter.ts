import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { RateLimiter } from './rate-limiter.js';

/** @defaultValue 10 retries per second overall, client-go's default bucket. */
export const DEFAULT_BUCKET_QPS = 10;
/** @defaultValue 100 retries allowed at once before the rate applies. */
export const DEFAULT_BUCKET_BURST = 100;

export interface TokenBucketRateLimiterOptions {
  /** Tokens added per second. @defaultValue {@link DEFAULT_BUCKET_QPS} */
  readonly qps?: number;
  /** Bucket size (and initial fill). @defaultValue {@link DEFAULT_BUCKET_BURST} */
  readonly burst?: number;
  /** @defaultValue realClock */
  readonly clock?: Clock;
}

/**
 * An overall limit shared by all keys, like Go's `rate.Limiter` behind client-go's
 * `BucketRateLimiter`: `when` always reserves a token, possibly one not yet minted, and returns how
 * long until it is. The bucket can thus go into debt, which is what spaces a flood at `qps`.
 * Per-key `forget`/`numRequeues` do not apply to an overall limit and are no-ops.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private lastMs: number;

  constructor(options: TokenBucketRateLimiterOptions = {}) {
    this.qps = options.qps ?? DEFAULT_BUCKET_QPS;
    this.burst = options.burst ?? DEFAULT_BUCKET_BURST;
    if (!(this.qps > 0) || !Number.isFinite(this.qps))
      throw new InvalidOptionError('qps', 'must be a finite number > 0');
    if (!(this.burst >= 1)) throw new InvalidOptionError('burst', 'must be >= 1');
    this.clock = options.clock ?? realClock;
    this.tokens = this.burst;
    this.lastMs = this.clock.monotonicNow();
  }

  when(_key: string): number {
    const now = this.clock.monotonicNow();
    // Refill only forward in time; a debt (negative tokens) is paid back by the same refill.
    if (now > this.lastMs) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.lastMs) * this.qps) / 1000);
      this.lastMs = now;
    }
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    // Round up (less float noise) so a retry never runs before its token exists.
    return Math.ceil((-this.tokens * 1000) / this.qps - 1e-9);
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}
