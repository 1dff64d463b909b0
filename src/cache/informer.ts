/**
 * A shared informer: one watcher feeding one store, fanned out to any number of event handlers.
 * The informer is the store's only writer; handlers and readers get views. Each handler has its
 * own `HandlerDispatcher`, so a slow handler delays only itself and costs at most one pending entry
 * per key (see the delivery guarantee there).
 */
import { realClock, type Clock, type TimerHandle } from '../core/clock.js';
import { AbortedError, AlreadyStartedError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import { informerMetrics, type InformerMetrics } from './cache-metrics.js';
import { CacheSyncTimeoutError } from './errors.js';
import { HandlerDispatcher, type EventHandler } from './handler-dispatcher.js';
import type { IndexFunc } from './indexer.js';
import type { ListerWatcher } from './lister-watcher.js';
import { ObjectSizeEstimate } from './object-size-estimate.js';
import {
  DEFAULT_TRANSFORM,
  dropManagedFields,
  Store,
  type StoreDelta,
  type StoreOptions,
  type StoreReader,
  type StoreReplacement,
} from './store.js';
import { Watcher, type WatcherEvent, type WatcherHealth, type WatcherOptions } from './watcher.js';

/** Resync is off unless asked for: level-triggered controllers rarely need it. @defaultValue 0 (off) */
export const DEFAULT_RESYNC_PERIOD_MS = 0;

export interface SharedInformerOptions<T>
  extends StoreOptions<T>, Omit<WatcherOptions, 'metrics' | 'logger' | 'clock'> {
  /** @defaultValue realClock */
  readonly clock?: Clock;
  /** @defaultValue silentLogger */
  readonly logger?: Logger;
}

export interface EventHandlerOptions {
  /** Used in logs and the `handler` metric label. @defaultValue `handler-<n>` */
  readonly name?: string;
  /**
   * Every period, re-deliver every cached object as `update(obj, obj)` (keys already pending are
   * not doubled). 0 turns it off. @defaultValue {@link DEFAULT_RESYNC_PERIOD_MS}
   */
  readonly resyncPeriodMs?: number;
}

export interface HandlerRegistration {
  /** True once this handler has been given every object of the initial list. */
  hasSynced(): boolean;
  /** Keys with changes not yet delivered to this handler. */
  readonly pendingKeys: number;
  /** Stops delivery to this handler (a call in flight finishes). */
  remove(): void;
}

export interface InformerHealth extends WatcherHealth {
  readonly name: string;
  readonly objects: number;
  /** Estimated heap bytes per cached object (object-size-estimate.ts); undefined while empty. */
  readonly estimatedBytesPerObject: number | undefined;
  readonly handlers: readonly { readonly name: string; readonly pendingKeys: number; readonly synced: boolean }[];
}

interface HandlerEntry<T> {
  readonly name: string;
  readonly dispatcher: HandlerDispatcher<T>;
  readonly resyncPeriodMs: number;
  timer: TimerHandle | undefined;
}

export class SharedInformer<T extends KubeObject> {
  readonly name: string;
  private readonly store: Store<T>;
  private readonly sizeEstimate: ObjectSizeEstimate;
  private readonly watcher: Watcher<T>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly metrics: InformerMetrics;
  private readonly handlers = new Set<HandlerEntry<T>>();
  private replacement: StoreReplacement<T> | undefined;
  private synced = false;
  private syncWaiters = new Set<() => void>();
  private running = false;
  private started = false;
  private handlerCount = 0;

  constructor(lw: ListerWatcher<T>, options: SharedInformerOptions<T> = {}) {
    this.name = options.name ?? 'informer';
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ informer: this.name });
    this.metrics = informerMetrics(options.registry, this.name);
    this.store = new Store<T>({ ...options, logger: this.logger, metrics: this.metrics });
    this.sizeEstimate = new ObjectSizeEstimate(this.store, { clock: this.clock });
    this.watcher = new Watcher<T>(lw, (e) => this.onWatcherEvent(e), {
      ...options,
      // Only the default transform is applied as items are decoded: it is idempotent and cannot
      // throw, so the store running it again costs a property check. A user's transform runs once, in the store.
      ...((options.transform === undefined || options.transform === DEFAULT_TRANSFORM) && {
        listItemTransform: safeDropManagedFields,
      }),
      clock: this.clock,
      logger: options.logger,
      metrics: this.metrics,
    });
  }

  /** The cache: a read-only view that is always consistent with the indexes. */
  get reader(): StoreReader<T> {
    return this.store;
  }

  /** Adds an index; allowed at any time (built from the current contents). */
  addIndex(name: string, fn: IndexFunc<T>): void {
    this.store.addIndex(name, fn);
  }

  /**
   * Registers a handler. Registered after the initial list, it is first given every cached object
   * as `add` (so late handlers see the same world as early ones).
   */
  addEventHandler(handler: EventHandler<T>, options: EventHandlerOptions = {}): HandlerRegistration {
    const name = options.name ?? `handler-${++this.handlerCount}`;
    const dispatcher = new HandlerDispatcher<T>(handler, {
      name,
      logger: this.logger,
      onPending: (n) => this.metrics.setPending(name, n),
    });
    const entry: HandlerEntry<T> = {
      name,
      dispatcher,
      resyncPeriodMs: options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS,
      timer: undefined,
    };
    this.handlers.add(entry);
    if (this.started && !this.running) {
      dispatcher.stop(); // the informer has stopped: nothing will be delivered any more
    } else if (this.synced) {
      for (const key of this.store.keys()) dispatcher.enqueue({ type: 'add', key, object: this.store.get(key)! }, true);
      dispatcher.markInitialEnqueued();
    }
    if (this.running) this.armResync(entry);
    return {
      hasSynced: () => dispatcher.hasSynced(),
      get pendingKeys() {
        return dispatcher.pendingKeys;
      },
      remove: () => {
        entry.timer?.cancel();
        dispatcher.stop();
        this.handlers.delete(entry);
      },
    };
  }

  /** True once the first list is in the store. */
  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Resolves once the first list is in the store. Rejects with `AbortedError` when `signal` aborts
   * and with `CacheSyncTimeoutError` after `timeoutMs` (if given).
   */
  waitForSync(signal: AbortSignal, timeoutMs?: number): Promise<void> {
    return waitFor(() => this.synced, this.syncWaiters, signal, this.clock, timeoutMs, `informer ${this.name}`);
  }

  /** Runs the watch until `signal` aborts, then stops delivery to handlers and resolves. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new AlreadyStartedError(`informer ${this.name} was already started`);
    this.started = true;
    this.running = true;
    for (const h of this.handlers) this.armResync(h);
    const detachSizeEstimate = this.metrics.collectBytesPerObject(() => this.sizeEstimate.bytesPerObject());
    try {
      await this.watcher.start(signal);
    } finally {
      detachSizeEstimate();
      this.running = false;
      for (const h of this.handlers) {
        h.timer?.cancel();
        h.dispatcher.stop();
      }
    }
  }

  health(): InformerHealth {
    return {
      ...this.watcher.health(),
      name: this.name,
      objects: this.store.size,
      estimatedBytesPerObject: this.sizeEstimate.bytesPerObject(),
      handlers: [...this.handlers].map((h) => ({
        name: h.name,
        pendingKeys: h.dispatcher.pendingKeys,
        synced: h.dispatcher.hasSynced(),
      })),
    };
  }

  /** @internal For tests and orderly shutdown: resolves when every handler has caught up. */
  async whenHandlersIdle(): Promise<void> {
    await Promise.all([...this.handlers].map((h) => h.dispatcher.whenIdle()));
  }

  private onWatcherEvent(e: WatcherEvent<T>): void {
    switch (e.type) {
      case 'LIST_BEGIN':
        this.replacement = this.store.beginReplace();
        return;
      case 'LIST_PAGE':
        if (this.replacement) this.dispatch(this.replacement.addPage(e.items), true);
        break;
      case 'LIST_DONE': {
        const r = this.replacement;
        this.replacement = undefined;
        if (r) this.dispatch(r.commitLazily(), true);
        this.metrics.setObjects(this.store.size);
        if (!this.synced) {
          this.synced = true;
          for (const h of this.handlers) h.dispatcher.markInitialEnqueued();
          for (const w of this.syncWaiters) w();
          this.syncWaiters.clear();
        }
        return;
      }
      case 'ADDED':
      case 'MODIFIED': {
        // undefined: the object was invalid, left out and counted by the store.
        const d = this.store.upsert(e.object);
        if (d) this.dispatch([d]);
        break;
      }
      case 'DELETED': {
        const d = this.store.delete(e.object);
        if (d) this.dispatch([d]);
        break;
      }
    }
    this.metrics.setObjects(this.store.size);
  }

  /**
   * Each delta to every handler in turn (one pass: a first sync's deltas are made as they are
   * iterated). `fromList`: the deltas come from a list, not a watch event (handlers' `isInInitialList`).
   */
  private dispatch(deltas: Iterable<StoreDelta<T>>, fromList = false): void {
    // No handler: a first sync's deltas need not even be made.
    if (this.handlers.size === 0) return;
    for (const d of deltas) for (const h of this.handlers) h.dispatcher.enqueue(d, fromList);
  }

  private armResync(h: HandlerEntry<T>): void {
    if (!(h.resyncPeriodMs > 0)) return;
    h.timer?.cancel();
    h.timer = this.clock.setTimer(h.resyncPeriodMs, () => {
      if (!this.running || !this.handlers.has(h)) return;
      // Only once synced: a resync before the first list would announce nothing useful.
      if (this.synced)
        for (const key of this.store.keys())
          h.dispatcher.enqueue({ type: 'resync', key, object: this.store.get(key)! });
      this.armResync(h);
    });
  }
}

