/** Leadership intervals on one timeline, and the check that no two of them overlap. */

export interface Interval {
  readonly who: string;
  readonly start: number;
  readonly end: number;
}

/** The first pair of intervals that overlap, if any. Back-to-back (one ends when the next starts) is fine. */
export function findOverlap(intervals: readonly Interval[]): [Interval, Interval] | undefined {
  const sorted = [...intervals].sort((x, y) => x.start - y.start);
  let widest: Interval | undefined;
  for (const i of sorted) {
    if (widest && widest.end > i.start) return [widest, i];
    if (!widest || i.end > widest.end) widest = i;
  }
  return undefined;
}
