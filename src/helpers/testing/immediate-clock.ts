import type { Clock } from '../../core/clock.js';

/** A clock whose timers fire on the next turn of the event loop, for retry paths in unit tests that are not about time. */
export const immediateClock: Clock = {
  now: () => Date.UTC(2026, 0, 1),
  monotonicNow: () => 0,
  setTimer(_ms, fn) {
    const t = setImmediate(fn);
    return { cancel: () => clearImmediate(t) };
  },
};
