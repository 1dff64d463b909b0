/**
 * What a store holds: objects by namespace, then by name, with the secondary indexes kept
 * consistent on every change. Two levels instead of one map by `namespace/name`, because a key is
 * a string of its own per object (the name and namespace strings are the object's own), and
 * because the namespace's map then is the built-in namespace index, which needs no set of its
 * own. Keys (`namespace/name`, or `name` when cluster-scoped) are made on demand.
 */
import { objectKey, type KubeObject } from '../core/object-key.js';
import { IndexError } from './errors.js';
import { Indexer, NAMESPACE_INDEX, namespaceIndexFunc, type IndexFunc } from './indexer.js';

/** The bucket of cluster-scoped objects (and of a namespace `''`, which is the same key). */
const CLUSTER = '';

/** The namespace and name a key stands for. */
function splitKey(key: string): readonly [namespace: string, name: string] {
  const slash = key.indexOf('/');
  return slash < 0 ? [CLUSTER, key] : [key.slice(0, slash), key.slice(slash + 1)];
}

/**
 * The key of a stored object, from its own metadata (stored objects were checked on the way in:
 * they have a name, and a namespace that is a string or absent; being read-only, they keep them).
 */
export function storedKey(obj: KubeObject): string {
  const meta = obj.metadata!;
  return objectKey({ namespace: meta.namespace || undefined, name: meta.name! });
}

export class StoreContents<T extends KubeObject> {
  private readonly buckets = new Map<string, Map<string, T>>();
  private count = 0;
  readonly indexer: Indexer<T>;

  constructor(onIndexError: (index: string, key: string, err: unknown) => void) {
    this.indexer = new Indexer<T>(onIndexError);
  }

  get size(): number {
    return this.count;
  }

  get(key: string): T | undefined {
    const [namespace, name] = splitKey(key);
    return this.buckets.get(namespace)?.get(name);
  }

  /**
   * Stores `obj` under its own key (`key`, given for the index error log), returning the object it
   * replaced. The maps are keyed by the object's own namespace and name strings: no copies.
   */
  set(key: string, obj: T): T | undefined {
    const meta = obj.metadata!;
    const namespace = meta.namespace || CLUSTER;
    const name = meta.name!;
    let bucket = this.buckets.get(namespace);
    if (bucket === undefined) this.buckets.set(namespace, (bucket = new Map()));
    const old = bucket.get(name);
    // Else the map would keep the old object's name string as its key, a second copy of the name.
    if (old !== undefined) bucket.delete(name);
    bucket.set(name, obj);
    if (old === undefined) this.count++;
    this.indexer.update(key, old, obj);
    return old;
  }

  /** Removes what is stored under `key`, returning it. */
  delete(key: string): T | undefined {
    const [namespace, name] = splitKey(key);
    const bucket = this.buckets.get(namespace);
    const old = bucket?.get(name);
    if (bucket === undefined || old === undefined) return undefined;
    bucket.delete(name);
    if (bucket.size === 0) this.buckets.delete(namespace);
    this.count--;
    this.indexer.update(key, old, undefined);
    return old;
  }

  *objects(): IterableIterator<T> {
    for (const bucket of this.buckets.values()) yield* bucket.values();
  }

  *keys(): IterableIterator<string> {
    for (const [namespace, bucket] of this.buckets)
      if (namespace === CLUSTER) yield* bucket.keys();
      else for (const name of bucket.keys()) yield `${namespace}/${name}`;
  }

  *entries(): IterableIterator<[string, T]> {
    for (const obj of this.objects()) yield [storedKey(obj), obj];
  }

  list(): T[] {
    const out: T[] = new Array<T>(this.count);
    let i = 0;
    for (const bucket of this.buckets.values()) for (const obj of bucket.values()) out[i++] = obj;
    return out;
  }

  byIndex(index: string, value: string): T[] {
    if (index === NAMESPACE_INDEX) {
      const bucket = value === CLUSTER ? undefined : this.buckets.get(value);
      return bucket ? [...bucket.values()] : [];
    }
    return [...this.indexer.objects(index, value)];
  }

  indexKeys(index: string, value: string): string[] {
    if (index === NAMESPACE_INDEX) {
      const bucket = value === CLUSTER ? undefined : this.buckets.get(value);
      return bucket ? [...bucket.keys()].map((name) => `${value}/${name}`) : [];
    }
    return [...this.indexer.objects(index, value)].map(storedKey);
  }

  indexValues(index: string): string[] {
    if (index === NAMESPACE_INDEX) return [...this.buckets.keys()].filter((ns) => ns !== CLUSTER);
    return this.indexer.values(index);
  }

  hasIndex(index: string): boolean {
    return index === NAMESPACE_INDEX || this.indexer.has(index);
  }

  /** Adds a user index, built from the current contents; the built-in namespace index is served from the buckets. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (name === NAMESPACE_INDEX) {
      if (fn !== namespaceIndexFunc) throw new IndexError(name, 'already registered with a different function');
      return;
    }
    this.indexer.addIndex(name, fn, this.entries());
  }
}
