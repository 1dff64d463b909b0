/**
 * The informer's store: objects by key (`namespace/name`, or `name` when cluster-scoped) with
 * secondary indexes kept consistent on every change. One writer (the informer) owns it; everyone
 * else gets the read-only `StoreReader` view.
 *
 * Objects are plain JSON exactly as the API server returned them (after the ingest transform, by
 * default minus `metadata.managedFields`) and are shared, not copied: treat them as read-only. Set
 * `freeze: true` in development to have accidental writes throw. To hold more objects in less heap,
 * strings that repeat across objects point at one pooled copy (string-pool.ts) and the objects are
 * filed by namespace, then name, with no key string of their own (store-contents.ts); neither is
 * visible to readers.
 *
 * Every object is checked on its way in. One that cannot be stored (not an object, no
 * `metadata.name`, a namespace that is not a string, or the transform threw) is left out, counted
 * (`cache_invalid_objects_total`) and logged without its content; the rest of its list page is
 * stored as usual. A left-out object is never reported as deleted: on a relist, when its key is
 * known (or its uid matches a stored object) the stored version is kept; when it cannot be
 * identified at all, that relist withholds all of its deletions, because a controller told that a
 * live object is gone may act on it (clean up, recreate), while a stale entry only waits for the
 * watch's DELETED event or the next clean relist.
 */
import { objectKey, type KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { noopInformerMetrics, type InformerMetrics } from './cache-metrics.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { NAMESPACE_INDEX, namespaceIndexFunc, type IndexFunc } from './indexer.js';
import { tombstone, type Tombstone } from './tombstone.js';
import { OperatorRuntimeError } from '../core/errors.js';
import { IndexError } from './errors.js';
import { shareRepeatedStrings, StringPool } from './string-pool.js';
import { StoreContents, storedKey } from './store-contents.js';

/** Applied to every object on its way in (list pages and watch events alike). May mutate and return it. */
export type Transform<T> = (obj: T) => T;

/**
 * Drops `metadata.managedFields`: typically a third or more of an object's JSON and never needed by
 * a controller (client-go's and controller-runtime's default transform drops it too, and nothing
 * else). The object was just decoded and is owned by the cache, so it is not copied; only
 * `metadata` is rebuilt, because `delete` would switch it to V8's slow dictionary mode, which costs
 * more heap per object than it saves (measured: ~890 vs ~530 bytes per small object). The rebuilt
 * metadata has the same own properties in the same order and `Object.prototype` as its prototype.
 */
export function dropManagedFields<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (meta && 'managedFields' in meta) obj.metadata = copyWithout(meta, 'managedFields');
  return obj;
}

/**
 * A plain object constructor per property count. V8 sizes the objects a constructor makes by
 * watching its first few (slack tracking), so each one's objects get exactly their fields
 * in-object; an object literal or `{...rest}` keeps 4 in-object and puts the rest in a separate
 * property array (measured: metadata of 6 fields, 96 → 72 bytes).
 */
const sizedObjectConstructors: (new () => Record<string, unknown>)[] = [];

function sizedObject(fields: number): Record<string, unknown> {
  let make = sizedObjectConstructors[fields];
  if (make === undefined) {
    const fn = function (): void {};
    // Instances must be plain objects to readers: Object.prototype, as JSON.parse's.
    fn.prototype = Object.prototype;
    make = fn as unknown as new () => Record<string, unknown>;
    sizedObjectConstructors[fields] = make;
  }
  return new make();
}

function copyWithout<M extends object>(src: M, dropped: string): M {
  const keys = Object.keys(src).filter((k) => k !== dropped);
  const out = sizedObject(keys.length);
  const from = src as Record<string, unknown>;
  for (const k of keys) {
    // An own "__proto__" key (JSON.parse makes one) must stay a key, not set the prototype.
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: from[k], enumerable: true, writable: true, configurable: true });
    else out[k] = from[k];
  }
  return out as M;
}

/** The ingest transform used when none is given. @defaultValue {@link dropManagedFields} */
export const DEFAULT_TRANSFORM = dropManagedFields;

/**
 * How a relist (after 410) lands in the store. `'atomic'`: readers see the old contents until the
 * whole list has arrived, then everything at once; the objects that changed are held aside
 * meanwhile (peak ≈ (1 + fraction changed) × steady). `'incremental'`: each page's new and changed
 * objects are applied (and handed to handlers) as the page arrives, and only the deletions wait
 * for the end; every object still only moves forward in time, but readers may see some objects
 * from the new list next to older ones, and the peak stays near 1× even when everything changed.
 * Either way the first sync (an empty store) costs no second copy: in atomic mode it is built out
 * of readers' sight as the store's next contents and swapped in whole.
 * @defaultValue 'atomic'
 */
