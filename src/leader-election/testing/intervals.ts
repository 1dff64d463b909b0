/** Leadership intervals on one timeline, and the check that no two of them overlap. */
import { overlappingPairs } from '../../core/testing/overlaps.js';

export interface Interval {
  readonly who: string;
  readonly start: number;
  readonly end: number;
}

/** The first pair of intervals that overlap, if any. Back-to-back (one ends when the next starts) is fine. */
export function findOverlap(intervals: readonly Interval[]): [Interval, Interval] | undefined {
  return overlappingPairs(intervals)[0];
}
