import { InvalidOptionError } from '../core/errors.js';

/** Width of one time slot of the reconcile charts. @defaultValue 10,000 ms */
export const DEFAULT_BUCKET_MS = 10_000;
/** How far back the charts go. @defaultValue 300,000 ms (5 minutes) */
export const DEFAULT_WINDOW_MS = 300_000;
/** The span the headline rate and percentiles cover. @defaultValue 60,000 ms */
export const DEFAULT_SUMMARY_MS = 60_000;

export interface ReconcileWindowOptions {
  /** @defaultValue {@link DEFAULT_BUCKET_MS} */
  readonly bucketMs?: number;
  /** @defaultValue {@link DEFAULT_WINDOW_MS} */
  readonly windowMs?: number;
  /** @defaultValue {@link DEFAULT_SUMMARY_MS} */
  readonly summaryMs?: number;
}

export interface WindowPoint {
  /** Start of the slot (`clock.now()` scale). */
  readonly atMs: number;
  readonly count: number;
  readonly errors: number;
  readonly p50Ms: number | undefined;
  readonly p99Ms: number | undefined;
}

export interface WindowSummary {
  readonly count: number;
  readonly errors: number;
  readonly ratePerSec: number;
  readonly p50Ms: number | undefined;
  readonly p99Ms: number | undefined;
}

/**
 * Latency histogram edges: 0.1 ms × 2^(i/4), i.e. 19 % wide, up to ~1,700 s. A percentile is
 * reported as the upper edge of its bucket, so it reads high by at most 19 % — enough to see which
 * controller is slow, at a fixed 400 bytes per slot instead of one number per reconcile.
 */
const EDGE_BASE_MS = 0.1;
const STEPS_PER_DOUBLING = 4;
const EDGES = 96;

function edgeIndex(durationMs: number): number {
  if (!(durationMs > EDGE_BASE_MS)) return 0;
  return Math.min(EDGES - 1, Math.ceil(Math.log2(durationMs / EDGE_BASE_MS) * STEPS_PER_DOUBLING));
}

function edgeMs(index: number): number {
  return EDGE_BASE_MS * 2 ** (index / STEPS_PER_DOUBLING);
}

interface Slot {
  index: number;
  count: number;
  errors: number;
  readonly histogram: Uint32Array;
}

/**
 * Reconcile count, errors and latency per time slot over a sliding window, in fixed memory
 * (one histogram per slot, slots reused as time moves on). Fed once per reconcile; read by the
 * console a few times a second at most.
 */
export class ReconcileWindow {
  readonly bucketMs: number;
  readonly windowMs: number;
  readonly summaryMs: number;
  private readonly slots: Slot[];
  private readonly createdAtMs: number;

  constructor(nowMs: number, options: ReconcileWindowOptions = {}) {
    this.bucketMs = options.bucketMs ?? DEFAULT_BUCKET_MS;
    this.windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    this.summaryMs = options.summaryMs ?? DEFAULT_SUMMARY_MS;
    if (!(this.bucketMs > 0)) throw new InvalidOptionError('bucketMs', 'must be > 0');
    if (!(this.windowMs >= this.bucketMs)) throw new InvalidOptionError('windowMs', 'must be >= bucketMs');
    if (!(this.summaryMs >= this.bucketMs && this.summaryMs <= this.windowMs))
      throw new InvalidOptionError('summaryMs', 'must be between bucketMs and windowMs');
    const n = Math.ceil(this.windowMs / this.bucketMs);
    this.slots = Array.from({ length: n }, () => ({
      index: -1,
      count: 0,
      errors: 0,
      histogram: new Uint32Array(EDGES),
    }));
    this.createdAtMs = nowMs;
  }

  record(atMs: number, durationMs: number, failed: boolean): void {
    const slot = this.slotFor(Math.floor(atMs / this.bucketMs));
    slot.count++;
    if (failed) slot.errors++;
    slot.histogram[edgeIndex(durationMs)]!++;
  }

  /** One point per slot of the window, oldest first; empty slots are zeros. */
  series(nowMs: number): WindowPoint[] {
    const current = Math.floor(nowMs / this.bucketMs);
    const out: WindowPoint[] = [];
    for (let index = current - this.slots.length + 1; index <= current; index++) {
      const slot = this.live(index);
      out.push({
        atMs: index * this.bucketMs,
        count: slot?.count ?? 0,
        errors: slot?.errors ?? 0,
        p50Ms: slot ? percentile([slot.histogram], slot.count, 0.5) : undefined,
        p99Ms: slot ? percentile([slot.histogram], slot.count, 0.99) : undefined,
      });
    }
    return out;
  }

  /** Totals, rate and percentiles over the last `summaryMs` (the current, partial slot included). */
  summary(nowMs: number): WindowSummary {
    const current = Math.floor(nowMs / this.bucketMs);
    const first = current - Math.ceil(this.summaryMs / this.bucketMs) + 1;
    const histograms: Uint32Array[] = [];
    let count = 0;
    let errors = 0;
    for (let index = first; index <= current; index++) {
      const slot = this.live(index);
      if (!slot) continue;
      count += slot.count;
      errors += slot.errors;
      histograms.push(slot.histogram);
    }
    // A window younger than the span would under-report its rate: divide by the time it covers.
    const coveredMs = nowMs - Math.max(first * this.bucketMs, this.createdAtMs);
    return {
      count,
      errors,
      ratePerSec: coveredMs > 0 ? (count * 1000) / coveredMs : 0,
      p50Ms: percentile(histograms, count, 0.5),
      p99Ms: percentile(histograms, count, 0.99),
    };
  }

  private live(index: number): Slot | undefined {
    const slot = this.slots[((index % this.slots.length) + this.slots.length) % this.slots.length]!;
    return slot.index === index ? slot : undefined;
  }

  private slotFor(index: number): Slot {
    const slot = this.slots[((index % this.slots.length) + this.slots.length) % this.slots.length]!;
    if (slot.index !== index) {
      slot.index = index;
      slot.count = 0;
      slot.errors = 0;
      slot.histogram.fill(0);
    }
    return slot;
  }
}

function percentile(histograms: readonly Uint32Array[], count: number, q: number): number | undefined {
  if (count === 0) return undefined;
  const rank = Math.ceil(q * count);
  let seen = 0;
  for (let i = 0; i < EDGES; i++) {
    for (const h of histograms) seen += h[i]!;
    if (seen >= rank) return edgeMs(i);
  }
  return edgeMs(EDGES - 1);
}
