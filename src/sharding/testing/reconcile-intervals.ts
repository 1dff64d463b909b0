/**
 * Test support: reconciles recorded as time intervals per key, and the check that no two of one key
 * overlap (what "a key is never reconciled by two replicas at once" means, measured in one process).
 */
import { overlappingPairs } from '../../core/testing/overlaps.js';

export interface ReconcileInterval {
  readonly key: string;
  readonly replica: string;
  readonly startMs: number;
  /** Infinity while running. */
  endMs: number;
}

/** Starts an interval (call `end` when the reconcile returns). */
export function openInterval(into: ReconcileInterval[], key: string, replica: string): { end(): void } {
  const interval: ReconcileInterval = { key, replica, startMs: performance.now(), endMs: Infinity };
  into.push(interval);
  return {
    end: () => {
      interval.endMs = performance.now();
    },
  };
}

/** Each pair of intervals of one key that overlap in time, described. */
export function overlappingIntervals(intervals: readonly ReconcileInterval[]): string[] {
  const spans = intervals.map((i) => ({ interval: i, start: i.startMs, end: i.endMs }));
  return overlappingPairs(spans, (s) => s.interval.key).map(
    ([{ interval: a }, { interval: b }]) =>
      `${a.key}: ${a.replica} [${a.startMs.toFixed(1)}, ${a.endMs.toFixed(1)}] and ${b.replica} from ${b.startMs.toFixed(1)}`,
  );
}
