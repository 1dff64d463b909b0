/**
 * The `k` smallest items of a stream, in order, without sorting the stream: a max-heap of at most
 * `k` items, so O(n log k) time and O(k) memory. The console asks for the 100 soonest of what can
 * be 100,000 keys in backoff on every poll; sorting them all cost 72 ms a poll (issue 24).
 */
export class SmallestK<T> {
  private readonly heap: T[] = [];
  /** Items offered in all. */
  total = 0;

  constructor(
    private readonly k: number,
    private readonly compare: (a: T, b: T) => number,
  ) {}

  offer(item: T): void {
    this.total++;
    const h = this.heap;
    if (this.k <= 0) return;
    if (h.length < this.k) {
      h.push(item);
      this.up(h.length - 1);
    } else if (this.compare(item, h[0]!) < 0) {
      h[0] = item;
      this.down(0);
    }
  }

  /** The kept items, smallest first. */
  sorted(): T[] {
    return [...this.heap].sort(this.compare);
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(h[i]!, h[parent]!) <= 0) return;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let largest = i;
      if (l < h.length && this.compare(h[l]!, h[largest]!) > 0) largest = l;
      if (r < h.length && this.compare(h[r]!, h[largest]!) > 0) largest = r;
      if (largest === i) return;
      [h[i], h[largest]] = [h[largest]!, h[i]!];
      i = largest;
    }
  }
}
