/**
 * workqueue: the dirty/processing queue between event handlers and workers (one worker per key at a
 * time), delayed adds that coalesce to the earliest time, and composable rate limiters.
 */
export {
  Workqueue,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_PRIORITY,
  LOW_PRIORITY,
  DEFAULT_PRIORITY_AGING_MS,
} from './workqueue.js';
export type { WorkqueueOptions, AddOptions, GetResult, ShutdownOptions, ShutdownResult } from './workqueue.js';
export type { RateLimiter } from './rate-limiter.js';
export { ItemExponentialRateLimiter, DEFAULT_ITEM_BACKOFF } from './item-exponential-rate-limiter.js';
export type { ItemExponentialRateLimiterOptions } from './item-exponential-rate-limiter.js';
export { TokenBucketRateLimiter, DEFAULT_BUCKET_QPS, DEFAULT_BUCKET_BURST } from './token-bucket-rate-limiter.js';
export type { TokenBucketRateLimiterOptions } from './token-bucket-rate-limiter.js';
export { MaxOfRateLimiter } from './max-of-rate-limiter.js';
export { defaultControllerRateLimiter } from './default-controller-rate-limiter.js';
export type { DefaultControllerRateLimiterOptions } from './default-controller-rate-limiter.js';
export { WORKQUEUE_DURATION_BUCKETS_SECONDS } from './workqueue-metrics.js';
