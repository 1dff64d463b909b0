/**
 * Client-side QPS/burst limiter (a token bucket, like client-go's flowcontrol). Off by default: as
 * in controller-runtime, the API server's priority & fairness is the real limiter.
 */
import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import { sleep } from '../core/abort.js';
import { InvalidOptionError } from '../core/errors.js';

export interface RateLimiterOptions {
  /** Sustained requests per second. */
  readonly qps: number;
  /** Requests allowed at once after idling. @defaultValue max(1, ceil(qps)) */
  readonly burst?: number;
  readonly clock?: Clock;
}

export class TokenBucketRateLimiter {
  private tokens: number;
  private last: number;
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;

  constructor(options: RateLimiterOptions) {
    if (!(options.qps > 0)) throw new InvalidOptionError('qps', 'must be > 0');
    this.qps = options.qps;
    this.burst = options.burst ?? Math.max(1, Math.ceil(options.qps));
    if (!(this.burst >= 1)) throw new InvalidOptionError('burst', 'must be >= 1');
    this.clock = options.clock ?? realClock;
    this.tokens = this.burst;
    this.last = this.clock.monotonicNow();
  }

  /**
   * Waits for a token. Waiters reserve their token up front (the bucket goes negative), so they are
   * served in arrival order without polling; an aborted wait hands its token back.
   */
  async acquire(signal?: AbortSignal): Promise<void> {
    const now = this.clock.monotonicNow();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    if (this.tokens >= 0) return;
    const waitMs = Math.ceil((-this.tokens * 1000) / this.qps);
    try {
      await sleep(this.clock, waitMs, signal);
    } catch (err) {
      this.tokens += 1;
      throw err;
    }
  }
}
