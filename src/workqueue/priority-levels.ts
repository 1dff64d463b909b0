import type { Clock } from '../core/clock.js';
import { FairLevel } from './fair-level.js';
import { FifoLevel, type QueueLevel } from './fifo-level.js';

/**
 * The queued keys by priority: the highest priority first, first in first out within a priority
 * (or, with a fairness key, groups taking turns within a priority: see {@link FairLevel}).
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
 *
 * With a fairness key, aging picks the level and fairness picks the group: a level is overdue when
 * its oldest key (of any group) is, and the key that jumps the line is the next in that level's
 * turn order, not the oldest one — otherwise a 10,000-key relist queued first would win every
 * aged hand-out and starve the other groups at that level all over again.
 * @internal
 */
export class PriorityLevels {
  /** Highest priority first; every level here has live keys. */
  private readonly levels: QueueLevel[] = [];
  private count = 0;
  private lastJumped = false;

  /**
   * @param fairnessKey - when given, each level is a {@link FairLevel} (groups take turns) instead
   *   of a plain FIFO.
   */
  constructor(
    private readonly clock: Clock,
    private readonly agingMs: number,
    private readonly fairnessKey?: (key: string) => string,
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

  /**
   * Takes the next key (see the aging rule above). With `blocked`, keys of the groups it names
   * stay queued and are passed over, at every priority: a blocked group's high-priority keys do
   * not hold back other groups' lower-priority ones. Undefined when nothing may go.
   */
  shift(blocked?: (group: string) => boolean): string | undefined {
    const levels = this.levels;
    if (levels.length === 0) return undefined;
    if (levels.length > 1 && !this.lastJumped) {
      const overdue = this.oldestOverdueBelowTop();
      const key = overdue && this.take(overdue, blocked);
      if (key !== undefined) {
        this.lastJumped = true;
        return key;
      }
    }
    this.lastJumped = false;
    // Usually the top level answers; only blocked groups send the search further down.
    for (let i = 0; i < levels.length; i++) {
      const key = this.take(levels[i]!, blocked);
      if (key !== undefined) return key;
    }
    return undefined;
  }

  private take(level: QueueLevel, blocked: ((group: string) => boolean) | undefined): string | undefined {
    const key = level.shift(blocked);
    if (key === undefined) return undefined;
    this.count--;
    if (level.live === 0) this.drop(level);
    return key;
  }

  /** Queued keys per priority (only priorities with queued keys). */
  countByPriority(): Map<number, number> {
    return new Map(this.levels.map((l) => [l.priority, l.live]));
  }

  /** Keys of fairness group `name` queued, at any priority (0 without a fairness key). */
  countOfGroup(name: string): number {
    let count = 0;
    for (const level of this.levels) if (level instanceof FairLevel) count += level.liveOf(name);
    return count;
  }

  clear(): void {
    this.levels.length = 0;
    this.count = 0;
    this.lastJumped = false;
  }

  private oldestOverdueBelowTop(): QueueLevel | undefined {
    if (!Number.isFinite(this.agingMs)) return undefined;
    const dueBy = this.clock.monotonicNow() - this.agingMs;
    let oldest: QueueLevel | undefined;
    let oldestAtMs = Infinity;
    for (let i = 1; i < this.levels.length; i++) {
      const level = this.levels[i]!;
      // A FIFO level's first live key is its oldest (keys enter at the back, at the current time);
      // a fair level looks at each group's first.
      const queuedAtMs = level.headQueuedAtMs();
      if (queuedAtMs <= dueBy && queuedAtMs < oldestAtMs) {
        oldest = level;
        oldestAtMs = queuedAtMs;
      }
    }
    return oldest;
  }

  /** An empty level goes, with any stale entries. */
  private drop(level: QueueLevel): void {
    this.levels.splice(this.levels.indexOf(level), 1);
  }

  private levelFor(priority: number): QueueLevel {
    const levels = this.levels;
    let i = 0;
    while (i < levels.length && levels[i]!.priority > priority) i++;
    const found = levels[i];
    if (found?.priority === priority) return found;
    const level = this.fairnessKey ? new FairLevel(priority, this.fairnessKey) : new FifoLevel(priority);
    levels.splice(i, 0, level);
    return level;
  }
}
