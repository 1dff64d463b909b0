import { realClock, type Clock } from '../core/clock.js';

/**
 * The real clock with ref'd timers. core's `realClock` unrefs its timers so a forgotten timer
 * never keeps Node alive; but a backoff someone is awaiting must, or a process whose only other
 * handles are idle keep-alive sockets exits in the middle of a retry (exit code 13, the awaited
 * promise never settles). The helpers' default for every wait a caller awaits.
 */
export const awaitedClock: Clock = {
  now: () => realClock.now(),
  monotonicNow: () => realClock.monotonicNow(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(t) };
  },
};