/** Shared by informers and the factory: wait until `done()`, honouring abort and timeout. */
export function waitFor(
  done: () => boolean,
  waiters: Set<() => void>,
  signal: AbortSignal,
  clock: Clock,
  timeoutMs: number | undefined,
  what: string,
): Promise<void> {
  if (done()) return Promise.resolve();
  if (signal.aborted)
    return Promise.reject(new AbortedError(`waiting for ${what} to sync aborted`, { cause: signal.reason }));
  return new Promise<void>((resolve, reject) => {
    const cleanup = (): void => {
      waiters.delete(onDone);
      signal.removeEventListener('abort', onAbort);
      timer?.cancel();
    };
    const onDone = (): void => {
      if (!done()) return;
      cleanup();
      resolve();
    };
    const onAbort = (): void => {
      cleanup();
      reject(new AbortedError(`waiting for ${what} to sync aborted`, { cause: signal.reason }));
    };
    const timer =
      timeoutMs === undefined
        ? undefined
        : clock.setTimer(timeoutMs, () => {
            cleanup();
            reject(new CacheSyncTimeoutError(what, timeoutMs));
          });
    waiters.add(onDone);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The default transform, for items as they are decoded: one whose metadata is not an object is left to the store to judge. */
function safeDropManagedFields(item: KubeObject): KubeObject {
  return typeof item.metadata === 'object' && item.metadata !== null ? dropManagedFields(item) : item;
}
