/**
 * A growable FIFO over a power-of-two array: push and shift are O(1), where `Array.prototype.shift`
 * is O(n) once V8 leaves its fast path. The workqueue's hot path runs through this.
 */
export class RingBuffer<T> {
  private items: (T | undefined)[];
  private head = 0;
  private size = 0;
  private mask: number;

  constructor(initialCapacity = 16) {
    let capacity = 1;
    while (capacity < initialCapacity) capacity *= 2;
    this.items = new Array<T | undefined>(capacity);
    this.mask = capacity - 1;
  }

  get length(): number {
    return this.size;
  }

  push(item: T): void {
    if (this.size === this.items.length) this.grow();
    this.items[(this.head + this.size) & this.mask] = item;
    this.size++;
  }

  /** Removes and returns the oldest item, or undefined when empty. */
  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined; // let the item be collected
    this.head = (this.head + 1) & this.mask;
    this.size--;
    return item;
  }

  /** Keeps only the items `keep` accepts, in order. O(n); not for the hot path. */
  retain(keep: (item: T) => boolean): void {
    const kept: T[] = [];
    for (const item of this) if (keep(item)) kept.push(item);
    this.clear();
    for (const item of kept) this.push(item);
  }

  clear(): void {
    this.items.fill(undefined);
    this.head = 0;
    this.size = 0;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.size; i++) yield this.items[(this.head + i) & this.mask] as T;
  }

  private grow(): void {
    const next = new Array<T | undefined>(this.items.length * 2);
    for (let i = 0; i < this.size; i++) next[i] = this.items[(this.head + i) & this.mask];
    this.items = next;
    this.head = 0;
    this.mask = next.length - 1;
  }
}
