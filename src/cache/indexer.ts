/**
 * Secondary indexes over the store: for each index name, index value → set of object keys. Index
 * functions must be pure (same object → same values): on change we recompute the old object's values
 * to remove them instead of keeping a reverse map per object, which would cost memory per object.
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

const EMPTY: ReadonlySet<string> = new Set();

export class Indexer<T> {
  private readonly funcs = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  /**
   * @param onError called when an index function throws; the object is then left out of that index
   * rather than leaving the store and its indexes disagreeing.
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
    const index = new Map<string, Set<string>>();
    this.funcs.set(name, fn);
    this.indices.set(name, index);
    for (const [key, obj] of entries) for (const v of this.valuesOf(name, fn, key, obj)) addTo(index, v, key);
  }

  has(name: string): boolean {
    return this.funcs.has(name);
  }

  names(): string[] {
    return [...this.funcs.keys()];
  }

  /** Moves `key` from `old`'s index values to `next`'s (either may be undefined: add / delete). */
  update(key: string, old: T | undefined, next: T | undefined): void {
    for (const [name, fn] of this.funcs) {
      const index = this.indices.get(name)!;
      const before = old === undefined ? [] : this.valuesOf(name, fn, key, old);
      const after = next === undefined ? [] : this.valuesOf(name, fn, key, next);
      // Fast path for the common single-value index whose value did not change.
      if (before.length === 1 && after.length === 1 && before[0] === after[0]) continue;
      for (const v of before) if (!after.includes(v)) removeFrom(index, v, key);
      for (const v of after) addTo(index, v, key);
    }
  }

  /** Keys of objects indexed under `value`. Throws `IndexError` for an unknown index. */
  keys(name: string, value: string): ReadonlySet<string> {
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

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let set = index.get(value);
  if (!set) index.set(value, (set = new Set()));
  set.add(key);
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const set = index.get(value);
  if (!set) return;
  set.delete(key);
  // Drop empty sets so index values of long-gone objects do not accumulate.
  if (set.size === 0) index.delete(value);
}
