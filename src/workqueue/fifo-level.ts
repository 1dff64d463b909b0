/**
 * What {@link PriorityLevels} keeps per priority: the queued keys of one priority, in the order
 * they go out. Two shapes: {@link FifoLevel} (first in first out) and `FairLevel` (groups take
 * turns). A key's stale entries (left behind when it moved up) are the level's to skip.
 * @internal
 */
export interface QueueLevel {
  readonly priority: number;
  /** Keys this level holds as queued. */
  readonly live: number;
  push(key: string, queuedAtMs: number): void;
  /** The key `key` queued here moved up: it no longer counts as queued here. */
  markMovedUp(key: string): void;
  /** When the oldest live key was queued. The level has a live key. */
  headQueuedAtMs(): number;
  /**
   * Removes and returns the next live key. The level has a live key. With `blocked` (a fair level
   * only), skips the groups it names and returns undefined when every group is blocked.
   */
  shift(blocked?: (group: string) => boolean): string | undefined;
}

/**
 * One priority's keys, first in first out, each with when it was queued: two parallel ring buffers
 * (keys, and times in a Float64Array) so the hot path allocates nothing per key.
 */
export class FifoLevel implements QueueLevel {
  private keys: (string | undefined)[];
  private times: Float64Array;
  private head = 0;
  private length = 0;
  private mask: number;
  /** Keys this level holds as queued (its other entries are stale). */
  live = 0;
  /**
   * Keys that moved up to a higher level while queued here, with how many stale entries each left
   * here. A key's stale entries always come before its live one (it can only be queued here again
   * after it left), so popping skips the first that many entries of it.
   */
  private movedUp: Map<string, number> | undefined;

  constructor(readonly priority: number) {
    this.keys = new Array<string | undefined>(16);
    this.times = new Float64Array(16);
    this.mask = 15;
  }

  push(key: string, queuedAtMs: number): void {
    if (this.length === this.keys.length) this.grow();
    const i = (this.head + this.length) & this.mask;
    this.keys[i] = key;
    this.times[i] = queuedAtMs;
    this.length++;
    this.live++;
  }

  /** The key `key` queued here moved up: its entry stays, as stale. */
  markMovedUp(key: string): void {
    this.movedUp ??= new Map();
    this.movedUp.set(key, (this.movedUp.get(key) ?? 0) + 1);
    this.live--;
  }

  /** When the first live key was queued (drops stale entries before it). The level has a live key. */
  headQueuedAtMs(): number {
    this.dropStale();
    return this.times[this.head]!;
  }

  /** Removes and returns the first live key. The level has a live key. */
  shift(): string {
    this.dropStale();
    const key = this.take();
    this.live--;
    return key;
  }

  private dropStale(): void {
    const movedUp = this.movedUp;
    if (movedUp === undefined || movedUp.size === 0) return;
    for (;;) {
      const key = this.keys[this.head]!;
      const stale = movedUp.get(key);
      if (stale === undefined) return;
      if (stale === 1) movedUp.delete(key);
      else movedUp.set(key, stale - 1);
      this.take();
    }
  }

  private take(): string {
    const key = this.keys[this.head]!;
    this.keys[this.head] = undefined; // let the key be collected
    this.head = (this.head + 1) & this.mask;
    this.length--;
    return key;
  }

  private grow(): void {
    const size = this.keys.length * 2;
    const keys = new Array<string | undefined>(size);
    const times = new Float64Array(size);
    for (let i = 0; i < this.length; i++) {
      const from = (this.head + i) & this.mask;
      keys[i] = this.keys[from];
      times[i] = this.times[from]!;
    }
    this.keys = keys;
    this.times = times;
    this.head = 0;
    this.mask = size - 1;
  }
}