export const DEFAULT_RELIST_MODE = 'atomic';

export interface StoreOptions<T> {
  /** Ingest transform; `null` keeps objects untouched. @defaultValue {@link DEFAULT_TRANSFORM} */
  readonly transform?: Transform<T> | null;
  /** User indexes by name, in addition to the built-in {@link NAMESPACE_INDEX}. @defaultValue {} */
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
  /** Deep-freeze objects on ingest so mutations throw (costs time; for development). @defaultValue false */
  readonly freeze?: boolean;
  /** @defaultValue {@link DEFAULT_RELIST_MODE} */
  readonly relistMode?: 'atomic' | 'incremental';
  readonly logger?: Logger;
  /** @internal Shared with the informer that owns this store (counts objects left out). */
  readonly metrics?: InformerMetrics;
}

/** Why an object from the API server was left out of the store. */
export type InvalidObjectReason = 'not-an-object' | 'no-name' | 'bad-namespace' | 'transform-threw';

/** Where a left-out object came from. */
export type InvalidObjectSource = 'list' | 'watch';

type Checked<T> =
  | { readonly ok: true; readonly key: string; readonly obj: T }
  | {
      readonly ok: false;
      readonly reason: InvalidObjectReason;
      readonly key: string | undefined;
      readonly uid: string | undefined;
    };

/** A change the store made, as handed to event handlers. */
export type StoreDelta<T> =
  | { readonly type: 'add'; readonly key: string; readonly object: T }
  | { readonly type: 'update'; readonly key: string; readonly old: T; readonly object: T }
  | { readonly type: 'delete'; readonly key: string; readonly old: T; readonly deleted: T | Tombstone<T> };

/** The read side of a store: cheap views over the objects, never copies. */
export interface StoreReader<T> {
  readonly size: number;
  get(key: string): T | undefined;
  has(key: string): boolean;
  keys(): string[];
  list(): T[];
  /** Objects indexed under `value` (the built-in `namespace` index included). Throws `IndexError` for an unknown index. */
  byIndex(index: string, value: string): T[];
  indexKeys(index: string, value: string): string[];
  indexValues(index: string): string[];
  hasIndex(index: string): boolean;
}

export class Store<T extends KubeObject> implements StoreReader<T> {
  private contents: StoreContents<T>;
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly transform: Transform<T> | null;
  private readonly freeze: boolean;
  private readonly relistMode: 'atomic' | 'incremental';
  private readonly strings = new StringPool();
  private replacing: StoreReplacement<T> | undefined;
  private readonly logger: Logger;
  private readonly metrics: InformerMetrics;
  private invalid = 0;

  constructor(options: StoreOptions<T> = {}) {
    const logger = options.logger ?? silentLogger;
    this.logger = logger;
    this.metrics = options.metrics ?? noopInformerMetrics;
    this.transform = options.transform === undefined ? (DEFAULT_TRANSFORM as Transform<T>) : options.transform;
    this.freeze = options.freeze ?? false;
    this.relistMode = options.relistMode ?? DEFAULT_RELIST_MODE;
    for (const [name, fn] of Object.entries(options.indexers ?? {})) this.checkIndexName(name, fn);
    this.contents = this.emptyContents();
  }

  get size(): number {
    return this.contents.size;
  }

  /** Objects left out since the store was made, because they could not be stored (see the top of this file). */
  get invalidObjects(): number {
    return this.invalid;
  }

  get(key: string): T | undefined {
    return this.contents.get(key);
  }

  has(key: string): boolean {
    return this.contents.get(key) !== undefined;
  }

  keys(): string[] {
    return [...this.contents.keys()];
  }

  list(): T[] {
    return this.contents.list();
  }

  /** @internal The live object iterator (no array copy); do not change the store while iterating. */
  objectIterator(): IterableIterator<T> {
    return this.contents.objects();
  }

  byIndex(index: string, value: string): T[] {
    return this.contents.byIndex(index, value);
  }

  indexKeys(index: string, value: string): string[] {
    return this.contents.indexKeys(index, value);
  }

  indexValues(index: string): string[] {
    return this.contents.indexValues(index);
  }

  hasIndex(index: string): boolean {
    return this.contents.hasIndex(index);
  }

