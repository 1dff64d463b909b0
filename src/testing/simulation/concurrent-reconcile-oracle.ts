/**
 * Concurrent-reconcile oracle: one controller must never reconcile one key twice at once — not in
 * one process (the workqueue's guarantee) and not across processes (what leader election is for).
 *
 * Spans of the same controller and key are compared pairwise; `a` (started first) and `b` overlap
 * when `b` started before `a` ended. Where an unfinished span (no `endSeq`) ends:
 * - of the last incarnation (alive when the run ended): at infinity — it is still running;
 * - of an earlier incarnation, which died: at its death. The run records no sequence number for a
 *   death, so it is bounded by what that incarnation was seen doing: it was alive at its last span
 *   event (`startSeq`/`endSeq`, the sequence bound) and at its last API call (`atMs`, the time
 *   bound). `b` overlaps such an `a` if it started before either bound (`b.startSeq` below the
 *   incarnation's last sequence number, or `b.startedAtMs` strictly below its last call's time):
 *   then the process still lived, still inside `a`, when `b` began. A crashed process's span thus
 *   overlaps nothing after the crash (its restart comes `restartAfterMs` later), while an old leader
 *   that keeps calling the API during a leader change overlaps the new leader's spans.
 */
import { END_OF_RUN, evidenceAttributor } from './oracle-evidence.js';
import type { Finding, ReconcileSpan, RunRecord } from './simulation-records.js';

export function concurrentReconcileOracle(run: RunRecord): Finding[] {
  const lastIncarnation = Math.max(
    0,
    ...run.calls.map((c) => c.incarnation),
    ...run.reconciles.map((s) => s.incarnation),
  );
  const lastSeq = new Map<number, number>();
  for (const s of run.reconciles)
    lastSeq.set(s.incarnation, Math.max(lastSeq.get(s.incarnation) ?? -Infinity, s.startSeq, s.endSeq ?? -Infinity));
  const lastCallMs = new Map<number, number>();
  for (const c of run.calls)
    lastCallMs.set(c.incarnation, Math.max(lastCallMs.get(c.incarnation) ?? -Infinity, c.atMs));

  /** Whether `b` (started after `a`) began while `a` was still running. */
  const overlaps = (a: ReconcileSpan, b: ReconcileSpan): boolean => {
    if (a.endSeq !== undefined) return b.startSeq < a.endSeq;
    if (a.incarnation === lastIncarnation) return true;
    return (
      b.startSeq < (lastSeq.get(a.incarnation) ?? -Infinity) ||
      b.startedAtMs < (lastCallMs.get(a.incarnation) ?? -Infinity)
    );
  };

  const byKey = new Map<string, ReconcileSpan[]>();
  for (const s of run.reconciles) {
    const k = `${s.controller}\u0000${s.key}`;
    byKey.set(k, [...(byKey.get(k) ?? []), s]);
  }
  const attribute = evidenceAttributor(run);
  const findings: Finding[] = [];
  for (const spans of byKey.values()) {
    const sorted = [...spans].sort((x, y) => x.startSeq - y.startSeq);
    for (let i = 0; i < sorted.length; i++) {
      for (let j = i + 1; j < sorted.length; j++) {
        const a = sorted[i]!;
        const b = sorted[j]!;
        if (!overlaps(a, b)) continue;
        const across =
          a.incarnation === b.incarnation
            ? `twice at once in incarnation ${a.incarnation} (the workqueue must hand a key to one worker at a time)`
            : `in incarnations ${a.incarnation} and ${b.incarnation} at once (an old process still reconciled: leader election must stop it before a new one starts)`;
        findings.push({
          oracle: 'concurrent-reconcile',
          key: a.key,
          ...attribute(Number.isFinite(b.startedAtMs) ? b.startedAtMs : END_OF_RUN),
          message:
            `controller ${a.controller} reconciled ${a.key} ${across}: ` +
            `${describeSpan(a)} was still running when ${describeSpan(b)} started`,
        });
      }
    }
  }
  return findings;
}

function describeSpan(s: ReconcileSpan): string {
  const end = s.endSeq !== undefined ? `seq ${s.startSeq}–${s.endSeq}` : `seq ${s.startSeq}–unfinished`;
  return `the reconcile of incarnation ${s.incarnation} (${end}, started at ${s.startedAtMs} ms, step ${s.step})`;
}
