import { delayFor } from '../core/backoff.js';
import { InvalidOptionError } from '../core/errors.js';
import type { RateLimiter } from './rate-limiter.js';

/** @defaultValue 5 ms, client-go's per-item base delay. */
export const DEFAULT_ITEM_BASE_DELAY_MS = 5;
/** @defaultValue 1,000,000 ms (1000 s), client-go's per-item cap. */
export const DEFAULT_ITEM_MAX_DELAY_MS = 1_000_000;

export interface ItemExponentialRateLimiterOptions {
  /** Delay of the first retry. @defaultValue {@link DEFAULT_ITEM_BASE_DELAY_MS} */
  readonly baseDelayMs?: number;
  /** Cap on any delay. @defaultValue {@link DEFAULT_ITEM_MAX_DELAY_MS} */
  readonly maxDelayMs?: number;
}

/**
 * Per-key exponential backoff: base × 2^failures, capped; `forget` starts a key over. One failing
 * key backs off without slowing the others.
 */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: ItemExponentialRateLimiterOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? DEFAULT_ITEM_BASE_DELAY_MS;
    this.maxDelayMs = options.maxDelayMs ?? DEFAULT_ITEM_MAX_DELAY_MS;
    if (!(this.baseDelayMs >= 0)) throw new InvalidOptionError('baseDelayMs', 'must be >= 0');
    if (!(this.maxDelayMs >= this.baseDelayMs)) throw new InvalidOptionError('maxDelayMs', 'must be >= baseDelayMs');
  }

  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    return delayFor(failures, this.baseDelayMs, this.maxDelayMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}
