/**
 * Crash points by enumeration (Sieve's intermediate and stale states, swept rather than drawn): the
 * scenario runs once without faults; then, for every write the operator made in that run, once with
 * the operator crashing right after that write (at the first call it makes once the write has
 * completed) and restarting, and once restarting against a stale cache that lists the store as it
 * was just before that write. Each run is judged by every oracle, the end state against the
 * fault-free run. Runs replay exactly (simulate.ts), so crash point N of a sweep is the same state
 * on any machine; `SIM_CRASH_POINTS=3,7-9` runs only those.
 *
 * The size is the fault-free run's writes (Leases and Events left out) times the kinds swept: for a
 * small scenario, seconds. The report gives the crash points explored, the writes and write sites
 * they cover, and for each failing point the write it followed, the findings and a replay command.
 */
import { describeFault, type Fault } from './fault.js';
import { FaultCoverageCounter, formatCoverage, isWorkWrite, writeSite, type FaultCoverage } from './fault-coverage.js';
import {
  parseNumberList,
  replayCommandFor,
  runSimulation,
  SimulationError,
  type SimulationOptions,
} from './simulate.js';
import type { Finding, RunRecord, WriteRecord } from './simulation-records.js';
import { formatFinding } from './format-finding.js';

export type CrashPointKind = 'crash' | 'stale-restart';

export interface CrashSweepOptions {
  /** What happens after each write. @defaultValue {@link DEFAULT_CRASH_POINT_KINDS} */
  readonly kinds?: readonly CrashPointKind[];
  /** Fake time between the crash and the restart. @defaultValue {@link DEFAULT_SWEEP_RESTART_AFTER_MS} */
  readonly restartAfterMs?: number;
  /** Stop after this many failing crash points. @defaultValue every point runs */
  readonly maxFailures?: number;
}

/** A crash after every write, and a restart against the cache as it was before it. @defaultValue crash, stale-restart */
export const DEFAULT_CRASH_POINT_KINDS: readonly CrashPointKind[] = ['crash', 'stale-restart'];
/** Short, so the restart comes before the next scenario step changes the picture. @defaultValue 100 ms */
export const DEFAULT_SWEEP_RESTART_AFTER_MS = 100;

/** One point of the sweep: a fault right after one write of the fault-free run. */
export interface CrashPoint {
  /** 1-based, in the order of the writes (what `SIM_CRASH_POINTS` names). */
  readonly index: number;
  /** The write it follows (of the fault-free run). */
  readonly write: WriteRecord;
  /** `create ConfigMap`, `patch Widget/status`. */
  readonly site: string;
  readonly fault: Fault;
}

export interface CrashPointFailure {
  /** Undefined when the fault-free run itself failed. */
  readonly point: CrashPoint | undefined;
  readonly findings: readonly Finding[];
  readonly replay: string;
}

export interface CrashSweepReport {
  /** Writes of the fault-free run the sweep follows (Leases and Events left out). */
  readonly writes: number;
  /** Distinct write sites among them. */
  readonly sites: number;
  /** Crash points enumerated (writes × kinds, less points sharing one call). */
  readonly crashPoints: number;
  /** Crash points run (all, or those `SIM_CRASH_POINTS` names). */
  readonly explored: number;
  readonly clean: number;
  readonly failures: readonly CrashPointFailure[];
  /** Which write sites each fault kind hit. */
  readonly coverage: FaultCoverage;
  format(): string;
}

