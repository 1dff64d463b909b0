/**
 * Time as a dependency. Everything that waits (backoff, delayed requeues, leases, resyncs) takes a
 * `Clock`, so tests drive time with `FakeClock.step()` instead of sleeping.
 */
export interface TimerHandle {
  /** Cancels the timer; safe to call more than once or after it fired. */
  cancel(): void;
}

export interface TimerOptions {
  /** Keep the process alive while the timer is pending. @defaultValue false */
  readonly keepAlive?: boolean;
}

export interface Clock {
  /** Milliseconds since the epoch (wall clock, used for timestamps). */
  now(): number;
  /** Monotonic milliseconds, for measuring durations; never goes backwards. */
  monotonicNow(): number;
  /**
   * Runs `fn` once after `ms` milliseconds. Real timers do not keep the process alive unless
   * `keepAlive` is set — set it when something awaits the timer (a sleep), or Node may exit with
   * the await unsettled.
   */
  setTimer(ms: number, fn: () => void, options?: TimerOptions): TimerHandle;
}

/**
 * The process's real clock. Timers are unref'd unless `keepAlive` (a watchdog or a delayed requeue
 * alone should not keep Node running; an awaited sleep must).
 */
export class RealClock implements Clock {
  now(): number {
    return Date.now();
  }

  monotonicNow(): number {
    return performance.now();
  }

  setTimer(ms: number, fn: () => void, options?: TimerOptions): TimerHandle {
    const t = setTimeout(fn, Math.max(0, ms));
    if (!options?.keepAlive) t.unref();
    return { cancel: () => clearTimeout(t) };
  }
}

export const realClock: Clock = new RealClock();
