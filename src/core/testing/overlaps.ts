/**
 * Test support: the one check behind "a key is never reconciled by two replicas at once" and "never
 * two leaders at once", used by the sharding, leader-election, chaos and reference-operator tests.
 * Never shipped: the build leaves out every src/<module>/testing folder.
 */

/** A span of time in ms on one clock; `end` may be Infinity (still running). */
export interface TimeInterval {
  readonly start: number;
  readonly end: number;
}

/**
 * Every pair of intervals of one group that intersect in time, the earlier-starting one first.
 * Back-to-back intervals (one ends when the next starts) do not overlap. Every pair is reported,
 * not only the first one found: a long interval overlapping several later ones counts once for each.
 * `groupOf` puts intervals in groups (e.g. by key) that are checked apart; by default all are one group.
 */
export function overlappingPairs<T extends TimeInterval>(
  intervals: readonly T[],
  groupOf: (interval: T) => string = () => '',
): [T, T][] {
  const groups = new Map<string, T[]>();
  for (const i of intervals) {
    const group = groupOf(i);
    const list = groups.get(group);
    if (list) list.push(i);
    else groups.set(group, [i]);
  }
  const pairs: [T, T][] = [];
  for (const list of groups.values()) {
    const sorted = [...list].sort((a, b) => a.start - b.start);
    // Sweep: only intervals still running when one starts can overlap it.
    const running: T[] = [];
    for (const i of sorted) {
      for (let j = running.length - 1; j >= 0; j--) if (running[j]!.end <= i.start) running.splice(j, 1);
      for (const r of running) pairs.push([r, i]);
      running.push(i);
    }
  }
  return pairs;
}
