import type { Clock } from '../core/clock.js';
import { ItemExponentialRateLimiter } from './item-exponential-rate-limiter.js';
import { MaxOfRateLimiter } from './max-of-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { TokenBucketRateLimiter } from './token-bucket-rate-limiter.js';

export interface DefaultControllerRateLimiterOptions {
  /** Clock for the token bucket. @defaultValue realClock */
  readonly clock?: Clock;
}

/**
 * controller-runtime's default: per-key exponential backoff (5 ms → 1000 s) under an overall token
 * bucket (10/s, burst 100), whichever waits longer. A fresh instance each call: never share one
 * between queues, or one controller's failures would throttle another's.
 */
export function defaultControllerRateLimiter(options: DefaultControllerRateLimiterOptions = {}): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialRateLimiter(), new TokenBucketRateLimiter({ clock: options.clock }));
}
