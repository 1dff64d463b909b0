/**
 * Secondary indexes over the store: for each index name, index value → the set of stored objects
 * under it. The sets hold the objects themselves, not their keys, so an index costs one set entry
 * per object and value and no key string (a `namespace/name` key would be a string of its own per
 * object). Index functions must be pure (same object → same values): on change we recompute the old
 * object's values to remove them instead of keeping a reverse map per object, which would cost
 * memory per object.
 */
import type { KubeObject } from '../core/object-key.js';
import { IndexError } from './errors.js';

/** Values an object is indexed under (`[]` for none). Must be pure and cheap; never mutate `obj`. */
export type IndexFunc<T> = (obj: T) => readonly string[];

/** The built-in index: objects by `metadata.namespace` (cluster-scoped objects are not in it). */
export const NAMESPACE_INDEX = 'namespace';

export function namespaceIndexFunc(obj: KubeObject): readonly string[] {
  const ns = obj.metadata?.namespace;
  return ns ? [ns] : [];
}

const EMPTY: ReadonlySet<never> = new Set();

export class Indexer<T> {
  private readonly funcs = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<T>>>();

  /**
   * @param onError called when an index function throws (with the key of the object, for the log);
   * the object is then left out of that index rather than leaving the store and its indexes
   * disagreeing.
   */
  constructor(private readonly onError: (index: string, key: string, err: unknown) => void = () => {}) {}

  /**
   * Registers an index and builds it from `entries` (the store's current contents). Registering the
   * same function twice under one name is a no-op; a different function under a taken name throws.
   */
  addIndex(name: string, fn: IndexFunc<T>, entries: Iterable<readonly [string, T]>): void {
    const existing = this.funcs.get(name);
    if (existing === fn) return;
    if (existing) throw new IndexError(name, 'already registered with a different function');
    const index = new Map<string, Set<T>>();
    this.funcs.set(name, fn);
    this.indices.set(name, index);
    for (const [key, obj] of entries) for (const v of this.valuesOf(name, fn, key, obj)) addTo(index, v, obj);
  }

  has(name: string): boolean {
    return this.funcs.has(name);
  }

  /** The registered indexes, to build another indexer with the same ones. */
  entries(): IterableIterator<[string, IndexFunc<T>]> {
    return this.funcs.entries();
  }

  /** Moves the entry of `key` from `old` (under its values) to `next` (under its); either may be undefined: add / delete. */
  update(key: string, old: T | undefined, next: T | undefined): void {
    for (const [name, fn] of this.funcs) {
      const index = this.indices.get(name)!;
      if (old !== undefined) for (const v of this.valuesOf(name, fn, key, old)) removeFrom(index, v, old);
      if (next !== undefined) for (const v of this.valuesOf(name, fn, key, next)) addTo(index, v, next);
    }
  }

  /** Objects indexed under `value`. Throws `IndexError` for an unknown index. */
  objects(name: string, value: string): ReadonlySet<T> {
    const index = this.indices.get(name);
    if (!index) throw new IndexError(name, 'no such index');
    return index.get(value) ?? EMPTY;
  }

  /** Every value that currently has at least one object in the index. */
  values(name: string): string[] {
    const index = this.indices.get(name);
    if (!index) throw new IndexError(name, 'no such index');
    return [...index.keys()];
  }

  private valuesOf(name: string, fn: IndexFunc<T>, key: string, obj: T): readonly string[] {
    try {
      return fn(obj);
    } catch (err) {
      this.onError(name, key, err);
      return [];
    }
  }
}

function addTo<T>(index: Map<string, Set<T>>, value: string, obj: T): void {
  let set = index.get(value);
  if (!set) index.set(value, (set = new Set()));
  set.add(obj);
}

function removeFrom<T>(index: Map<string, Set<T>>, value: string, obj: T): void {
  const set = index.get(value);
  if (!set) return;
  set.delete(obj);
  // Drop empty sets so index values of long-gone objects do not accumulate.
  if (set.size === 0) index.delete(value);
}
