import { InvalidOptionError } from '../core/errors.js';

/**
 * The last `capacity` items pushed: a push beyond capacity overwrites the oldest, so memory is
 * bounded however long the process runs. The console keeps its recent reconciles and Events here.
 */
export class FixedRing<T> {
  private readonly items: (T | undefined)[];
  private next = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new InvalidOptionError('capacity', 'must be an integer >= 1');
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.size;
  }

  push(item: T): void {
    this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  /** The item pushed last, if any. */
  newest(): T | undefined {
    return this.size === 0 ? undefined : this.items[(this.next - 1 + this.capacity) % this.capacity];
  }

  /** Replaces the item pushed last (no-op when empty). */
  replaceNewest(item: T): void {
    if (this.size > 0) this.items[(this.next - 1 + this.capacity) % this.capacity] = item;
  }

  /** The items, newest first. */
  newestFirst(): T[] {
    const out: T[] = [];
    for (let i = 1; i <= this.size; i++) out.push(this.items[(this.next - i + this.capacity) % this.capacity]!);
    return out;
  }
}
