/**
 * One watch's event queue, and the rule for turning a store change into what a watcher with a
 * selector sees — the API server's cacher rule: an object entering the selector is ADDED, one
 * leaving it is DELETED (with its previous content and the change's resourceVersion).
 */
import type { WatchEvent } from '../../client/watch-decoder.js';
import type { Change } from './object-store.js';
import { clone, type JsonObject } from './json-value.js';

export type ObjectFilter = (obj: JsonObject) => boolean;

/** The event a watcher whose filter is `matches` gets for `change`, or undefined if none. */
export function eventFor(change: Change, matches: ObjectFilter): WatchEvent<JsonObject> | undefined {
  const now = change.type !== 'DELETED' && matches(change.object);
  const before = change.prev !== undefined && matches(change.prev);
  if (now && !before) return { type: 'ADDED', object: clone(change.object) };
  if (now && before) return { type: 'MODIFIED', object: clone(change.object) };
  if (!now && before) {
    const gone = clone(change.prev!);
    (gone.metadata as JsonObject).resourceVersion = String(change.revision);
    return { type: 'DELETED', object: gone };
  }
  return undefined;
}

/**
 * A single-consumer async queue. Unbounded: the fake is for tests, where a watch reader that never
 * reads is a bug the test will show anyway.
 */
export class EventQueue<T> {
  private readonly items: T[] = [];
  private waiter: { resolve: (r: IteratorResult<T, undefined>) => void; reject: (e: unknown) => void } | undefined;
  private ended = false;
  private failure: { error: unknown } | undefined;

  push(item: T): void {
    if (this.ended || this.failure) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value: item, done: false });
    } else this.items.push(item);
  }

  /** Ends the stream after the queued items. */
  end(): void {
    this.ended = true;
    this.settleWaiter();
  }

  /** Fails the stream after the queued items. */
  fail(error: unknown): void {
    if (this.ended || this.failure) return;
    this.failure = { error };
    this.settleWaiter();
  }

  next(): Promise<IteratorResult<T, undefined>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.failure) return Promise.reject(this.failure.error);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  private settleWaiter(): void {
    if (!this.waiter || this.items.length > 0) return;
    const w = this.waiter;
    this.waiter = undefined;
    if (this.failure) w.reject(this.failure.error);
    else w.resolve({ value: undefined, done: true });
  }
}
