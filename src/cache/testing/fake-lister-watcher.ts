/**
 * A scripted, in-memory stand-in for one API server resource, for tests of anything built on a
 * `ListerWatcher`: it keeps objects and an event history with resourceVersions, serves paged
 * snapshot lists and watches that replay from a resourceVersion, and lets a test compact history
 * (410 Gone), fail the next calls, close, break or silence live watches, and send bookmarks.
 *
 * Objects handed out are deep copies, as a decoder would produce, so consumers may own them.
 * ResourceVersions are decimal strings here, but consumers must treat them as opaque.
 */
import { ApiError } from '../../client/api-error.js';
import { keyOf, type KubeObject } from '../../core/object-key.js';
import { omitUndefined } from '../../core/omit-undefined.js';
import {
  INITIAL_EVENTS_END_ANNOTATION,
  type ListerListOptions,
  type ListerListPage,
  type ListerWatcher,
  type ListerWatchEvent,
  type ListerWatchOptions,
} from '../lister-watcher.js';

export interface FakeListerWatcherOptions {
  /**
   * Serve `resourceVersion=0` lists in one page whatever the limit, as the API server's watch cache
   * does (before Kubernetes 1.31's paginated watch cache). @defaultValue true
   */
  readonly ignoreLimitForRv0?: boolean;
  /**
   * Declare watch-list support (`watchList: true` on the lister-watcher) and answer a
   * `sendInitialEvents` watch as a current server does ('supported': ADDED for every object, then
   * the initial-events-end bookmark, then changes) or as one from before watch-list does
   * ('rejected': 422 Invalid). Absent: the lister-watcher does not declare support.
   */
  readonly watchList?: 'supported' | 'rejected';
}

type Call = 'list' | 'watch';

interface LiveWatch<T> {
  queue: ListerWatchEvent<T>[];
  wake: (() => void) | undefined;
  ended: boolean;
  error: unknown;
  silent: boolean;
}

export class FakeListerWatcher<T extends KubeObject> implements ListerWatcher<T> {
  /** Options of every list call, in order (signal left out). */
  readonly listCalls: Omit<ListerListOptions, 'signal'>[] = [];
  /** Options of every watch call, in order (signal left out). */
  readonly watchCalls: Omit<ListerWatchOptions, 'signal'>[] = [];

  private readonly objects = new Map<string, T>();
  private history: { rv: number; event: ListerWatchEvent<T> }[] = [];
  private rv = 1;
  private compactedRv = 0;
  private readonly failures: Record<Call, unknown[]> = { list: [], watch: [] };
  private readonly live = new Set<LiveWatch<T>>();
  private readonly snapshots = new Map<string, { items: T[]; rv: number; offset: number }>();
  private nextToken = 1;
  private silenceNext = false;
  private readonly ignoreLimitForRv0: boolean;
  private readonly watchListMode: 'supported' | 'rejected' | undefined;
  readonly watchList: boolean;

  constructor(initial: readonly T[] = [], options: FakeListerWatcherOptions = {}) {
    this.ignoreLimitForRv0 = options.ignoreLimitForRv0 ?? true;
    this.watchListMode = options.watchList;
    this.watchList = options.watchList !== undefined;
    for (const obj of initial) this.create(obj);
  }

  /** The current resourceVersion of the collection. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  /** Live (open) watches. */
  get openWatches(): number {
    return this.live.size;
  }

  /** Current objects, as the server holds them. */
  current(): T[] {
    return [...this.objects.values()].map((o) => structuredClone(o));
  }

  create(obj: T): T {
    return this.write('ADDED', obj);
  }

  /** Replaces the object with the same key (creating it if absent, as an apply would). */
  update(obj: T): T {
    return this.write(this.objects.has(keyOf(obj)) ? 'MODIFIED' : 'ADDED', obj);
  }

  delete(key: string): void {
    const obj = this.objects.get(key);
    if (!obj) throw new Error(`fake: no object ${key}`);
    this.objects.delete(key);
    const deleted = structuredClone(obj);
    deleted.metadata = { ...deleted.metadata, resourceVersion: String(++this.rv) };
    this.record({ type: 'DELETED', object: deleted });
  }

  /**
   * Forgets history up to the current resourceVersion (as etcd compaction does): watches from an
   * older resourceVersion and continue tokens of older lists now fail with 410 Gone.
   */
  compact(): void {
    this.compactedRv = this.rv;
    this.history = [];
  }

  /** The next `times` calls of `call` throw `err` (queued after earlier scripted failures). */
  failNext(call: Call, err: unknown, times = 1): void {
    for (let i = 0; i < times; i++) this.failures[call].push(err);
  }

  /** Ends every open watch cleanly, as a server timeout does. */
  closeWatches(): void {
    for (const w of this.live) {
      w.ended = true;
      w.wake?.();
    }
  }

  /** Makes every open watch throw `err` (a reset connection, or an ERROR event). */
  breakWatches(err: unknown): void {
    for (const w of this.live) {
      w.error = err;
      w.wake?.();
    }
  }

  /** Open watches (and the next one opened, if `includeNext`) stay connected but deliver nothing. */
  silenceWatches(includeNext = false): void {
    for (const w of this.live) w.silent = true;
    this.silenceNext = includeNext;
  }