  /** Adds an index at any time; it is built from the current contents at once (and from a relist's, if one is filling). */
  addIndex(name: string, fn: IndexFunc<T>): void {
    this.checkIndexName(name, fn);
    this.contents.addIndex(name, fn);
    this.replacing?.addIndex(name, fn);
  }

  /** Runs the ingest transform and, if enabled, freezes the result. */
  ingest(obj: T): T {
    return this.seal(this.transformOnly(obj));
  }

  /** @internal */
  transformOnly(obj: T): T {
    return this.transform ? this.transform(obj) : obj;
  }

  /** @internal */
  seal(obj: T): T {
    return this.freeze ? deepFreeze(obj) : obj;
  }

  /**
   * Adds or replaces an object (from ADDED or MODIFIED), returning what changed; `undefined` when
   * the object was left out as invalid (a stored version of it stays as it was).
   */
  upsert(raw: T): StoreDelta<T> | undefined {
    const c = this.check(raw, 'watch');
    if (!c.ok) return undefined;
    return this.put(c.key, this.seal(c.obj));
  }

  /** Removes an object (from DELETED); `undefined` when the store did not hold it or it cannot be identified. */
  delete(raw: T): StoreDelta<T> | undefined {
    const c = this.check(raw, 'watch');
    // Only the key is needed to delete: an object whose transform threw still goes.
    if (c.key === undefined) return undefined;
    const old = this.contents.delete(c.key);
    if (old === undefined) return undefined;
    return { type: 'delete', key: c.key, old, deleted: c.ok ? this.seal(c.obj) : tombstone(c.key, old) };
  }

  /**
   * @internal Transforms and validates one incoming object; an invalid one is counted and logged
   * (reason and key only: its content may be a Secret's data). A valid one has its repeated
   * strings pointed at the store's pooled copies (string-pool.ts).
   */
  check(raw: unknown, source: InvalidObjectSource): Checked<T> {
    const before = addressOf(raw);
    if (!before.ok) return this.reject(before.reason, source, undefined, before.uid);
    let obj: T;
    try {
      obj = this.transformOnly(raw as T);
    } catch {
      return this.reject('transform-threw', source, before.key, before.uid);
    }
    const after = obj === raw ? before : addressOf(obj);
    if (!after.ok) return this.reject(after.reason, source, before.key, before.uid);
    try {
      shareRepeatedStrings(obj, this.strings);
    } catch {
      // A frozen (or otherwise read-only) object from the source: it keeps its own copies.
    }
    return { ok: true, key: after.key, obj };
  }

  private reject(
    reason: InvalidObjectReason,
    source: InvalidObjectSource,
    key: string | undefined,
    uid: string | undefined,
  ): Checked<T> {
    this.invalid++;
    this.metrics.invalidObject(source);
    this.logger.warn({ reason, source, ...omitUndefined({ key }) }, 'object left out of the cache');
    return { ok: false, reason, key, uid };
  }

  /** @internal The key of the stored object with this uid (a linear scan: only for invalid list items). */
  keyOfUid(uid: string): string | undefined {
    for (const obj of this.contents.objects()) if (obj.metadata?.uid === uid) return storedKey(obj);
    return undefined;
  }

  /**
   * @internal The informer's relist (its `StoreReplacement` is internal too).
   * Starts replacing the whole contents with a fresh list, fed page by page, returning deltas on
   * `commit()` (see {@link DEFAULT_RELIST_MODE} for what readers see meanwhile in each mode).
   *
   * Memory, atomic mode: when the store is empty (the first sync, on list or watch-list) there is
   * nothing to keep serving but emptiness, so the list is built directly as the store's next
   * contents, out of readers' sight, and swapped in at `commit()`: the peak is the steady state
   * plus one page. Otherwise the store keeps serving the old contents until `commit()`, which swaps
   * synchronously; only the set of stored objects not yet seen in the list (shrinking as pages
   * arrive) and the objects that differ are held aside; an incoming object whose resourceVersion
   * equals the stored one is dropped at once. The peak is therefore about (1 + fraction changed) ×
   * steady: ~1.2× for a typical relist after compaction, 2× only when every object changed while
   * we were away (both versions must coexist until the atomic swap). Starting a new replacement
   * abandons an unfinished one.
   */
  beginReplace(): StoreReplacement<T> {
    this.replacing?.abandon();
    const fill = this.relistMode === 'atomic' && this.contents.size === 0 ? this.emptyContents() : undefined;
    const r: StoreReplacement<T> = new StoreReplacement<T>(
      this,
      (outcome) => this.commitReplace(r, outcome),
      this.relistMode === 'incremental' ? (key, obj) => this.putFromList(key, obj) : undefined,
      fill,
    );
    this.replacing = r;
    return r;
  }

