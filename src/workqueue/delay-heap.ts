/** A key waiting to be added to the queue at `readyAtMs` (monotonic clock). */
export interface DelayedEntry {
  readonly key: string;
  readyAtMs: number;
  /** The priority it is added with when due: the highest asked for while it waited. */
  priority: number;
  /** Position in the heap array, kept up to date so an entry can move up in O(log n). */
  index: number;
  /** Insertion order: entries due at the same time leave in the order they were added. */
  readonly seq: number;
}

/**
 * client-go's delaying queue: a min-heap of waiting keys by ready time, plus a map from key to its
 * entry so that a second request for a waiting key only ever moves it earlier (earliest wins).
 */
export class DelayHeap {
  private readonly heap: DelayedEntry[] = [];
  private readonly byKey = new Map<string, DelayedEntry>();
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  /** The entry due first, if any. */
  peek(): DelayedEntry | undefined {
    return this.heap[0];
  }

  /**
   * Schedules `key` at `readyAtMs`, or moves its pending entry earlier (never later) and its
   * priority up (never down).
   */
  schedule(key: string, readyAtMs: number, priority = 0): void {
    const existing = this.byKey.get(key);
    if (existing) {
      if (priority > existing.priority) existing.priority = priority;
      if (readyAtMs < existing.readyAtMs) {
        existing.readyAtMs = readyAtMs;
        this.up(existing.index);
      }
      return;
    }
    const entry: DelayedEntry = { key, readyAtMs, priority, index: this.heap.length, seq: this.seq++ };
    this.heap.push(entry);
    this.byKey.set(key, entry);
    this.up(entry.index);
  }

  /** Removes and returns the first entry if it is due at `nowMs`. */
  popDue(nowMs: number): DelayedEntry | undefined {
    const top = this.heap[0];
    if (!top || top.readyAtMs > nowMs) return undefined;
    const last = this.heap.pop()!;
    if (last !== top) {
      this.heap[0] = last;
      last.index = 0;
      this.down(0);
    }
    this.byKey.delete(top.key);
    return top;
  }

  /** When `key` is due, if it is waiting. */
  readyAt(key: string): number | undefined {
    return this.byKey.get(key)?.readyAtMs;
  }

  /** Every waiting entry, in heap (not time) order. */
  entries(): readonly DelayedEntry[] {
    return this.heap;
  }

  clear(): void {
    this.heap.length = 0;
    this.byKey.clear();
  }

  private less(a: DelayedEntry, b: DelayedEntry): boolean {
    return a.readyAtMs < b.readyAtMs || (a.readyAtMs === b.readyAtMs && a.seq < b.seq);
  }

  private up(i: number): void {
    const h = this.heap;
    const entry = h[i]!;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = h[parentIndex]!;
      if (!this.less(entry, parent)) break;
      h[i] = parent;
      parent.index = i;
      i = parentIndex;
    }
    h[i] = entry;
    entry.index = i;
  }

  private down(i: number): void {
    const h = this.heap;
    const n = h.length;
    const entry = h[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && this.less(h[r]!, h[l]!) ? r : l;
      const c = h[child]!;
      if (!this.less(c, entry)) break;
      h[i] = c;
      c.index = i;
      i = child;
    }
    h[i] = entry;
    entry.index = i;
  }
}
