/**
 * Time as a dependency. Everything that waits (backoff, delayed requeues, leases, resyncs) takes a
 * `Clock`, so tests drive time with `FakeClock.step()` instead of sleeping.
 */
export interface TimerHandle {
  /** Cancels the timer; safe to call more than once or after it fired. */
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch (wall clock, used for timestamps). */
  now(): number;
  /** Monotonic milliseconds, for measuring durations; never goes backwards. */
  monotonicNow(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimer(ms: number, fn: () => void): TimerHandle;
}

/** The process's real clock. Timers are unref'd so a pending timer never keeps Node alive. */
export class RealClock implements Clock {
  now(): number {
    return Date.now();
  }

  monotonicNow(): number {
    return performance.now();
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  }
}

export const realClock: Clock = new RealClock();
