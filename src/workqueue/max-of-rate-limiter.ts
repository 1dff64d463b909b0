import { InvalidOptionError } from '../core/errors.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * The longest delay of several limiters (client-go's `MaxOfRateLimiter`). Every limiter sees every
 * call, so each keeps its own accounting (the bucket still spends a token when the per-key backoff
 * is the longer wait).
 */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    if (limiters.length === 0) throw new InvalidOptionError('limiters', 'at least one rate limiter is required');
    this.limiters = limiters;
  }

  when(key: string): number {
    let max = 0;
    for (const limiter of this.limiters) max = Math.max(max, limiter.when(key));
    return max;
  }

  forget(key: string): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  numRequeues(key: string): number {
    let max = 0;
    for (const limiter of this.limiters) max = Math.max(max, limiter.numRequeues(key));
    return max;
  }
}
