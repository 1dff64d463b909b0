/**
 * Decides how long a key waits before it is retried (client-go's `RateLimiter`). Limiters are
 * plain values that compose (see `MaxOfRateLimiter`); each queue should own its own instance.
 */
export interface RateLimiter {
  /** The delay in ms before `key` may be retried; records the retry. */
  when(key: string): number;
  /** Stops tracking `key` (its backoff starts over), typically after a success. */
  forget(key: string): void;
  /** How many times `key` has been retried since it was last forgotten. */
  numRequeues(key: string): number;
}
