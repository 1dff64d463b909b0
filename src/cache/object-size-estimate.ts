/**
 * A cheap estimate of the heap bytes one cached object costs, for the `cache_estimated_bytes_per_object`
 * gauge and the console: no heap walk, only a walk of a few sampled objects under a V8 cost model.
 *
 * The model (64-bit V8 without pointer compression, as Node ships): a plain object costs a 24-byte
 * header plus 8 bytes per property; an array 48 bytes (JSArray and its backing store's header)
 * plus 8 per element; a string 16 bytes plus its characters (one byte each, two when any is beyond
 * Latin-1), rounded up to 8; a number that is not a small integer 16 bytes (a HeapNumber); a
 * bigint 24; booleans, null and small integers nothing (they live in the slot). Property names,
 * and short string values, which V8 internalizes when it parses JSON, are shared by every object
 * and cost nothing per object. Hidden classes (shared by objects of one shape) are not counted.
 * Each entry also costs the store's bookkeeping, {@link STORE_ENTRY_OVERHEAD_BYTES}: its map entries
 * (by namespace, then name; the store keeps no key string per object). Strings the store's pool
 * shares across objects (apiVersion, kind, namespace, label values, owner references) are charged
 * per object by the walk and credited back inside that constant, fitted on Database-like objects.
 *
 * Measured against real heap bytes per object after gc() (src/cache/testing/memory-footprint.ts,
 * which also reports this estimate; docs/capacity.md has the figures): within a few percent for
 * Database-like objects of ~2 KB and ~4 KB of JSON. It does not see memory shared between
 * objects by reference, objects in dictionary mode (V8 switches after a `delete`, which the
 * default transform avoids) or per-shape hidden classes (objects whose label keys differ each have
 * their own), so treat it as a guide for capacity planning, not an accounting.
 */
import type { Clock } from '../core/clock.js';

/** Per-entry bookkeeping of the store beyond the object, less the pooled strings (see above). */
export const STORE_ENTRY_OVERHEAD_BYTES = 21;
/** Objects walked per estimate. @defaultValue 32 */
export const DEFAULT_SIZE_SAMPLE = 32;
/** An estimate is reused for this long unless the object count changed by a tenth. @defaultValue 30000 */
export const DEFAULT_SIZE_REFRESH_MS = 30_000;
/** Values visited in one object at most (a pathological object is cut short, never walked forever). */
const MAX_NODES_PER_OBJECT = 20_000;
/** V8 internalizes (shares) string values this short or shorter when it parses JSON. */
const INTERNALIZED_STRING_MAX_LENGTH = 9;

const OBJECT_HEADER = 24;
/** `{}` from JSON gets room for 4 properties. */
const EMPTY_OBJECT = 56;
const ARRAY_HEADER = 48;
/** `[]` shares the empty backing store. */
const EMPTY_ARRAY = 32;
const SLOT = 8;
const STRING_HEADER = 16;
const HEAP_NUMBER = 16;
const BIGINT = 24;

const align = (n: number): number => Math.ceil(n / 8) * 8;

function stringBytes(s: string): number {
  // eslint-disable-next-line no-control-regex -- Latin-1 is one byte a character in V8
  const wide = /[^\u0000-\u00ff]/.test(s);
  return align(STRING_HEADER + s.length * (wide ? 2 : 1));
}

/** The model's heap bytes of one JSON-like value (see the top of this file). */
export function estimateValueBytes(value: unknown): number {
  let bytes = 0;
  let budget = MAX_NODES_PER_OBJECT;
  const stack: unknown[] = [value];
  while (stack.length > 0 && budget-- > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case 'string':
        if (v.length > INTERNALIZED_STRING_MAX_LENGTH) bytes += stringBytes(v);
        break;
      case 'number':
        if (!Number.isInteger(v) || v > 0x7fffffff || v < -0x80000000) bytes += HEAP_NUMBER;
        break;
      case 'bigint':
        bytes += BIGINT;
        break;
      case 'object':
        if (v === null) break;
        if (Array.isArray(v)) {
          bytes += v.length === 0 ? EMPTY_ARRAY : ARRAY_HEADER + SLOT * v.length;
          for (const item of v as unknown[]) stack.push(item);
        } else {
          let properties = 0;
          for (const key in v) {
            properties++;
            stack.push((v as Record<string, unknown>)[key]);
          }
          bytes += properties === 0 ? EMPTY_OBJECT : OBJECT_HEADER + SLOT * properties;
        }
        break;
      default:
        break;
    }
  }
  return bytes;
}

/** The model's heap bytes of one store entry: the object and the store's bookkeeping. */
export function estimateEntryBytes(object: unknown): number {
  return estimateValueBytes(object) + STORE_ENTRY_OVERHEAD_BYTES;
}

/** What the estimate reads from a store: its size and its objects in order. */
export interface SizeSampleSource {
  readonly size: number;
  objectIterator(): Iterator<unknown>;
}

export interface ObjectSizeEstimateOptions {
  readonly clock: Clock;
  /** @defaultValue {@link DEFAULT_SIZE_SAMPLE} */
  readonly sampleSize?: number;
  /** @defaultValue {@link DEFAULT_SIZE_REFRESH_MS} */
  readonly refreshMs?: number;
}

/**
 * Estimated heap bytes per object of one store, from a sample spread evenly over it: one pass over
 * the objects (no copy) and a walk of `sampleSize` objects, at most once per `refreshMs` (sooner when
 * the object count moved by a tenth), so a scrape or a console poll costs nearly nothing.
 */
export class ObjectSizeEstimate {
  private readonly sampleSize: number;
  private readonly refreshMs: number;
  private cached: { readonly bytes: number; readonly size: number; readonly atMs: number } | undefined;

  constructor(
    private readonly source: SizeSampleSource,
    private readonly options: ObjectSizeEstimateOptions,
  ) {
    this.sampleSize = options.sampleSize ?? DEFAULT_SIZE_SAMPLE;
    this.refreshMs = options.refreshMs ?? DEFAULT_SIZE_REFRESH_MS;
  }

  /** Bytes per object, or undefined while the store is empty. */
  bytesPerObject(): number | undefined {
    const size = this.source.size;
    if (size === 0) return undefined;
    const now = this.options.clock.now();
    const c = this.cached;
    if (c && now - c.atMs < this.refreshMs && Math.abs(size - c.size) * 10 < c.size) return c.bytes;
    const bytes = this.sample(size);
    this.cached = { bytes, size, atMs: now };
    return bytes;
  }

  private sample(size: number): number {
    const stride = Math.max(1, Math.floor(size / this.sampleSize));
    const objects = this.source.objectIterator();
    let total = 0;
    let sampled = 0;
    for (let i = 0; sampled < this.sampleSize; i++) {
      const next = objects.next();
      if (next.done) break;
      if (i % stride !== 0) continue;
      total += estimateEntryBytes(next.value);
      sampled++;
    }
    return sampled === 0 ? 0 : Math.round(total / sampled);
  }
}
