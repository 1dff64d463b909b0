/**
 * The budget of one simulated run, so that no seed can hang a test: a key reconciled without end,
 * or a run that never settles, ends the run with a quiescence finding that names the key and its
 * reconcile rate. Three bounds, checked at every reconcile start and every API call:
 *
 * - a hot key: more than `hotKeyReconcilesPerSecond` reconciles of one key within one second of
 *   fake time (a requeue of a few milliseconds, a delay given in the wrong unit);
 * - reconciles: more than `reconciles` in the whole run, all keys and processes together;
 * - real time: the run took longer than `realTimeMs` on the machine (the only bound that depends on
 *   the machine: it is the backstop, not the detector).
 *
 * Fake time is bounded by the run's shape itself: the scenario, then at most `settleMs` of settling,
 * then the quiet window — and a run that does not settle in `settleMs` is judged by the quiescence
 * oracle on its quiet window.
 */

/** What a run may spend. */
export interface SimulationBudget {
  /** Reconciles of one key within one second of fake time that mark it hot. @defaultValue {@link DEFAULT_HOT_KEY_RECONCILES_PER_SECOND} */
  readonly hotKeyReconcilesPerSecond?: number;
  /** Reconciles in one run, every key and process together. @defaultValue {@link DEFAULT_BUDGET_RECONCILES} */
  readonly reconciles?: number;
  /** Real (wall-clock) time of one run. @defaultValue {@link DEFAULT_BUDGET_REAL_TIME_MS} */
  readonly realTimeMs?: number;
}

/**
 * A failing key is retried with backoff (5 ms doubling: about 8 tries in its first second) and
 * events are deduplicated while a key waits, so a correct operator stays far below this; a requeue
 * of under 10 ms at steady state goes well above it. Slower loops are the quiet window's to catch.
 * @defaultValue 100
 */
export const DEFAULT_HOT_KEY_RECONCILES_PER_SECOND = 100;
/** Two orders of magnitude above the reference operator's 20-step scenario. @defaultValue 20,000 */
export const DEFAULT_BUDGET_RECONCILES = 20_000;
/** A seed takes tens of milliseconds; this only stops what would otherwise hang. @defaultValue 30,000 ms */
export const DEFAULT_BUDGET_REAL_TIME_MS = 30_000;

const WINDOW_MS = 1_000;

/** Why a run was stopped. */
export interface BudgetExhausted {
  readonly bound: 'hot-key' | 'reconciles' | 'real-time';
  /** The key reconciled most in the last second of fake time (`controller namespace/name`). */
  readonly key: string | undefined;
  /** Its reconciles in that second. */
  readonly perSecond: number;
  readonly reconciles: number;
  readonly atMs: number;
  readonly realMs: number;
  readonly message: string;
}

/** Counts one run's reconciles against its budget. */
export class RunBudget {
  private readonly hotPerSecond: number;
  private readonly maxReconciles: number;
  private readonly realTimeMs: number;
  private readonly startedReal = performance.now();
  private readonly recent = new Map<string, number[]>();
  private reconciles = 0;
  private exhausted: BudgetExhausted | undefined;

  constructor(budget: SimulationBudget = {}) {
    this.hotPerSecond = budget.hotKeyReconcilesPerSecond ?? DEFAULT_HOT_KEY_RECONCILES_PER_SECOND;
    this.maxReconciles = budget.reconciles ?? DEFAULT_BUDGET_RECONCILES;
    this.realTimeMs = budget.realTimeMs ?? DEFAULT_BUDGET_REAL_TIME_MS;
  }

  /** The first bound crossed, once one was. */
  get exhaustion(): BudgetExhausted | undefined {
    return this.exhausted;
  }

  /** A reconcile of `key` starts at fake time `nowMs`; returns the exhaustion if this crossed a bound. */
  reconcileStarted(key: string, nowMs: number): BudgetExhausted | undefined {
    if (this.exhausted) return this.exhausted;
    this.reconciles++;
    let times = this.recent.get(key);
    if (!times) this.recent.set(key, (times = []));
    times.push(nowMs);
    while (times[0]! <= nowMs - WINDOW_MS) times.shift();
    if (times.length > this.hotPerSecond)
      return this.exhaust(
        'hot-key',
        nowMs,
        times[0] === nowMs
          ? `${key} was reconciled ${times.length} times at one instant of fake time (more than ${this.hotPerSecond} in a second): ` +
              'a requeue with no delay that never ends'
          : `${key} was reconciled ${times.length} times within one second of fake time (more than ${this.hotPerSecond}): ` +
              'a requeue that never ends, every few milliseconds (a delay in the wrong unit — seconds passed as milliseconds — or a requeue on every result)',
        key,
      );
    if (this.reconciles > this.maxReconciles)
      return this.exhaust(
        'reconciles',
        nowMs,
        `the run used its budget of ${this.maxReconciles} reconciles before it settled: the operator never comes to rest`,
      );
    return this.checkRealTime(nowMs);
  }

  /** Checks the real-time bound (at API calls and between the driver's steps). */
  checkRealTime(nowMs: number): BudgetExhausted | undefined {
    if (this.exhausted) return this.exhausted;
    if (performance.now() - this.startedReal <= this.realTimeMs) return undefined;
    return this.exhaust(
      'real-time',
      nowMs,
      `the run took more than ${this.realTimeMs} ms of real time (at ${nowMs} ms of fake time): the operator works without end ` +
        '(this bound depends on the machine: replay the seed to see whether it recurs)',
    );
  }

  private busiest(nowMs: number): { key: string | undefined; perSecond: number } {
    let best: { key: string | undefined; perSecond: number } = { key: undefined, perSecond: 0 };
    for (const [key, times] of this.recent) {
      const n = times.filter((t) => t > nowMs - WINDOW_MS).length;
      if (n > best.perSecond || (n === best.perSecond && best.key !== undefined && key < best.key))
        best = { key, perSecond: n };
    }
    return best;
  }

  private exhaust(bound: BudgetExhausted['bound'], nowMs: number, why: string, hotKey?: string): BudgetExhausted {
    const busiest = hotKey ? { key: hotKey, perSecond: this.recent.get(hotKey)!.length } : this.busiest(nowMs);
    const rate =
      busiest.key === undefined ? '' : `; the busiest key, ${busiest.key}, at ${busiest.perSecond} reconciles/s`;
    this.exhausted = {
      bound,
      ...busiest,
      reconciles: this.reconciles,
      atMs: nowMs,
      realMs: Math.round(performance.now() - this.startedReal),
      message: `${why}${rate}. The run was stopped at ${nowMs} ms of fake time after ${this.reconciles} reconciles; its other oracles were not judged (a run cut short has no end state)`,
    };
    return this.exhausted;
  }
}
