/**
 * Seeded fault schedules and their shrinking. A schedule is drawn from the seed alone (plus the
 * number of calls the fault-free run made, which bounds where faults can fire), so a seed names
 * one schedule on any machine. Shrinking removes faults one at a time while the run still fails
 * (delta debugging's last, finest pass): what is left is a schedule none of whose faults can go.
 */
import { InvalidOptionError } from '../../core/errors.js';
import { FAULT_KINDS, type Fault, type SimulationFaultKind } from './fault.js';

export interface FaultMix {
  /** Relative weight of each fault kind; a kind absent or 0 never fires. @defaultValue {@link DEFAULT_FAULT_WEIGHTS} */
  readonly weights?: Partial<Readonly<Record<SimulationFaultKind, number>>>;
  /** Faults drawn per run. @defaultValue {@link DEFAULT_FAULTS_PER_RUN} */
  readonly faultsPerRun?: number;
}

/** Crashes and stale restarts most (most operator bugs Sieve found were intermediate and stale states), then errors. */
export const DEFAULT_FAULT_WEIGHTS: Readonly<Record<SimulationFaultKind, number>> = {
  crash: 3,
  'stale-restart': 3,
  error: 3,
  timeout: 2,
  'stale-cache': 2,
  coalesce: 1,
  'drop-events': 1,
  'watch-expiry': 1,
  'leader-change': 1,
};

/** @defaultValue 3 */
export const DEFAULT_FAULTS_PER_RUN = 3;

/**
 * Share of faults placed at a write of the fault-free run (a crash just after it, between it and the
 * next call; an error or timeout on it) rather than at any call: most calls are reads and watches,
 * and the states Sieve found bugs in are those between two writes.
 */
export const WRITE_BIAS = 0.75;

/** Where the fault-free run wrote: each write's call, and the first call made after it completed. */
export interface WritePoint {
  readonly at: number;
  readonly nextAt: number;
}

/**
 * `count` faults at distinct calls in [0, horizon), ordered by `at`, drawn from `random`;
 * `writes` (the fault-free run's) draws {@link WRITE_BIAS} of them to writes.
 */
export function drawFaults(
  random: () => number,
  horizon: number,
  mix: FaultMix = {},
  writes: readonly WritePoint[] = [],
): Fault[] {
  const weights = { ...DEFAULT_FAULT_WEIGHTS, ...mix.weights };
  const kinds = FAULT_KINDS.filter((k) => (weights[k] ?? 0) > 0);
  const count = mix.faultsPerRun ?? DEFAULT_FAULTS_PER_RUN;
  if (!(count >= 0) || !Number.isInteger(count))
    throw new InvalidOptionError('faultsPerRun', 'must be an integer >= 0');
  if (kinds.length === 0 || count === 0 || horizon < 1) return [];
  const total = kinds.reduce((sum, k) => sum + weights[k]!, 0);
  const pick = (): SimulationFaultKind => {
    let x = random() * total;
    for (const k of kinds) {
      x -= weights[k]!;
      if (x < 0) return k;
    }
    return kinds[kinds.length - 1]!;
  };
  const ms = (from: number, span: number): number => from + Math.floor(random() * span);
  const used = new Set<number>();
  const faults: Fault[] = [];
  for (let i = 0; i < Math.min(count, horizon); i++) {
    const kind = pick();
    const write = writes.length > 0 && random() < WRITE_BIAS ? writes[Math.floor(random() * writes.length)] : undefined;
    // A process killed at a call also loses its calls in flight: a crash "after a write" fires at
    // the first call made after the write completed, not at the next index (often a Lease renewal
    // started while the write was on its way).
    const after = kind === 'crash' || kind === 'stale-restart' || kind === 'leader-change';
    let at = write ? Math.min(horizon - 1, after ? write.nextAt : write.at) : Math.floor(random() * horizon);
    while (used.has(at)) at = (at + 1) % horizon;
    used.add(at);
    switch (kind) {
      case 'crash':
        faults.push({ kind, at, restartAfterMs: ms(0, 2_000) });
        break;
      case 'stale-restart':
        faults.push({ kind, at, restartAfterMs: ms(0, 2_000), lagRevisions: ms(1, 16) });
        break;
      case 'error':
        faults.push({ kind, at, status: ([409, 429, 500] as const)[Math.floor(random() * 3)]! });
        break;
      case 'timeout':
        faults.push({ kind, at, committed: random() < 0.5 });
        break;
      case 'stale-cache':
      case 'coalesce':
      case 'drop-events':
        faults.push({ kind, at, forMs: ms(200, 1_800) });
        break;
      case 'watch-expiry':
        faults.push({ kind, at });
        break;
      case 'leader-change':
        // Up to 10 s: a partitioned old leader may run on well past the new one's election.
        faults.push({ kind, at, overlapMs: ms(200, 9_800) });
        break;
    }
  }
  return faults.sort((a, b) => a.at - b.at);
}

/**
 * The smallest sub-schedule (by one-at-a-time removal, to a fixed point) for which `fails` still
 * holds; `fails(faults)` runs the simulation. At most `maxRuns` runs.
 */
export async function shrinkFaults(
  faults: readonly Fault[],
  fails: (faults: readonly Fault[]) => Promise<boolean>,
  maxRuns = 4 * faults.length + 4,
): Promise<{ faults: Fault[]; runs: number }> {
  let current = [...faults];
  let runs = 0;
  for (let progress = true; progress && runs < maxRuns;) {
    progress = false;
    for (let i = 0; i < current.length && runs < maxRuns; i++) {
      const without = current.filter((_, j) => j !== i);
      runs++;
      if (await fails(without)) {
        current = without;
        progress = true;
        i--;
      }
    }
  }
  return { faults: current, runs };
}
