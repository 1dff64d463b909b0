/**
 * Calls `onIdle` once nothing `touch`ed it for `limitMs`. One timer, checked when it fires and
 * re-armed for the rest of the limit if a touch came meanwhile: the watch touches it on every
 * event, and cancelling and re-creating a timer (with its closures) per event cost more than the
 * event's store update.
 */
import type { Clock, TimerHandle } from '../core/clock.js';

export class IdleWatchdog {
  private lastTouchMs: number;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly limitMs: number,
    private readonly onIdle: () => void,
  ) {
    this.lastTouchMs = clock.monotonicNow();
    this.arm(limitMs);
  }

  /** Something happened: the idle time starts over. */
  touch(): void {
    this.lastTouchMs = this.clock.monotonicNow();
  }

  /** Stops watching; `onIdle` is not called after this. */
  cancel(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = this.clock.setTimer(ms, () => this.check());
  }

  private check(): void {
    const idleMs = this.clock.monotonicNow() - this.lastTouchMs;
    if (idleMs < this.limitMs) return this.arm(this.limitMs - idleMs);
    this.timer = undefined;
    this.onIdle();
  }
}
