import { FifoLevel, type QueueLevel } from './fifo-level.js';
import { RingBuffer } from './ring-buffer.js';

/**
 * One priority's keys, grouped by their fairness key: each group is a FIFO of its own, and the
 * groups with queued keys take turns — the next key comes from the group after the one that went
 * last, so a group with 10,000 keys queued gets one hand-out in every round like a group with ten.
 * A group joins the turn order at the back when its first key is queued, and leaves it (its map
 * entry and FIFO with it) when its last one goes, so a group that is gone costs nothing.
 * @internal
 */
export class FairLevel implements QueueLevel {
  live = 0;
  /** The groups with queued keys, by fairness key. */
  private readonly groups = new Map<string, FifoLevel>();
  /** The same groups, each once, in turn order: the head goes next. */
  private readonly turns = new RingBuffer<{ readonly name: string; readonly fifo: FifoLevel }>();
  /** The group whose head is the level's oldest key; undefined: not known (scan again). */
  private oldest: FifoLevel | undefined;

  constructor(
    readonly priority: number,
    private readonly fairnessKey: (key: string) => string,
  ) {}

  push(key: string, queuedAtMs: number): void {
    const name = this.fairnessKey(key);
    let fifo = this.groups.get(name);
    if (fifo === undefined) {
      fifo = new FifoLevel(this.priority);
      this.groups.set(name, fifo);
      this.turns.push({ name, fifo });
    }
    fifo.push(key, queuedAtMs);
    this.live++;
  }

  markMovedUp(key: string): void {
    const name = this.fairnessKey(key);
    const fifo = this.groups.get(name)!;
    fifo.markMovedUp(key);
    this.live--;
    if (fifo === this.oldest) this.oldest = undefined;
    if (fifo.live === 0) {
      // Rare (a group's last key here moved up): O(groups), so an emptied group never lingers.
      this.groups.delete(name);
      this.turns.retain((turn) => turn.fifo !== fifo);
    }
  }

  /**
   * The oldest head of any group. A scan of the groups, remembered until a key leaves the group
   * that had it — keys enter at the current time, so no push can make another group the oldest —
   * so the aging check on every hand-out costs one scan per round of turns, not one per hand-out.
   */
  headQueuedAtMs(): number {
    if (this.oldest !== undefined) return this.oldest.headQueuedAtMs();
    let oldestAtMs = Infinity;
    for (const fifo of this.groups.values()) {
      const queuedAtMs = fifo.headQueuedAtMs();
      if (queuedAtMs < oldestAtMs) {
        oldestAtMs = queuedAtMs;
        this.oldest = fifo;
      }
    }
    return oldestAtMs;
  }

  /**
   * The next group's next key; with `blocked`, groups it names are passed over (and go to the back
   * of the turn order), and undefined means every group with queued keys here is blocked.
   */
  shift(): string;
  shift(blocked?: (group: string) => boolean): string | undefined;
  shift(blocked?: (group: string) => boolean): string | undefined {
    let turn = this.turns.shift()!;
    if (blocked !== undefined && blocked(turn.name)) {
      // A group at its in-flight cap keeps its keys and goes to the back of the turn order; at most
      // one lap, so a level whose groups are all blocked costs O(groups) and yields nothing.
      const first = turn;
      do {
        this.turns.push(turn);
        turn = this.turns.shift()!;
        if (turn === first) {
          this.turns.push(turn);
          // Put the ring back as it was: the first blocked group still goes first once unblocked.
          for (let i = 1; i < this.turns.length; i++) this.turns.push(this.turns.shift()!);
          return undefined;
        }
      } while (blocked(turn.name));
    }
    const key = turn.fifo.shift()!;
    this.live--;
    if (turn.fifo === this.oldest) this.oldest = undefined;
    if (turn.fifo.live === 0) this.groups.delete(turn.name);
    else this.turns.push(turn);
    return key;
  }

  /** Keys of group `name` queued here. */
  liveOf(name: string): number {
    return this.groups.get(name)?.live ?? 0;
  }
}
