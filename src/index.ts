/**
 * operator-runtime: the public API. Each module's index lists its exports; the few names two
 * modules share are resolved here explicitly (the client's list/watch types are the public ones;
 * the cache's seam types of the same names stay internal to the cache).
 */
export * from './core/index.js';
export * from './client/index.js';
export * from './cache/index.js';
export * from './workqueue/index.js';
export * from './controller/index.js';
export * from './manager/index.js';
export * from './metrics/index.js';
export * from './logging/index.js';
export * from './helpers/index.js';
export * from './leader-election/index.js';
// The console is opt-in through ManagerOptions.console; its classes stay internal.
export { DEFAULT_CONSOLE_PORT, DEFAULT_CONSOLE_HOST } from './console/index.js';
export type { ConsoleOptions, ConsoleSnapshot, ControllerSnapshot, InformerSnapshot, EventSnapshot, RecentReconcile, FailingKey } from './console/index.js';

export type { ListOptions, ListPage, WatchEvent, WatchOptions, ObjectLike } from './client/index.js';
export type { Client } from './client/client.js';
export { TokenBucketRateLimiter } from './workqueue/index.js';
export { TokenBucketRateLimiter as ClientTokenBucketRateLimiter } from './client/index.js';
export { LeadershipLostError } from './leader-election/index.js';
