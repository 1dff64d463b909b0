/** core: keys, GVKs, clocks, backoff, abort helpers, the base error and the logger interface. */
export * from './errors.js';
export * from './leadership-lost.js';
export * from './clock.js';
export * from './fake-clock.js';
export * from './abort.js';
export * from './backoff.js';
export * from './backoff-options.js';
export * from './object-key.js';
export * from './logger.js';
export * from './seeded-random.js';
