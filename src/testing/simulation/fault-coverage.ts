/**
 * What the faults of a set of runs exercised: for each write the operator makes (by site: verb,
 * kind, subresource — `create ConfigMap`, `patch Widget/status`), how many faults of each kind hit
 * it. An error or a timeout fired at a write call hits that write; any other fault (a crash or a
 * restart, fired at the call after a write; a window of late or lost events) hits the write its
 * process made last before it. Faults before any write are counted under {@link BEFORE_ANY_WRITE}. Sites the
 * operator wrote but no fault hit are what a clean report says nothing about.
 */
import type { Fault, SimulationFaultKind } from './fault.js';
import type { CallRecord, RunRecord, WriteRecord } from './simulation-records.js';

export const BEFORE_ANY_WRITE = '(before any write)';

/** Per write site, faults of each kind that hit it. */
export interface FaultCoverage {
  readonly sites: ReadonlyMap<string, ReadonlyMap<SimulationFaultKind, number>>;
  /** Write sites of the runs that no fault hit. */
  readonly unhit: readonly string[];
}

/** `create ConfigMap`, `patch Widget/status`: one write site. */
export function writeSite(w: Pick<WriteRecord | CallRecord, 'verb' | 'kind' | 'subresource'>): string {
  return `${w.verb} ${w.kind}${w.subresource ? `/${w.subresource}` : ''}`;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);

/** Whether a write is the operator's own work (not leader election's Lease, not an Event). */
export function isWorkWrite(w: Pick<WriteRecord | CallRecord, 'kind'>): boolean {
  return w.kind !== 'Lease' && w.kind !== 'Event';
}

/** The write site a fault of `run` hit, or undefined if its call was never made. */
export function siteHitBy(run: Pick<RunRecord, 'calls'>, fault: Fault): string | undefined {
  const call = run.calls[fault.at];
  if (!call) return undefined;
  if ((fault.kind === 'error' || fault.kind === 'timeout') && WRITE_VERBS.has(call.verb) && isWorkWrite(call))
    return writeSite(call);
  for (let i = fault.at - 1; i >= 0; i--) {
    const c = run.calls[i]!;
    if (c.incarnation === call.incarnation && WRITE_VERBS.has(c.verb) && isWorkWrite(c) && c.outcome === 'ok')
      return writeSite(c);
  }
  return BEFORE_ANY_WRITE;
}

/** Accumulates coverage over runs. */
export class FaultCoverageCounter {
  private readonly sites = new Map<string, Map<SimulationFaultKind, number>>();
  private readonly written = new Set<string>();

  add(run: Pick<RunRecord, 'calls' | 'writes' | 'faults'>): void {
    for (const w of run.writes) if (isWorkWrite(w)) this.written.add(writeSite(w));
    for (const f of run.faults) this.hit(siteHitBy(run, f), f.kind);
  }

  hit(site: string | undefined, kind: SimulationFaultKind): void {
    if (site === undefined) return;
    let kinds = this.sites.get(site);
    if (!kinds) this.sites.set(site, (kinds = new Map()));
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }

  coverage(): FaultCoverage {
    const sites = new Map([...this.sites].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
    return { sites, unhit: [...this.written].filter((s) => !sites.has(s)).sort() };
  }
}

/** The coverage as text: one line per write site, its fault kinds and counts. */
export function formatCoverage(coverage: FaultCoverage): string {
  const lines = [...coverage.sites].map(
    ([site, kinds]) =>
      `  ${site}: ${[...kinds]
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))
        .map(([k, n]) => `${k} ×${n}`)
        .join(', ')}`,
  );
  if (coverage.unhit.length > 0) lines.push(`  never hit: ${coverage.unhit.join(', ')}`);
  return lines.join('\n');
}