  private emptyContents(): StoreContents<T> {
    const contents = new StoreContents<T>((index, key, err) =>
      this.logger.error({ index, key, err }, 'index function threw; object left out of the index'),
    );
    for (const [name, fn] of this.indexers) contents.addIndex(name, fn);
    return contents;
  }

  /** The built-in namespace index is served by the contents; any other name is the user's. */
  private checkIndexName(name: string, fn: IndexFunc<T>): void {
    if (name === NAMESPACE_INDEX) {
      if (fn !== namespaceIndexFunc) throw new IndexError(name, 'already registered with a different function');
      return;
    }
    const existing = this.indexers.get(name);
    if (existing !== undefined && existing !== fn)
      throw new IndexError(name, 'already registered with a different function');
    this.indexers.set(name, fn);
  }

  private put(key: string, obj: T): StoreDelta<T> {
    const old = this.contents.set(key, obj);
    return old === undefined ? { type: 'add', key, object: obj } : { type: 'update', key, old, object: obj };
  }

  /**
   * A listed object replacing a stored one. A different uid under the same key means the object was
   * deleted and re-created while we were away: handlers get that as a delete (tombstone) and an add,
   * as the watch would have told them, not as an update across two different objects.
   */
  private putFromList(key: string, obj: T): StoreDelta<T>[] {
    const old = this.contents.get(key);
    const oldUid = old?.metadata?.uid;
    const newUid = obj.metadata?.uid;
    if (old === undefined || oldUid === undefined || newUid === undefined || oldUid === newUid)
      return [this.put(key, obj)];
    this.contents.delete(key);
    return [{ type: 'delete', key, old, deleted: tombstone(key, old) }, this.put(key, obj)];
  }

  private commitReplace(r: StoreReplacement<T>, outcome: ReplaceOutcome<T>): Iterable<StoreDelta<T>> {
    if (this.replacing !== r)
      throw new OperatorRuntimeError('ERR_REPLACE_ABANDONED', 'this replacement was superseded by a newer one');
    this.replacing = undefined;
    if ('filled' in outcome) {
      // The first sync: the new contents were built aside; every object in them is an add.
      const filled = outcome.filled;
      this.contents = filled;
      return mapIterable(filled.objects(), (obj): StoreDelta<T> => ({ type: 'add', key: storedKey(obj), object: obj }));
    }
    let unseen = outcome.unseen;
    const deltas: StoreDelta<T>[] = [];
    if (outcome.unidentified > 0 && unseen.size > 0) {
      // Any unseen object may be one of the items we could not read: none is reported as deleted.
      this.logger.warn(
        { unidentified: outcome.unidentified, withheld: unseen.size },
        'relist had items that could not be identified; its deletions are withheld',
      );
      unseen = new Set();
    }
    // Deleted while we were not watching: the final state is unknown, so handlers get a tombstone.
    for (const gone of unseen) {
      const key = storedKey(gone);
      if (this.contents.get(key) !== gone) continue;
      this.contents.delete(key);
      deltas.push({ type: 'delete', key, old: gone, deleted: tombstone(key, gone) });
    }
    for (const [key, obj] of outcome.changed) for (const d of this.putFromList(key, obj)) deltas.push(d);
    return deltas;
  }
}

/** What a finished replacement hands back to its store. */
type ReplaceOutcome<T extends KubeObject> =
  | { readonly filled: StoreContents<T> }
  | {
      readonly changed: Map<string, T>;
      readonly unseen: Set<T>;
      readonly unidentified: number;
    };

function* mapIterable<A, B>(items: Iterable<A>, f: (a: A) => B): IterableIterator<B> {
  for (const a of items) yield f(a);
}

/** A relist in progress; see {@link Store.beginReplace}. */
export class StoreReplacement<T extends KubeObject> {
  // Stored objects not (yet) matched by the new list: whatever is left at commit was deleted.
  // Objects, not keys: the store holds no key strings to share.
  private unseen: Set<T> | undefined;
  private received = 0;
  // Invalid items matching no stored object: their deletion cannot be ruled out for any key.
  private unidentified = 0;
  private changed: Map<string, T> | undefined = new Map();
  private done = false;

