/**
 * One copy of each string the cache repeats across objects. `JSON.parse` gives every object its own
 * copy of each string value (V8 shares only property names and values of up to 10 characters), so
 * 50,000 objects of one kind hold 50,000 copies of `example.com/v1`, of a long namespace, of each
 * label value, of their owner's name and uid. The store points such fields of each object it takes
 * in at the pooled copy; the values are equal strings, so what readers see does not change.
 *
 * Only fields whose values repeat across objects are pooled (never names, uids of the object itself,
 * resourceVersions or timestamps), and the pool is bounded: when full it starts over, so values of
 * long-gone objects cannot accumulate (objects already stored keep the copy they point at).
 */
import type { KubeObject } from '../core/object-key.js';

/** Distinct strings a store's pool holds before it starts over. @defaultValue 4096 */
export const DEFAULT_STRING_POOL_SIZE = 4096;

/** Strings longer than this are not pooled: repeats that long are rare and their lookup costs a hash of the whole string. */
const MAX_POOLED_LENGTH = 256;

export class StringPool {
  private readonly pooled = new Map<string, string>();

  constructor(private readonly maxEntries: number = DEFAULT_STRING_POOL_SIZE) {}

  get size(): number {
    return this.pooled.size;
  }

  /** The pooled copy of `s` (pooling `s` itself when it is new). */
  intern(s: string): string {
    if (s.length > MAX_POOLED_LENGTH) return s;
    const copy = this.pooled.get(s);
    if (copy !== undefined) return copy;
    if (this.pooled.size >= this.maxEntries) this.pooled.clear();
    this.pooled.set(s, s);
    return s;
  }
}

type Fields = Record<string, unknown>;

function isFields(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Replaces `obj[field]` by its pooled copy when it is a string. */
function share(obj: Fields, field: string, pool: StringPool): void {
  const v = obj[field];
  if (typeof v === 'string') obj[field] = pool.intern(v);
}

function shareValues(map: unknown, pool: StringPool): void {
  if (!isFields(map)) return;
  for (const k of Object.keys(map)) share(map, k, pool);
}

/**
 * Points the repeated string fields of `obj` at their pooled copies, in place: apiVersion, kind,
 * metadata.namespace and generateName, label values (label keys, being property names, are shared
 * by V8 already), finalizers, and ownerReferences' apiVersion, kind, name and uid (the children of
 * one owner repeat them). Any other field, and any field that is not a string, is left as it is.
 */
export function shareRepeatedStrings(obj: KubeObject, pool: StringPool): void {
  const o = obj as Fields;
  share(o, 'apiVersion', pool);
  share(o, 'kind', pool);
  const meta = o.metadata;
  if (!isFields(meta)) return;
  share(meta, 'namespace', pool);
  share(meta, 'generateName', pool);
  shareValues(meta.labels, pool);
  const finalizers = meta.finalizers;
  if (Array.isArray(finalizers))
    for (let i = 0; i < finalizers.length; i++) {
      const f: unknown = finalizers[i];
      if (typeof f === 'string') finalizers[i] = pool.intern(f);
    }
  const owners = meta.ownerReferences;
  if (Array.isArray(owners))
    for (const ref of owners as unknown[]) {
      if (!isFields(ref)) continue;
      share(ref, 'apiVersion', pool);
      share(ref, 'kind', pool);
      share(ref, 'name', pool);
      share(ref, 'uid', pool);
    }
}
