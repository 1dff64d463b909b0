/**
 * Delivers store changes to one event handler without ever letting it hold up the watch, and
 * without an unbounded buffer: pending work is a dirty set keyed by object key (as client-go's
 * workqueue), so a slow handler costs at most one entry per key, never one per event.
 *
 * Delivery guarantee, per handler and per key:
 * - calls come in order and never overlap (one call at a time per handler, async ones awaited);
 * - they always form a valid history: `add`, then `update`s, then `delete`, then maybe `add` again;
 *   `update(old, new)` gets as `old` exactly the object this handler was last given;
 * - while the handler is busy, changes to a key coalesce: intermediate states may be skipped, but
 *   the latest state is always delivered, and the deletion of an object the handler was given is
 *   never skipped (a delete then re-create arrives as `delete(old)` then `add(new)`); an object that
 *   came and went entirely while the handler was busy is still announced, as `add` then `delete`;
 * - keys are served in the order they first became dirty;
 * - `add` says whether the object came from a list (the initial one, a relist, or the replay of the
 *   cache to a handler registered late: client-go's `isInInitialList`) rather than from a watch
 *   event; a key changed by a watch event since it was listed is not from a list;
 * - a handler that throws (or rejects) is logged and skipped; later changes are still delivered.
 */
import { silentLogger, type Logger } from '../core/logger.js';
import type { StoreDelta } from './store.js';
import { deletedObject, type Tombstone } from './tombstone.js';

/** What `add` is told besides the object. */
export interface AddEventInfo {
  /**
   * The object was announced by a list — the initial one, a relist, or the replay of the cache to
   * a handler registered after it — not by a watch event (client-go's `isInInitialList`). Nothing
   * necessarily changed: controllers queue such keys at low priority.
   */
  readonly isInInitialList: boolean;
}

const FROM_LIST: AddEventInfo = Object.freeze({ isInInitialList: true });
const FROM_WATCH: AddEventInfo = Object.freeze({ isInInitialList: false });

/** A handler of store changes. Calls may return a promise; the next call for this handler waits for it. */
export interface EventHandler<T> {
  add?(obj: T, info?: AddEventInfo): void | Promise<void>;
  update?(old: T, obj: T): void | Promise<void>;
  /** `obj` is the final state from the watch, or a tombstone when the delete was found by a relist. */
  delete?(obj: T | Tombstone<T>): void | Promise<void>;
}

/** A store change, or a periodic resync of an unchanged object (delivered as `update(obj, obj)`). */
export type DispatchedChange<T> = StoreDelta<T> | { readonly type: 'resync'; readonly key: string; readonly object: T };

interface Pending<T> {
  /** What this handler was last given for the key (undefined: nothing, or its deletion). */
  readonly seen: T | undefined;
  /** The first deletion since `seen`: closes the handler's view of `seen`. */
  deleted: T | Tombstone<T> | undefined;
  /** The state to deliver last (undefined when the key is gone). */
  current: T | undefined;
  /** Every change folded in came from a list (see {@link AddEventInfo.isInInitialList}). */
  fromList: boolean;
}

export interface HandlerDispatcherOptions {
  readonly name?: string;
  readonly logger?: Logger;
  /** Called with the number of pending keys whenever it changes. */
  readonly onPending?: (pendingKeys: number) => void;
}

export class HandlerDispatcher<T> {
  private readonly pending = new Map<string, Pending<T>>();
  private readonly logger: Logger;
  private readonly onPending: (n: number) => void;
  private running = false;
  private stopped = false;
  private initialMarked = false;
  private synced = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly handler: EventHandler<T>,
    options: HandlerDispatcherOptions = {},
  ) {
    this.logger = (options.logger ?? silentLogger).child({ handler: options.name ?? 'handler' });
    this.onPending = options.onPending ?? (() => {});
  }

  /** Keys with changes not yet delivered (the whole backlog: bounded by the number of keys). */
  get pendingKeys(): number {
    return this.pending.size;
  }

  /** True once everything enqueued before `markInitialEnqueued()` has been delivered. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Queues a change; `fromList` when a list (not a watch event) found it. */
  enqueue(change: DispatchedChange<T>, fromList = false): void {
    if (this.stopped) return;
    const entry = this.pending.get(change.key);
    if (entry === undefined) {
      switch (change.type) {
        case 'add':
          this.pending.set(change.key, { seen: undefined, deleted: undefined, current: change.object, fromList });
          break;
        case 'update':
          this.pending.set(change.key, { seen: change.old, deleted: undefined, current: change.object, fromList });
          break;
        case 'resync':
          this.pending.set(change.key, {
            seen: change.object,
            deleted: undefined,
            current: change.object,
            fromList,
          });
          break;
        case 'delete':
          this.pending.set(change.key, { seen: change.old, deleted: change.deleted, current: undefined, fromList });
          break;
      }
      this.onPending(this.pending.size);
      this.schedule();
      return;
    }
    // Already dirty: fold the change in place (the key keeps its place in line).
    if (!fromList && change.type !== 'resync') entry.fromList = false;
    switch (change.type) {
      case 'add':
      case 'update':
        entry.current = change.object;
        break;
      case 'resync':
        break; // the latest state is delivered anyway
      case 'delete':
        entry.deleted ??= change.deleted;
        entry.current = undefined;
        break;
    }
  }

  /** Marks the end of the initial snapshot; `hasSynced()` turns true once it has been delivered. */
  markInitialEnqueued(): void {
    this.initialMarked = true;
    if (!this.running && this.pending.size === 0) this.synced = true;
  }

  /** Resolves when nothing is pending and no call is in flight. */
  whenIdle(): Promise<void> {
    if (!this.running && this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Drops pending work; a call in flight finishes, nothing after it is delivered. */
  stop(): void {
    this.stopped = true;
    this.pending.clear();
    this.onPending(0);
    if (!this.running) this.wakeIdle();
  }

  private schedule(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    // A microtask, not a direct call: handlers never run inside the store update that caused them.
    queueMicrotask(() => {
      this.drain().catch((err: unknown) => this.logger.error({ err }, 'handler dispatch loop failed'));
    });
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped) {
        const next = this.pending.entries().next();
        if (next.done) break;
        const [key, entry] = next.value;
        this.pending.delete(key);
        this.onPending(this.pending.size);
        for (const call of this.calls(entry)) {
          if (this.stopped) break;
          try {
            // Only a returned promise is waited for: awaiting the plain return of the synchronous
            // handlers controllers register cost a microtask turn per call.
            const pending = call();
            if (pending !== undefined) await pending;
          } catch (err) {
            this.logger.error({ err, key }, 'event handler failed; continuing with the next change');
          }
        }
      }
    } finally {
      this.running = false;
      if (this.initialMarked && this.pending.size === 0) this.synced = true;
      this.wakeIdle();
    }
  }

  private calls(e: Pending<T>): (() => void | Promise<void>)[] {
    const h = this.handler;
    const out: (() => void | Promise<void>)[] = [];
    const info = e.fromList ? FROM_LIST : FROM_WATCH;
    if (e.deleted !== undefined) {
      const deleted = e.deleted;
      if (e.seen === undefined && h.add) out.push(() => h.add!(deletedObject(deleted), info));
      if (h.delete) out.push(() => h.delete!(deleted));
      const current = e.current;
      if (current !== undefined && h.add) out.push(() => h.add!(current, info));
    } else if (e.current !== undefined) {
      const current = e.current;
      const seen = e.seen;
      if (seen === undefined) {
        if (h.add) out.push(() => h.add!(current, info));
      } else if (h.update) {
        out.push(() => h.update!(seen, current));
      }
    }
    return out;
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