  /** @internal */
  constructor(
    private readonly store: Store<T>,
    private readonly onCommit: (outcome: ReplaceOutcome<T>) => Iterable<StoreDelta<T>>,
    private readonly applyNow: ((key: string, obj: T) => StoreDelta<T>[]) | undefined,
    // Atomic relist into an empty store: the list is built here, as the store's next contents.
    private fill: StoreContents<T> | undefined,
  ) {
    this.unseen = fill ? new Set() : new Set(store.objectIterator());
  }

  /** Objects received in this relist so far. */
  get count(): number {
    return this.received;
  }

  /** @internal A user index added mid-relist must cover the contents being filled too. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    this.fill?.addIndex(name, fn);
  }

  /**
   * Takes one page; returns the deltas applied at once (incremental mode), else nothing. Invalid
   * items are left out (see the top of this file); the others are taken as usual.
   */
  addPage(items: readonly T[]): StoreDelta<T>[] {
    const applied: StoreDelta<T>[] = [];
    const unseen = this.unseen;
    const changed = this.changed;
    if (this.done || !unseen || !changed)
      throw new OperatorRuntimeError('ERR_REPLACE_DONE', 'replacement already committed or abandoned');
    const fill = this.fill;
    for (const raw of items) {
      const c = this.store.check(raw, 'list');
      if (!c.ok) {
        if (fill) continue; // nothing stored to keep, nothing to withhold
        // Keep whatever version we have: never a delete for an object we only failed to read.
        const key = c.key ?? (c.uid !== undefined ? this.store.keyOfUid(c.uid) : undefined);
        if (key !== undefined) {
          const current = this.store.get(key);
          if (current !== undefined) unseen.delete(current);
          changed.delete(key);
        } else this.unidentified++;
        continue;
      }
      const { key, obj } = c;
      this.received++;
      if (fill) {
        // A later event for the same key (watch-list: MODIFIED before the bookmark) wins.
        fill.set(key, this.store.seal(obj));
        continue;
      }
      const current = this.store.get(key);
      if (current !== undefined) unseen.delete(current);
      const rv = obj.metadata?.resourceVersion;
      // resourceVersion is opaque: equal strings mean the same version, nothing else is inferred.
      if (current !== undefined && rv !== undefined && current.metadata?.resourceVersion === rv) {
        changed.delete(key);
        continue;
      }
      if (this.applyNow) for (const d of this.applyNow(key, this.store.seal(obj))) applied.push(d);
      else changed.set(key, this.store.seal(obj));
    }
    return applied;
  }

  /** Swaps the new contents in (or, incremental, applies the deletions) and returns the deltas; deletes carry tombstones. */
  commit(): StoreDelta<T>[] {
    return [...this.commitLazily()];
  }

  /**
   * @internal As `commit()`, but the deltas of a first sync are made as they are iterated (one per
   * object: an array of them would be a second record per object at the peak). The store has
   * swapped when this returns; iterate before the store changes again.
   */
  commitLazily(): Iterable<StoreDelta<T>> {
    const unseen = this.unseen;
    const changed = this.changed;
    if (this.done || !unseen || !changed)
      throw new OperatorRuntimeError('ERR_REPLACE_DONE', 'replacement already committed or abandoned');
    const fill = this.fill;
    this.abandon();
    return this.onCommit(fill ? { filled: fill } : { changed, unseen, unidentified: this.unidentified });
  }

  /** @internal Frees the buffered objects of an unfinished relist. */
  abandon(): void {
    this.done = true;
    this.unseen = undefined;
    this.changed = undefined;
    this.fill = undefined;
  }
}

/** The store key of an object, or why it has none. */
function addressOf(
  v: unknown,
):
  | { ok: true; key: string; uid: string | undefined }
  | { ok: false; reason: InvalidObjectReason; uid: string | undefined } {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return { ok: false, reason: 'not-an-object', uid: undefined };
  const meta = (v as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
    return { ok: false, reason: 'no-name', uid: undefined };
  const { name, namespace, uid } = meta as { name?: unknown; namespace?: unknown; uid?: unknown };
  const uidString = typeof uid === 'string' && uid !== '' ? uid : undefined;
  if (typeof name !== 'string' || name === '') return { ok: false, reason: 'no-name', uid: uidString };
  if (namespace !== undefined && typeof namespace !== 'string')
    return { ok: false, reason: 'bad-namespace', uid: uidString };
  return { ok: true, key: objectKey({ namespace: namespace || undefined, name }), uid: uidString };
}

function deepFreeze<T>(obj: T): T {
  if (typeof obj !== 'object' || obj === null || Object.isFrozen(obj)) return obj;
  for (const v of Object.values(obj)) deepFreeze(v);
  return Object.freeze(obj);
}
