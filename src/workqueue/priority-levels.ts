import type { Clock } from '../core/clock.js';

/**
 * One priority's keys, first in first out, each with when it was queued: two parallel ring buffers
 * (keys, and times in a Float64Array) so the hot path allocates nothing per key.
 */
class Level {
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

/**
 * The queued keys by priority: the highest priority first, first in first out within a priority.
 * One FIFO per priority in use (a handful in practice), so queueing and taking a key are O(1) plus
 * a scan of the levels; a key that moves up leaves a stale entry behind instead of being cut out
 * of the middle of a FIFO, and its old level skips it. Which key is queued at which priority is the
 * caller's to know (the workqueue's dirty and priority maps); this class only orders them.
 *
 * The aging rule, so that low priority cannot starve: a key that has waited `agingMs` or more in
 * its level is *overdue*. Normally the next key is the highest-priority one; but when a key of a
 * lower priority than that is overdue, the oldest such key goes instead — never twice in a row:
 * after an overdue key jumps the line, the next one goes by priority again. So while
 * higher-priority keys keep coming, overdue lower-priority keys still get every second hand-out,
 * and a higher-priority key waits behind at most one overdue key per hand-out it gets.
 * @internal
 */
export class PriorityLevels {
  /** Highest priority first; every level here has live keys. */
  private readonly levels: Level[] = [];
  private count = 0;
  private lastJumped = false;

  constructor(
    private readonly clock: Clock,
    private readonly agingMs: number,
  ) {}

  /** Keys queued. */
  get size(): number {
    return this.count;
  }

  /** Queues `key` (not queued yet) at `priority`, as entering at `nowMs`. */
  push(key: string, priority: number, nowMs: number): void {
    const levels = this.levels;
    const top = levels[0];
    // The common case first: one priority in use.
    (top !== undefined && top.priority === priority ? top : this.levelFor(priority)).push(key, nowMs);
    this.count++;
  }

  /** Moves queued `key` from priority `from` up to `to`: to the back of its new level, as entering it at `nowMs`. */
  raise(key: string, from: number, to: number, nowMs: number): void {
    const old = this.levelFor(from);
    old.markMovedUp(key);
    this.count--;
    if (old.live === 0) this.drop(old);
    this.push(key, to, nowMs);
  }

  /** Takes the next key (see the aging rule above). */
  shift(): string | undefined {
    const levels = this.levels;
    if (levels.length === 0) return undefined;
    let level = levels[0]!;
    if (levels.length > 1 && !this.lastJumped) {
      const overdue = this.oldestOverdueBelowTop();
      if (overdue) {
        level = overdue;
        this.lastJumped = true;
      }
    } else {
      this.lastJumped = false;
    }
    const key = level.shift();
    this.count--;
    if (level.live === 0) this.drop(level);
    return key;
  }

  /** Queued keys per priority (only priorities with queued keys). */
  countByPriority(): Map<number, number> {
    return new Map(this.levels.map((l) => [l.priority, l.live]));
  }

  clear(): void {
    this.levels.length = 0;
    this.count = 0;
    this.lastJumped = false;
  }

  private oldestOverdueBelowTop(): Level | undefined {
    if (!Number.isFinite(this.agingMs)) return undefined;
    const dueBy = this.clock.monotonicNow() - this.agingMs;
    let oldest: Level | undefined;
    let oldestAtMs = Infinity;
    for (let i = 1; i < this.levels.length; i++) {
      const level = this.levels[i]!;
      // A level's first live key is its oldest: keys enter at the back, at the current time.
      const queuedAtMs = level.headQueuedAtMs();
      if (queuedAtMs <= dueBy && queuedAtMs < oldestAtMs) {
        oldest = level;
        oldestAtMs = queuedAtMs;
      }
    }
    return oldest;
  }

  /** An empty level goes, with any stale entries. */
  private drop(level: Level): void {
    this.levels.splice(this.levels.indexOf(level), 1);
  }

  private levelFor(priority: number): Level {
    const levels = this.levels;
    let i = 0;
    while (i < levels.length && levels[i]!.priority > priority) i++;
    const found = levels[i];
    if (found?.priority === priority) return found;
    const level = new Level(priority);
    levels.splice(i, 0, level);
    return level;
  }
}