/** Every crash point of a fault-free run. */
export function enumerateCrashPoints(faultFree: RunRecord, sweep: CrashSweepOptions = {}): CrashPoint[] {
  const kinds = sweep.kinds ?? DEFAULT_CRASH_POINT_KINDS;
  const restartAfterMs = sweep.restartAfterMs ?? DEFAULT_SWEEP_RESTART_AFTER_MS;
  const points: CrashPoint[] = [];
  const taken = new Set<string>();
  for (const write of faultFree.writes.filter(isWorkWrite)) {
    // A process killed at a call loses its calls in flight too: "after the write" is the first call
    // made once the write completed (one started earlier, in flight, would take the write with it).
    const next = faultFree.calls[write.nextCallAt ?? faultFree.calls.length];
    if (!next) continue;
    for (const kind of kinds) {
      if (taken.has(`${kind}@${next.at}`)) continue;
      taken.add(`${kind}@${next.at}`);
      // Lists served at the store's revision when the write was sent: the restarted process has not seen it.
      const lagRevisions = Math.max(
        1,
        Number(next.storeRevision ?? 0) - Number(faultFree.calls[write.at]?.storeRevision ?? 0),
      );
      const fault: Fault =
        kind === 'crash'
          ? { kind, at: next.at, restartAfterMs }
          : { kind, at: next.at, restartAfterMs, lagRevisions: Number.isFinite(lagRevisions) ? lagRevisions : 1 };
      points.push({ index: points.length + 1, write, site: writeSite(write), fault });
    }
  }
  return points;
}

/** Runs `options`' scenario once per crash point (see the module comment). */
export async function sweepCrashPoints(
  options: SimulationOptions,
  sweep: CrashSweepOptions = {},
): Promise<CrashSweepReport> {
  const replay = (env: string): string => replayCommandFor(env, options.replayFile, options.replayTestName);
  const faultFree = await runSimulation(options, { seed: 0, faults: [] });
  const writes = faultFree.record.writes.filter(isWorkWrite);
  const sites = new Set(writes.map(writeSite)).size;
  const coverage = new FaultCoverageCounter();
  const points = enumerateCrashPoints(faultFree.record, sweep);
  const only = process.env.SIM_CRASH_POINTS;
  const chosen = only ? new Set(parseNumberList('SIM_CRASH_POINTS', only, 'a crash point or a range')) : undefined;
  const failures: CrashPointFailure[] = [];
  let explored = 0;
  let clean = 0;
  if (faultFree.findings.length > 0) {
    failures.push({ point: undefined, findings: faultFree.findings, replay: replay('SIM_CRASH_POINTS=0') });
  } else {
    for (const point of points) {
      if (chosen && !chosen.has(point.index)) continue;
      explored++;
      const run = await runSimulation(options, { seed: 0, faults: [point.fault] }, faultFree.record);
      coverage.add(run.record);
      if (run.findings.length === 0) {
        clean++;
        continue;
      }
      failures.push({ point, findings: run.findings, replay: replay(`SIM_CRASH_POINTS=${point.index}`) });
      if (failures.length >= (sweep.maxFailures ?? Number.POSITIVE_INFINITY)) break;
    }
  }
  if (chosen && faultFree.findings.length === 0 && explored === 0)
    throw new SimulationError(`SIM_CRASH_POINTS names no crash point of this sweep (it has ${points.length})`);
  const covered = coverage.coverage();
  return {
    writes: writes.length,
    sites,
    crashPoints: points.length,
    explored,
    clean,
    failures,
    coverage: covered,
    format: () =>
      [
        `crash-point sweep: ${explored} of ${points.length} crash points explored after ${writes.length} writes (${sites} write sites); ${clean} clean, ${failures.length} failing`,
        ...failures.map((f) =>
          [
            f.point
              ? `crash point ${f.point.index} failed — ${describeFault(f.point.fault)} after write call ${f.point.write.at} (${f.point.site} ${f.point.write.namespace ? `${f.point.write.namespace}/` : ''}${f.point.write.name}) — replay: ${f.replay}`
              : `the fault-free run failed — replay: ${f.replay}`,
            ...f.findings.map((x) => `  ${formatFinding(x)}`),
          ].join('\n'),
        ),
        'coverage (write site: fault kinds that hit it):',
        formatCoverage(covered),
      ].join('\n'),
  };
}