  /** Sends a BOOKMARK with the current resourceVersion to every open watch. */
  bookmark(): void {
    this.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(this.rv) } } });
  }

  list(opts: ListerListOptions): Promise<ListerListPage<T>> {
    const { signal: _signal, ...rest } = opts;
    this.listCalls.push(rest);
    const failure = this.failures.list.shift();
    if (failure !== undefined) return Promise.reject(failure);
    let snap: { items: T[]; rv: number; offset: number };
    if (opts.continue !== undefined) {
      const found = this.snapshots.get(opts.continue);
      if (!found || found.rv < this.compactedRv) return Promise.reject(gone('continue token expired'));
      snap = found;
      this.snapshots.delete(opts.continue);
    } else {
      snap = {
        items: [...this.objects.values()].sort((a, b) => keyOf(a).localeCompare(keyOf(b))),
        rv: this.rv,
        offset: 0,
      };
    }
    const unlimited =
      opts.limit === undefined ||
      (this.ignoreLimitForRv0 && opts.resourceVersion === '0' && opts.continue === undefined);
    const end = unlimited ? snap.items.length : Math.min(snap.items.length, snap.offset + opts.limit!);
    const items = snap.items.slice(snap.offset, end).map((o) => structuredClone(o));
    let token: string | undefined;
    if (end < snap.items.length) {
      token = `c${this.nextToken++}`;
      this.snapshots.set(token, { items: snap.items, rv: snap.rv, offset: end });
    }
    return Promise.resolve({ items, resourceVersion: String(snap.rv), ...omitUndefined({ continue: token }) });
  }

  watch(opts: ListerWatchOptions): AsyncIterable<ListerWatchEvent<T>> {
    const { signal, ...rest } = opts;
    this.watchCalls.push(rest);
    const failure = this.failures.watch.shift();
    if (opts.sendInitialEvents) {
      const initialFailure =
        failure ??
        (this.watchListMode === 'supported'
          ? undefined
          : new ApiError({ status: 422, reason: 'Invalid', message: 'resourceVersionMatch is forbidden for watch' }));
      return { [Symbol.asyncIterator]: () => this.stream(undefined, signal, initialFailure, true) };
    }
    return { [Symbol.asyncIterator]: () => this.stream(opts.resourceVersion, signal, failure) };
  }

  private async *stream(
    resourceVersion: string | undefined,
    signal: AbortSignal | undefined,
    failure: unknown,
    initialEventsEnd = false,
  ): AsyncGenerator<ListerWatchEvent<T>> {
    if (failure !== undefined) throw failure;
    let queue: ListerWatchEvent<T>[];
    if (initialEventsEnd) {
      queue = [...this.objects.values()].map((object): ListerWatchEvent<T> => ({ type: 'ADDED', object }));
      queue.push({
        type: 'BOOKMARK',
        object: {
          metadata: { resourceVersion: String(this.rv), annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } },
        },
      });
    } else if (resourceVersion === undefined || resourceVersion === '0') {
      // As the API server: no resourceVersion (or "any") starts with synthetic ADDED events for what exists.
      queue = [...this.objects.values()].map((object) => ({ type: 'ADDED', object }));
    } else {
      const from = Number(resourceVersion);
      if (!Number.isInteger(from))
        throw new ApiError({
          status: 400,
          reason: 'BadRequest',
          message: `invalid resourceVersion ${JSON.stringify(resourceVersion)}`,
        });
      if (from < this.compactedRv) throw gone(`too old resource version: ${resourceVersion} (${this.compactedRv})`);
      queue = this.history.filter((h) => h.rv > from).map((h) => h.event);
    }
    const w: LiveWatch<T> = { queue, wake: undefined, ended: false, error: undefined, silent: this.silenceNext };
    this.silenceNext = false;
    this.live.add(w);
    const onAbort = (): void => {
      w.ended = true;
      w.wake?.();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (w.error !== undefined) throw w.error;
        if (w.ended) return;
        const next = w.silent ? undefined : w.queue.shift();
        if (next) {
          yield structuredClone(next);
          continue;
        }
        await new Promise<void>((resolve) => (w.wake = resolve));
        w.wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.live.delete(w);
    }
  }

  private write(type: 'ADDED' | 'MODIFIED', obj: T): T {
    const stored = structuredClone(obj);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.rv) };
    this.objects.set(keyOf(stored), stored);
    this.record({ type, object: structuredClone(stored) });
    return structuredClone(stored);
  }

  private record(event: ListerWatchEvent<T>): void {
    this.history.push({ rv: this.rv, event });
    this.push(event);
  }

  private push(event: ListerWatchEvent<T>): void {
    for (const w of this.live) {
      w.queue.push(event);
      w.wake?.();
    }
  }
}

/** A 410 Gone as the client reports it. */
export function gone(message = 'too old resource version'): ApiError {
  return new ApiError({ status: 410, reason: 'Expired', message });
}

/** A plain API failure (500 by default) for scripting errors. */
export function apiError(status = 500, message = 'scripted failure'): ApiError {
  return new ApiError({ status, message });
}
