import { delayFor } from '../core/backoff.js';
import { resolveBackoff, type BackoffOptions, type ResolvedBackoff } from '../core/backoff-options.js';
import { InvalidOptionError } from '../core/errors.js';
import type { RateLimiter } from './rate-limiter.js';

/** client-go's per-item defaults: 5 ms doubling to 1000 s, no jitter, and a key is never dropped. */
export const DEFAULT_ITEM_BACKOFF: ResolvedBackoff = Object.freeze({
  initialMs: 5,
  maxMs: 1_000_000,
  factor: 2,
  jitter: 0,
  maxAttempts: Infinity,
});

export interface ItemExponentialRateLimiterOptions {
  /**
   * Per-key delays: initialMs × factor^failures, capped at maxMs. No jitter (the overall token
   * bucket spreads retries) and no last attempt (a failing key keeps its place).
   * @defaultValue {@link DEFAULT_ITEM_BACKOFF}
   */
  readonly backoff?: BackoffOptions;
}

/**
 * Per-key exponential backoff: base × 2^failures, capped; `forget` starts a key over. One failing
 * key backs off without slowing the others.
 */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly backoff: ResolvedBackoff;

  constructor(options: ItemExponentialRateLimiterOptions = {}) {
    this.backoff = resolveBackoff(DEFAULT_ITEM_BACKOFF, options.backoff);
    // Silently ignoring these would promise a behaviour the limiter does not have.
    if (this.backoff.jitter !== 0)
      throw new InvalidOptionError('backoff.jitter', 'the per-item limiter has no jitter: leave it unset');
    if (this.backoff.maxAttempts !== Infinity)
      throw new InvalidOptionError('backoff.maxAttempts', 'the per-item limiter never drops a key: leave it unset');
  }

  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    return delayFor(failures, this.backoff.initialMs, this.backoff.maxMs, this.backoff.factor);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}
