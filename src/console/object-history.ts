/**
 * The per-object history: for each object a controller reconciled, its last N reconciles (trigger,
 * start, duration, result or error, the writes made). Bounded twice: N per object, and a total of
 * objects and estimated bytes across all of them — past either, the object reconciled least
 * recently is forgotten whole (a Map's insertion order is the recency order: every record moves
 * its object to the end).
 */
import { InvalidOptionError } from '../core/errors.js';
import type { HistoryTrigger } from '../controller/reconcile-trigger.js';
import type { ReconcileRecord } from '../controller/controller.js';
import type { ObjectWrite } from './reconcile-writes.js';

/** @defaultValue 20 */
export const DEFAULT_HISTORY_RECONCILES_PER_OBJECT = 20;
/** @defaultValue 5,000 */
export const DEFAULT_HISTORY_MAX_OBJECTS = 5_000;
/** About the heap all remembered reconciles may hold (estimated, see `estimatedBytes`). @defaultValue 32 MiB */
export const DEFAULT_HISTORY_MAX_BYTES = 32 * 1024 * 1024;

export interface ObjectHistoryOptions {
  /** Reconciles remembered per object (the oldest is dropped). @defaultValue {@link DEFAULT_HISTORY_RECONCILES_PER_OBJECT} */
  readonly reconcilesPerObject?: number;
  /** Objects remembered in all (the least recently reconciled is dropped). @defaultValue {@link DEFAULT_HISTORY_MAX_OBJECTS} */
  readonly maxObjects?: number;
  /** Estimated bytes remembered in all (the least recently reconciled objects are dropped). @defaultValue {@link DEFAULT_HISTORY_MAX_BYTES} */
  readonly maxBytes?: number;
}

/** One remembered reconcile of one object. */
export interface HistoryReconcile {
  readonly reconcileID: string;
  readonly trigger: HistoryTrigger;
  readonly startedAtMs: number;
  readonly durationMs: number;
  readonly result: ReconcileRecord['outcome'];
  /** Redacted. */
  readonly error?: string;
  readonly writes: readonly ObjectWrite[];
  /** Writes past the per-reconcile cap, counted only. */
  readonly omittedWrites: number;
}

/** One object's story, as the console's `api/history` serves it. */
export interface ObjectTimeline {
  readonly controller: string;
  readonly key: string;
  /** Newest first. */
  readonly reconciles: readonly HistoryReconcile[];
}

export interface ObjectHistoryStats {
  readonly objects: number;
  readonly reconciles: number;
  readonly estimatedBytes: number;
}

interface Remembered {
  readonly controller: string;
  readonly key: string;
  /** Oldest first. */
  readonly entries: { readonly reconcile: HistoryReconcile; readonly bytes: number }[];
  bytes: number;
}

/** The fixed part of an entry's estimate (the record, its wrapper, the array slot): bench/object-history.bench.ts measured ~700 B for a reconcile without writes. */
const ENTRY_OVERHEAD_BYTES = 640;
const OBJECT_OVERHEAD_BYTES = 200;

export class ObjectHistory {
  readonly reconcilesPerObject: number;
  readonly maxObjects: number;
  readonly maxBytes: number;
  private readonly objects = new Map<string, Remembered>();
  private bytes = 0;
  private reconciles = 0;

  constructor(options: ObjectHistoryOptions = {}) {
    this.reconcilesPerObject = positiveInteger(
      'history.reconcilesPerObject',
      options.reconcilesPerObject,
      DEFAULT_HISTORY_RECONCILES_PER_OBJECT,
    );
    this.maxObjects = positiveInteger('history.maxObjects', options.maxObjects, DEFAULT_HISTORY_MAX_OBJECTS);
    this.maxBytes = positiveInteger('history.maxBytes', options.maxBytes, DEFAULT_HISTORY_MAX_BYTES);
  }

  record(controller: string, key: string, reconcile: HistoryReconcile): void {
    const id = `${controller}\u0000${key}`;
    let object = this.objects.get(id);
    if (object) this.objects.delete(id);
    else object = { controller, key, entries: [], bytes: OBJECT_OVERHEAD_BYTES + 2 * (controller.length + key.length) };
    this.objects.set(id, object); // now the most recent
    if (object.entries.length === 0) this.bytes += object.bytes;
    const bytes = estimateBytes(reconcile);
    object.entries.push({ reconcile, bytes });
    object.bytes += bytes;
    this.bytes += bytes;
    this.reconciles++;
    while (object.entries.length > this.reconcilesPerObject) {
      const dropped = object.entries.shift()!;
      object.bytes -= dropped.bytes;
      this.bytes -= dropped.bytes;
      this.reconciles--;
    }
    // Never the object just recorded: one reconcile larger than maxBytes stays until the next one.
    while ((this.objects.size > this.maxObjects || this.bytes > this.maxBytes) && this.objects.size > 1) {
      const [oldestId, oldest] = this.objects.entries().next().value!;
      this.objects.delete(oldestId);
      this.bytes -= oldest.bytes;
      this.reconciles -= oldest.entries.length;
    }
  }

  /** An object's remembered reconciles, newest first; undefined when none is remembered. */
  timeline(controller: string, key: string): ObjectTimeline | undefined {
    const object = this.objects.get(`${controller}\u0000${key}`);
    if (!object) return undefined;
    return { controller, key, reconciles: object.entries.map((e) => e.reconcile).reverse() };
  }

  stats(): ObjectHistoryStats {
    return { objects: this.objects.size, reconciles: this.reconciles, estimatedBytes: this.bytes };
  }
}

/**
 * A reconcile's heap, estimated: a fixed overhead plus two bytes per character of its strings and
 * of its writes as JSON (V8 keeps most of these one byte per character; the margin covers the
 * objects' own headers). bench/object-history.bench.ts compares it with the measured heap.
 */
function estimateBytes(r: HistoryReconcile): number {
  let chars = r.reconcileID.length + (r.error?.length ?? 0);
  if (r.writes.length > 0) chars += JSON.stringify(r.writes).length;
  return ENTRY_OVERHEAD_BYTES + 2 * chars;
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(Number.isInteger(value) && value >= 1)) throw new InvalidOptionError(name, 'must be an integer >= 1');
  return value;
}
