import type { Clock, TimerHandle } from './clock.js';

interface FakeTimer {
  readonly id: number;
  readonly dueAt: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that only moves when a test moves it. `step(ms)` fires every timer that falls due, in
 * due-time order (timers scheduled by a firing timer fire too if they fall inside the step).
 * `advance(ms)` does the same but lets promise callbacks run between timers, which is what async
 * code under test usually needs.
 */
export class FakeClock implements Clock {
  private current: number;
  private readonly start: number;
  private timers: FakeTimer[] = [];
  private nextId = 1;

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
    this.start = startMs;
  }

  now(): number {
    return this.current;
  }

  monotonicNow(): number {
    return this.current - this.start;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer: FakeTimer = { id: this.nextId++, dueAt: this.current + Math.max(0, ms), fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
        this.timers = this.timers.filter((t) => t !== timer);
      },
    };
  }

  /** Number of timers still pending. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Milliseconds until the earliest pending timer, or undefined if none. */
  nextTimerInMs(): number | undefined {
    const t = this.earliest();
    return t ? t.dueAt - this.current : undefined;
  }

  /** Moves time forward by `ms`, firing due timers synchronously. */
  step(ms: number): void {
    const target = this.current + ms;
    for (let t = this.takeDue(target); t; t = this.takeDue(target)) {
      this.current = Math.max(this.current, t.dueAt);
      t.fn();
    }
    this.current = target;
  }

  /** Like `step`, but drains pending promise callbacks before and after each timer. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await flushMicrotasks();
    for (let t = this.takeDue(target); t; t = this.takeDue(target)) {
      this.current = Math.max(this.current, t.dueAt);
      t.fn();
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }

  private earliest(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers)
      if (!best || t.dueAt < best.dueAt || (t.dueAt === best.dueAt && t.id < best.id)) best = t;
    return best;
  }

  private takeDue(target: number): FakeTimer | undefined {
    const t = this.earliest();
    if (!t || t.dueAt > target) return undefined;
    this.timers = this.timers.filter((x) => x !== t);
    return t;
  }
}

/** Lets every already-queued promise callback (and those they queue) run. */
export async function flushMicrotasks(): Promise<void> {
  // setImmediate runs after the microtask queue drains; twice covers callbacks queued by callbacks
  // that themselves awaited an I/O-free promise chain.
  await new Promise<void>((r) => setImmediate(r));
  await new Promise<void>((r) => setImmediate(r));
}
