/**
 * Test support: reconciles recorded as time intervals per key, and the check that no two of one key
 * overlap (what "a key is never reconciled by two replicas at once" means, measured in one process).
 */

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
  const byKey = new Map<string, ReconcileInterval[]>();
  for (const r of intervals) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  const found: string[] = [];
  for (const [key, list] of byKey) {
    const sorted = [...list].sort((a, b) => a.startMs - b.startMs);
    let latest = sorted[0];
    for (const next of sorted.slice(1)) {
      if (latest && next.startMs < latest.endMs) found.push(`${key}: ${latest.replica} [${latest.startMs.toFixed(1)}, ${latest.endMs.toFixed(1)}] and ${next.replica} from ${next.startMs.toFixed(1)}`);
      if (!latest || next.endMs > latest.endMs) latest = next;
    }
  }
  return found;
}
