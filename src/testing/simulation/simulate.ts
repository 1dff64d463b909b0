/**
 * The simulation driver: the user's own operator (their manager set-up function, unchanged) against
 * the FakeClient on a FakeClock, driven by a scenario, under a seeded fault schedule, judged by the
 * oracles (oracles.ts). One run:
 *
 * 1. A fresh store and clock; the history recorder follows every kind named.
 * 2. Process 0 is built by `setup` with its own client (the fault layer, simulated-cluster.ts), the
 *    clock, a span logger and a fresh registry, and started. A crash aborts its manager and builds
 *    a fresh one from the same `setup` against the same store after `restartAfterMs`; a leader
 *    change starts one beside it. A manager that stops by itself is restarted after
 *    {@link SUPERVISOR_RESTART_MS}, as a Deployment would.
 * 3. The scenario's steps, `afterMs` apart; a garbage collector runs every
 *    {@link GC_INTERVAL_MS} (the fake has none of its own).
 * 4. Settle: faults stop; time runs until the newest process's controllers have started and
 *    nothing but Leases has been written, and nothing reconciled, for {@link SETTLED_AFTER_MS} (or
 *    `settleMs` passes); then the quiet window (`quietWindowMs`), whose writes and reconciles the
 *    quiescence oracle counts.
 *
 * Nothing is left to chance: the seed draws the schedule; each call's latency and — for the length
 * of a run — `Math.random` itself (the library's jitter: watch backoff, leader election; the fake's
 * generated names) come from one fixed stream ({@link ENVIRONMENT_SEED}). That makes runs exclusive:
 * one at a time per process.
 *
 * `simulate()` runs the fault-free run of the scenario once (the end-state oracle's reference; if it
 * fails the oracles itself, that is the report), then each seed; the schedule of a failing seed is
 * shrunk and reported with the command that replays it.
 */
import { Registry } from 'prom-client';
import { ApiError, isAlreadyExists } from '../../client/api-error.js';
import type { Client } from '../../client/contracts.js';
import type { ResourceType } from '../../client/discovery.js';
import type { Clock } from '../../core/clock.js';
import { InvalidOptionError, OperatorRuntimeError } from '../../core/errors.js';
import { FakeClock, flushMicrotasks } from '../../core/fake-clock.js';
import { isLeadershipLost } from '../../core/leadership-lost.js';
import type { Logger } from '../../core/logger.js';
import type { KubeObject } from '../../core/object-key.js';
import { seededRandom } from '../../core/seeded-random.js';
import { Manager } from '../../manager/manager.js';
import { FakeClient, type FakeClientOptions } from '../fake-client/fake-client.js';
import { describeFault, type Fault } from './fault.js';
import { drawFaults, shrinkFaults, type FaultMix } from './fault-schedule.js';
import { HistoryRecorder } from './history-recorder.js';
import { evidenceAttributor, findingKey, isOfKinds } from './oracle-evidence.js';
import { endStateOracle } from './end-state-oracle.js';
import { DEFAULT_END_STATE_IGNORED_KINDS } from './normalize-object.js';
import { judgeRun, type OracleOptions } from './oracles.js';
import { describeStep, targetOfStep, type Scenario, type ScenarioStep } from './scenario.js';
import { SimulatedCluster, type SimulatedClusterHooks } from './simulated-cluster.js';
import type { Finding, ReconcileSpan, RunRecord, WriteRecord } from './simulation-records.js';
import { SpanLogger } from './span-logger.js';
import { FaultCoverageCounter, formatCoverage, type FaultCoverage } from './fault-coverage.js';
import { findingTrace, formatFinding } from './format-finding.js';
import { RunBudget, type BudgetExhausted, type SimulationBudget } from './run-budget.js';
import { escapeRegExp } from '../../core/escape-reg-exp.js';
import { SimulatedExternalService, type ExternalService, type ExternalServiceOptions } from './external-service.js';

/** What `setup` is given for each operator process. */
export interface OperatorSetupOptions {
  /** This process's client (the fault layer over the shared store). */
  readonly client: Client;
  readonly clock: Clock;
  /** Must reach the manager: the simulation follows reconciles through the controllers' log lines. */
  readonly logger: Logger;
  readonly registry: Registry;
  /** 0 for the first process, +1 per restart or new leader (e.g. for a leader election identity). */
  readonly incarnation: number;
  /**
   * This process's handle on the external service declared as `name` in the simulation's
   * `services` (external-service.ts); throws for a name not declared.
   */
  service<S = Record<string, unknown>>(name: string): ExternalService<S>;
}

/** The user's manager set-up: builds (does not start) the operator on the given client and clock. */
export type OperatorSetup = (
  options: OperatorSetupOptions,
) => Manager | { readonly manager: Manager } | Promise<Manager | { readonly manager: Manager }>;

export interface SimulationOptions extends Omit<OracleOptions, 'primaryKinds'> {
  readonly setup: OperatorSetup;
  /**
   * The steps; or a function of the seed (e.g. `(seed) => generateScenario({ kind, seed })`), which
   * gives every seed its own scenario, and its own fault-free run to compare with.
   */
  readonly scenario: Scenario | ((seed: number) => Scenario);
  /**
   * The differential oracle: the fault-free run of the scenario must end as a fault-free run that
   * creates each live primary object directly in its final spec (the same desired state by another
   * path). @defaultValue false
   */
  readonly differential?: boolean;
  /** The kinds the operator reconciles (convergence is asked of these). */
  readonly primaryKinds: readonly ResourceType[];
  /** Other kinds it writes (children, external records): recorded and compared at the end. */
  readonly ownedKinds?: readonly ResourceType[];
  /**
   * External services the operator calls, by name: simulated slow, failing and lying
   * (external-service.ts); `setup` gets each from `service(name)`. @defaultValue none
   */
  readonly services?: Readonly<Record<string, ExternalServiceOptions>>;
  /** The store: kinds/CRDs to serve, objects present from the start. */
  readonly cluster?: Pick<FakeClientOptions, 'kinds' | 'crds' | 'objects' | 'requireNamespaces'>;
  /** Seeds to run: a list, or how many (1…n). @defaultValue {@link DEFAULT_SEEDS} */
  readonly seeds?: readonly number[] | number;
  readonly faults?: FaultMix;
  /** @defaultValue {@link DEFAULT_STEP_GAP_MS} */
  readonly stepGapMs?: number;
  /** Upper bound of the settling after the last step. @defaultValue {@link DEFAULT_SETTLE_MS} */
  readonly settleMs?: number;
  /** @defaultValue {@link DEFAULT_QUIET_WINDOW_MS} */
  readonly quietWindowMs?: number;
  /**
   * What one run may spend before it is stopped with a quiescence finding (a hot key, too many
   * reconciles, too much real time): run-budget.ts. @defaultValue the `DEFAULT_*` of run-budget.ts
   */
  readonly budget?: SimulationBudget;
  /**
   * Also gets every log line of every operator process, bound to `incarnation` (e.g. a pino logger
   * while replaying one seed). @defaultValue none: the lines only feed the reconcile spans
   */
  readonly logger?: Logger;
  /** Shrink failing schedules. @defaultValue true */
  readonly shrink?: boolean;
  /** Stop after this many failing seeds. @defaultValue {@link DEFAULT_MAX_FAILURES} */
  readonly maxFailures?: number;
  /** The test file, for the replay command. @defaultValue `<your test file>` */
  readonly replayFile?: string;
  /** The test's name, for the replay command's `--test-name-pattern`. @defaultValue every test of the file */
  readonly replayTestName?: string;
}

/** @defaultValue 20 */
export const DEFAULT_SEEDS = 20;
/** @defaultValue 1,000 ms */
export const DEFAULT_STEP_GAP_MS = 1_000;
/** @defaultValue 60,000 ms */
export const DEFAULT_SETTLE_MS = 60_000;
/** Long enough for a requeue-every-second loop to show well above the quiescence bound. @defaultValue 10,000 ms */
export const DEFAULT_QUIET_WINDOW_MS = 10_000;
/** The first failing seed is shrunk and reported; more seeds would only repeat it. @defaultValue 1 */
export const DEFAULT_MAX_FAILURES = 1;
export const SUPERVISOR_RESTART_MS = 1_000;
export const GC_INTERVAL_MS = 500;
/** Settled: the newest process's controllers run, no write but Leases' and Events' and no reconcile for this long, no restart pending, no watch window open. */
export const SETTLED_AFTER_MS = 3_000;
const SETTLE_TICK_MS = 250;
/** A create step whose namesake is still terminating is retried this often, this many times. */
const RECREATE_RETRY_MS = 250;
const RECREATE_ATTEMPTS = 120;
/** Reconciles at one instant of fake time beyond which a process counts as livelocked. */
export const LIVELOCK_RECONCILES = 5_000;
const START_MS = Date.UTC(2026, 0, 1);
/** The seed the fault-free reference run is reported under. */
const FAULT_FREE_SEED = 0;
/**
 * Latencies and jitter come from this one fixed stream in every run, so every run is the fault-free
 * run until its first fault fires: a fault placed at a call of the fault-free run fires exactly
 * there, and removing a fault while shrinking leaves the others where they were. The seed draws the
 * schedule; the faults make the interleavings differ.
 */
const ENVIRONMENT_SEED = 0x5eed;

export class SimulationError extends OperatorRuntimeError {
  declare readonly code: 'ERR_SIMULATION';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_SIMULATION', message, options);
  }
}

/** One judged run. */
export interface SimulationRun {
  readonly record: RunRecord;
  readonly findings: readonly Finding[];
}

export interface SeedFailure {
  readonly seed: number;
  /** The schedule drawn for the seed; empty when the fault-free run itself failed. */
  readonly faults: readonly Fault[];
  /** The fewest of them that still fail. */
  readonly shrunk: readonly Fault[];
  /** Findings of the run with the shrunk schedule. */
  readonly findings: readonly Finding[];
  /** One line that replays the seed. */
  readonly replay: string;
  /** The minimal trace of the shrunk run that led to the first finding (format-finding.ts). */
  readonly trace: readonly string[];
}

export interface SimulationReport {
  readonly seedsRun: readonly number[];
  readonly clean: number;
  readonly failures: readonly SeedFailure[];
  /** Calls the fault-free run made (faults are drawn among these). */
  readonly faultFreeCalls: number;
  /** Which write sites each fault kind hit, over the seeds run (fault-coverage.ts). */
  readonly coverage: FaultCoverage;
  /** The failures as text: seed, replay command, shrunk faults, findings, the minimal trace. */
  format(): string;
  /** The coverage as text: per write site, the fault kinds that hit it and how often. */
  formatCoverage(): string;
}

/** Seeds from `SIM_SEED=7` or `SIM_SEEDS=1,5,10-20`, else `defaults` (what a replay command sets). */
export function simulationSeeds(defaults: readonly number[]): readonly number[];
export function simulationSeeds(defaults: readonly number[] | number): readonly number[] | number;
export function simulationSeeds(defaults: readonly number[] | number): readonly number[] | number {
  const spec = process.env.SIM_SEED ?? process.env.SIM_SEEDS;
  if (!spec) return defaults;
  return parseNumberList('SIM_SEEDS', spec, 'a seed or a range of seeds');
}

/** `1,5,10-20` as numbers; `variable` names the source in the error. */
export function parseNumberList(variable: string, spec: string, what: string): number[] {
  return spec.split(',').flatMap((part) => {
    const [from, to] = part.split('-').map((n) => Number(n.trim()));
    if (!Number.isInteger(from) || (to !== undefined && !Number.isInteger(to)))
      throw new InvalidOptionError(variable, `not ${what}: ${JSON.stringify(part)}`);
    return to === undefined ? [from!] : Array.from({ length: to - from! + 1 }, (_, i) => from! + i);
  });
}

/** The command that replays `seed` of the test in `file` (only the tests named `testName`, when given). */
export function replayCommand(seed: number, file = '<your test file>', testName?: string): string {
  return replayCommandFor(`SIM_SEED=${seed}`, file, testName);
}

/** The command that runs the test in `file` (only those named `testName`) with `env` set. */
export function replayCommandFor(env: string, file = '<your test file>', testName?: string): string {
  const only = testName ? ` --test-name-pattern=${JSON.stringify(escapeRegExp(testName))}` : '';
  return `${env} NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx --test${only} ${file}`;
}

export async function simulate(options: SimulationOptions): Promise<SimulationReport> {
  const seeds = seedList(options.seeds ?? DEFAULT_SEEDS);
  if (typeof options.scenario === 'function') return simulateGenerated(options, options.scenario, seeds);
  const faultFree = await faultFreeRun(options);
  const failures: SeedFailure[] = [];
  const seedsRun: number[] = [];
  let clean = 0;
  const coverage = new FaultCoverageCounter();
  const maxFailures = options.maxFailures ?? DEFAULT_MAX_FAILURES;
  const faultFreeCalls = faultFree.record.calls.length;
  if (faultFree.findings.length > 0) {
    const seed = seeds[0] ?? FAULT_FREE_SEED;
    failures.push({
      seed,
      faults: [],
      shrunk: [],
      findings: faultFree.findings,
      replay: replayCommand(seed, options.replayFile, options.replayTestName),
      trace: findingTrace(faultFree.record, faultFree.findings[0]!),
    });
    return report([seed], 0, failures, faultFreeCalls, coverage);
  }
  for (const seed of seeds) {
    seedsRun.push(seed);
    const faults = scheduleFor(options, seed, faultFree.record);
    const run = await runSimulation(options, { seed, faults }, faultFree.record);
    coverage.add(run.record);
    if (run.findings.length === 0) {
      clean++;
      continue;
    }
    failures.push(await shrunkFailure(options, seed, run, faultFree.record));
    if (failures.length >= maxFailures) break;
  }
  return report(seedsRun, clean, failures, faultFreeCalls, coverage);
}

/** Each seed with its own scenario: its fault-free run (and differential check), then its faults. */
async function simulateGenerated(
  options: SimulationOptions,
  scenarioFor: (seed: number) => Scenario,
  seeds: readonly number[],
): Promise<SimulationReport> {
  const failures: SeedFailure[] = [];
  const seedsRun: number[] = [];
  const coverage = new FaultCoverageCounter();
  let clean = 0;
  let faultFreeCalls = 0;
  for (const seed of seeds) {
    seedsRun.push(seed);
    const fixed: SimulationOptions = { ...options, scenario: scenarioFor(seed) };
    const faultFree = await faultFreeRun(fixed);
    faultFreeCalls = Math.max(faultFreeCalls, faultFree.record.calls.length);
    const replay = replayCommand(seed, options.replayFile, options.replayTestName);
    if (faultFree.findings.length > 0) {
      failures.push({
        seed,
        faults: [],
        shrunk: [],
        findings: faultFree.findings,
        replay,
        trace: findingTrace(faultFree.record, faultFree.findings[0]!),
      });
    } else {
      const faults = scheduleFor(fixed, seed, faultFree.record);
      const run = await runSimulation(fixed, { seed, faults }, faultFree.record);
      coverage.add(run.record);
      if (run.findings.length === 0) clean++;
      else failures.push(await shrunkFailure(fixed, seed, run, faultFree.record));
    }
    if (failures.length >= (options.maxFailures ?? DEFAULT_MAX_FAILURES)) break;
  }
  return report(seedsRun, clean, failures, faultFreeCalls, coverage);
}

/**
 * The fault-free run, judged; with `differential`, also against a fault-free run that creates the
 * live primary objects directly in their final spec (differential findings join its findings).
 */
async function faultFreeRun(options: SimulationOptions): Promise<SimulationRun> {
  const faultFree = await runSimulation(options, { seed: FAULT_FREE_SEED, faults: [] });
  if (!options.differential || faultFree.findings.length > 0) return faultFree;
  const direct = await runSimulation(
    { ...options, scenario: directScenario(faultFree.record, options.primaryKinds) },
    { seed: FAULT_FREE_SEED, faults: [] },
  );
  const differences = endStateOracle(faultFree.record, direct.record, {
    ...(options.normalize ? { normalize: options.normalize } : {}),
    ignoredKinds: options.endStateIgnoredKinds ?? DEFAULT_END_STATE_IGNORED_KINDS,
  }).map((f): Finding => ({
    ...f,
    oracle: 'differential',
    message: `${f.message.replace(/this one|here/g, 'the scenario').replace(/the fault-free run|the fault-free one|without faults/g, 'the direct path')} — the same desired state reached by another path (each object created in its final spec) ends elsewhere: the operator's result depends on the path (a field it sets only on create, a leftover of an earlier spec)`,
  }));
  return { ...faultFree, findings: [...faultFree.findings, ...differences, ...direct.findings] };
}

/** Creates of every live primary object of `run`, in its final spec, labels and annotations. */
function directScenario(run: RunRecord, primaryKinds: SimulationOptions['primaryKinds']): Scenario {
  return run.finalObjects
    .filter((o) => isOfKinds(o, primaryKinds) && o.metadata?.deletionTimestamp === undefined)
    .map((o) => {
      const { apiVersion, kind, metadata, status: _status, ...rest } = o as KubeObject & { status?: unknown };
      const { name, namespace, labels, annotations } = metadata ?? {};
      return {
        type: 'create' as const,
        object: { apiVersion, kind, metadata: { name, namespace, labels, annotations }, ...rest } as KubeObject,
      };
    });
}

/** The schedule `simulate()` draws for `seed`, placed among the fault-free run's calls and writes. */
export function scheduleFor(options: Pick<SimulationOptions, 'faults'>, seed: number, faultFree: RunRecord): Fault[] {
  const writes = faultFree.writes
    .filter((w) => w.kind !== 'Lease' && w.kind !== 'Event')
    .map((w) => ({
      at: w.at,
      // A write's atMs is when it completed.
      nextAt: faultFree.calls.find((c) => c.at > w.at && c.atMs >= w.atMs)?.at ?? faultFree.calls.length,
    }));
  return drawFaults(seededRandom(seed), faultFree.calls.length, options.faults, writes);
}

/**
 * Replays one seed as `simulate()` runs it (fault-free reference run, the schedule of the seed) without
 * shrinking: for asserting determinism, or looking at one run's record.
 */
export async function replaySeed(options: SimulationOptions, seed: number): Promise<SimulationRun> {
  if (typeof options.scenario === 'function') options = { ...options, scenario: options.scenario(seed) };
  const faultFree = await runSimulation(options, { seed: FAULT_FREE_SEED, faults: [] });
  return runSimulation(options, { seed, faults: scheduleFor(options, seed, faultFree.record) }, faultFree.record);
}

async function shrunkFailure(
  options: SimulationOptions,
  seed: number,
  run: SimulationRun,
  faultFree: RunRecord,
): Promise<SeedFailure> {
  const oracle = run.findings[0]!.oracle;
  // Faults whose call was never made never fired: they go without a run.
  const fired = run.record.faults.filter((f) => f.at < run.record.calls.length);
  let last = run;
  let shrunk = fired;
  if (options.shrink ?? true) {
    const result = await shrinkFaults(fired, async (faults) => {
      const attempt = await runSimulation(options, { seed, faults }, faultFree);
      const fails = attempt.findings.some((f) => f.oracle === oracle);
      if (fails) last = attempt;
      return fails;
    });
    shrunk = result.faults;
    if (last.record.faults.length !== shrunk.length)
      last = await runSimulation(options, { seed, faults: shrunk }, faultFree);
  }
  return {
    seed,
    faults: run.record.faults,
    shrunk,
    findings: last.findings,
    replay: replayCommand(seed, options.replayFile, options.replayTestName),
    trace: last.findings[0] ? findingTrace(last.record, last.findings[0]) : [],
  };
}

function report(
  seedsRun: number[],
  clean: number,
  failures: SeedFailure[],
  faultFreeCalls: number,
  counter: FaultCoverageCounter,
): SimulationReport {
  const coverage = counter.coverage();
  return {
    seedsRun,
    clean,
    failures,
    faultFreeCalls,
    coverage,
    formatCoverage: () => formatCoverage(coverage),
    format: () =>
      failures
        .map((f) =>
          [
            `seed=${f.seed} failed — replay: ${f.replay}`,
            f.faults.length === 0
              ? '  faults: none (the fault-free run fails)'
              : `  faults (shrunk from ${f.faults.length} to ${f.shrunk.length}): ${f.shrunk.map(describeFault).join(', ') || "none (the seed's external-service faults, in the trace, are enough)"}`,
            ...f.findings.map((x) => `  ${formatFinding(x)}`),
            ...(f.trace.length > 0 ? ['  trace (steps, faults, and the reconciles and writes of that object):'] : []),
            ...f.trace.map((line) => `    ${line}`),
          ].join('\n'),
        )
        .join('\n'),
  };
}

function seedList(seeds: readonly number[] | number): number[] {
  if (typeof seeds !== 'number') return [...seeds];
  if (!(seeds >= 0) || !Number.isInteger(seeds))
    throw new InvalidOptionError('seeds', 'must be an integer >= 0 or a list');
  return Array.from({ length: seeds }, (_, i) => i + 1);
}

let running = false;

/**
 * One run of the scenario with exactly `faults`, judged (against `faultFree` for the end state; a
 * run without it is the reference run, judged on everything else).
 */
export async function runSimulation(
  options: SimulationOptions,
  run: { readonly seed: number; readonly faults: readonly Fault[] },
  faultFree?: RunRecord,
): Promise<SimulationRun> {
  if (running)
    throw new SimulationError(
      'another simulation is running in this process: runs seed Math.random while they last, so they cannot overlap',
    );
  running = true;
  const original = Math.random;
  // Library jitter and the fake's generated names draw from Math.random: seeded, they replay.
  Math.random = seededRandom(ENVIRONMENT_SEED);
  try {
    const { record, operatorErrors } = await execute(options, run);
    // A run cut short by its budget has no end state to judge: the budget's finding is the verdict.
    const findings = record.cutShort
      ? [record.cutShort]
      : [...judgeRun(record, faultFree, { ...options, primaryKinds: options.primaryKinds }), ...operatorErrors];
    return { record, findings };
  } finally {
    Math.random = original;
    running = false;
  }
}

interface Process {
  readonly incarnation: number;
  readonly abort: AbortController;
  done: Promise<void>;
  ended: boolean;
}

async function execute(
  options: SimulationOptions,
  run: { readonly seed: number; readonly faults: readonly Fault[] },
): Promise<{ record: RunRecord; operatorErrors: Finding[] }> {
  const clock = new FakeClock(START_MS);
  const store = new FakeClient({ ...options.cluster, clock, watchHistoryLimit: 1_000_000 });
  const kinds = [...options.primaryKinds, ...(options.ownedKinds ?? [])];
  const recorder = new HistoryRecorder({ store, kinds });
  await recorder.start();
  const trace: string[] = [];
  const now = (): number => clock.monotonicNow();
  const note = (line: string): void => void trace.push(line);

  const spans: (ReconcileSpan & { endSeq?: number; endedAtMs?: number; outcome?: string })[] = [];
  const open = new Map<string, number>();
  let seq = 0;
  let step = -1;
  const processes = new Map<number, Process>();
  let nextIncarnation = 0;
  let instant = { ms: -1, reconciles: 0 };
  /** Processes whose controllers started (leaders). */
  const working = new Set<number>();
  let pendingStarts = 0;
  let faultsOn = true;
  const operatorErrors: Finding[] = [];
  const stepTimesMs: number[] = [];
  const deletedByScenario: string[] = [];

  const stop = (incarnation: number, reason: string): void => {
    const p = processes.get(incarnation);
    if (!p || p.abort.signal.aborted) return;
    p.abort.abort(new SimulationError(reason));
  };
  const scheduleStart = (afterMs: number, staleLag?: number): void => {
    if (cutShort) return;
    pendingStarts++;
    clock.setTimer(afterMs, () => {
      pendingStarts--;
      if (!cutShort) start(staleLag);
    });
  };
  const budget = new RunBudget(options.budget);
  let cutShort: BudgetExhausted | undefined;
  /**
   * The run spent its budget (or livelocked): every process dies now and none restarts; the driver
   * ends the run. The managers are aborted at once (a loop at one instant of fake time would never
   * reach a timer), except from inside an API call (`deferStop`), which must not abort itself.
   */
  const cut = (exhausted: BudgetExhausted, deferStop = false): void => {
    if (cutShort) return;
    cutShort = exhausted;
    note(`${now()} budget exhausted (${exhausted.bound}): every process is stopped`);
    faultsOn = false;
    cluster.stopFaults();
    for (const p of processes.values()) {
      cluster.kill(p.incarnation);
      if (deferStop) clock.setTimer(0, () => stop(p.incarnation, 'budget exhausted'));
      else stop(p.incarnation, 'budget exhausted');
    }
  };
  const hooks: SimulatedClusterHooks = {
    called: () => {
      const exhausted = budget.checkRealTime(now());
      if (exhausted) cut(exhausted, true);
    },
    died: (incarnation, fault) => {
      // Deferred to a timer: the abort must not run inside the call that fired the fault.
      clock.setTimer(0, () => stop(incarnation, 'crashed'));
      scheduleStart(fault.restartAfterMs, fault.kind === 'stale-restart' ? fault.lagRevisions : undefined);
    },
    leaderChange: (incarnation, fault) => {
      if (!cluster.usesLeases(incarnation)) {
        // No leader election: two processes would both reconcile; a replacement is a restart.
        cluster.kill(incarnation);
        clock.setTimer(0, () => stop(incarnation, 'replaced'));
        scheduleStart(0);
        return;
      }
      cluster.failLeaseWrites(incarnation);
      scheduleStart(0);
      clock.setTimer(fault.overlapMs, () => {
        cluster.kill(incarnation);
        stop(incarnation, 'old leader died');
      });
    },
  };
  const cluster = new SimulatedCluster({
    store,
    clock,
    faults: run.faults,
    random: seededRandom(ENVIRONMENT_SEED + 1),
    hooks,
    trace: note,
  });
  const services = new Map(
    Object.entries(options.services ?? {}).map(([name, serviceOptions]) => [
      name,
      new SimulatedExternalService({
        name,
        options: serviceOptions,
        clock,
        cluster,
        seed: run.seed,
        // The fault-free run and the sweep (seed #0) see an honest service; seeded runs until faults stop.
        misbehaving: () => faultsOn && run.seed !== FAULT_FREE_SEED,
        trace: note,
      }),
    ]),
  );
  // What the services held as the run ended, before the processes are stopped (which takes fake time).
  const finalServices: { value?: RunRecord['services'] } = {};
  const serviceFor = (incarnation: number) => (name: string) => {
    const service = services.get(name);
    if (!service)
      throw new SimulationError(
        `setup asked for the external service ${JSON.stringify(name)}, which the simulation's services do not declare (declared: ${[...services.keys()].join(', ') || 'none'})`,
      );
    return service.clientFor(incarnation);
  };

  const start = (staleLag?: number): void => {
    const incarnation = nextIncarnation++;
    const client = cluster.clientFor(incarnation, staleLag);
    note(`${now()} #${incarnation} starts${staleLag ? ` (lists ${staleLag} revisions behind)` : ''}`);
    const logger = new SpanLogger(
      {
        controllerStarted: () => {
          if (cluster.isDead(incarnation)) return;
          working.add(incarnation);
          cluster.atWork(incarnation);
        },
        started: (controller, key, reconcileID) => {
          if (cluster.isDead(incarnation)) return;
          if (now() !== instant.ms) instant = { ms: now(), reconciles: 0 };
          if (++instant.reconciles > LIVELOCK_RECONCILES) {
            livelock(incarnation, controller, key);
            return;
          }
          const exhausted = budget.reconcileStarted(`${controller} ${key}`, now());
          if (exhausted) {
            cut(exhausted);
            return;
          }
          open.set(reconcileID, spans.length);
          spans.push({ controller, key, incarnation, startSeq: seq++, startedAtMs: now(), step });
          note(`${now()} #${incarnation} reconcile ${controller} ${key} starts`);
        },
        ended: (reconcileID, outcome) => {
          const i = open.get(reconcileID);
          if (i === undefined || cluster.isDead(incarnation)) return;
          open.delete(reconcileID);
          spans[i] = { ...spans[i]!, endSeq: seq++, endedAtMs: now(), outcome };
          note(`${now()} #${incarnation} reconcile ${spans[i]!.controller} ${spans[i]!.key} ends ${outcome}`);
        },
      },
      options.logger?.child({ incarnation }),
    );
    const abort = new AbortController();
    const p: Process = { incarnation, abort, done: Promise.resolve(), ended: false };
    processes.set(incarnation, p);
    p.done = (async () => {
      const built = await options.setup({
        client,
        clock,
        logger,
        registry: new Registry(),
        incarnation,
        service: serviceFor(incarnation) as OperatorSetupOptions['service'],
      });
      const manager = built instanceof Manager ? built : built.manager;
      await manager.start(abort.signal);
    })()
      .then(
        () => {
          if (!abort.signal.aborted) exited(incarnation, 'the manager stopped by itself');
        },
        (err: unknown) => {
          if (abort.signal.aborted || cluster.isDead(incarnation)) return;
          // A leader that lost its Lease stops, by design (fencing); a replaced one is not restarted.
          if (isLeadershipLost(err)) {
            note(`${now()} #${incarnation} lost leadership and stops`);
            cluster.kill(incarnation);
            if (!cluster.isReplacedLeader(incarnation)) scheduleStart(SUPERVISOR_RESTART_MS);
            return;
          }
          exited(incarnation, String(err));
        },
      )
      .finally(() => (p.ended = true));
  };
  /**
   * Reconciles without end at one instant of fake time (a requeue with no delay and no API call):
   * the clock would never move again. The process is stopped for good and that is a finding.
   */
  const livelock = (incarnation: number, controller: string, key: string): void => {
    note(`${now()} #${incarnation} livelock: stopped`);
    cluster.kill(incarnation);
    stop(incarnation, 'livelock');
    cut({
      bound: 'hot-key',
      key: `${controller} ${key}`,
      perSecond: Number.POSITIVE_INFINITY,
      reconciles: spans.length,
      atMs: now(),
      realMs: 0,
      message: `more than ${LIVELOCK_RECONCILES} reconciles started at one instant of fake time (the last of ${controller} ${key}): a requeue with no delay that never ends; the run was stopped and its other oracles were not judged`,
    });
  };
  /** The process exited on its own: a supervisor restarts it; once faults stopped, that is a finding. */
  const exited = (incarnation: number, why: string): void => {
    note(`${now()} #${incarnation} exits: ${why}`);
    cluster.kill(incarnation);
    if (!faultsOn)
      operatorErrors.push({
        oracle: 'operator-error',
        ...evidenceAttributor(partial())(now()),
        message: `operator process ${incarnation} stopped by itself after the faults stopped: ${why}`,
      });
    scheduleStart(SUPERVISOR_RESTART_MS);
  };
  const partial = (): RunRecord => record([], [], { writes: 0, reconcilesByKey: new Map() });
  const budgetFinding = (exhausted: BudgetExhausted): Finding => ({
    oracle: 'quiescence',
    ...(exhausted.key !== undefined ? { key: exhausted.key } : {}),
    ...evidenceAttributor(partial())(exhausted.atMs),
    message: exhausted.message,
  });
  const record = (
    history: RunRecord['history'],
    finalObjects: readonly KubeObject[],
    quietWindow: RunRecord['quietWindow'],
  ): RunRecord => ({
    seed: run.seed,
    faults: run.faults,
    calls: cluster.calls,
    writes: cluster.writes,
    reconciles: spans,
    history,
    finalObjects,
    quietWindow,
    stepTimesMs,
    deletedByScenario,
    trace,
    ...(services.size > 0
      ? {
          services:
            finalServices.value ?? Object.fromEntries([...services].map(([name, service]) => [name, service.state()])),
        }
      : {}),
  });

  let gcTimer = true;
  let collectedAt = '';
  const gc = (): void => {
    if (!gcTimer) return;
    // The store's own request log (a copy of every body) serves nobody here: the fault layer records the calls.
    store.clearRequests();
    // Nothing changed since the last pass: nothing to collect (a pass clones every object).
    if (store.resourceVersion !== collectedAt) {
      store.collectGarbage();
      collectedAt = store.resourceVersion;
    }
    clock.setTimer(GC_INTERVAL_MS, gc);
  };
  clock.setTimer(GC_INTERVAL_MS, gc);

  start();
  let pendingSteps = 0;
  const isTerminating = (o: KubeObject): boolean =>
    store.peek<KubeObject>(
      o as KubeObject & { apiVersion: string; kind: string },
      o.metadata?.name ?? '',
      o.metadata?.namespace,
    )?.metadata?.deletionTimestamp !== undefined;
  /**
   * A create of an object whose namesake is still terminating (its finalizer not yet released —
   * later after a fault than without) is retried, as a user or a GitOps tool re-applies it: the
   * same step must not be applied in one run and skipped in another because of when a fault fell.
   */
  const recreate = (i: number, s: ScenarioStep & { type: 'create' }, attempt: number): void => {
    note(`${now()} step ${i} waits: the object is still terminating`);
    pendingSteps++;
    clock.setTimer(RECREATE_RETRY_MS, () => {
      const done = async (outcome: string): Promise<void> => {
        note(`${now()} step ${i} ${outcome}`);
        // Later steps of the same object, held meanwhile, follow in order.
        const queued = waiting.get(stepId(s)) ?? [];
        waiting.delete(stepId(s));
        for (const [j, later] of queued) await applyStep(j, later);
        pendingSteps--;
      };
      void store.create(s.object).then(
        () => done('applied (retried)'),
        (err: unknown) => {
          if (isAlreadyExists(err) && isTerminating(s.object) && attempt < RECREATE_ATTEMPTS) {
            pendingSteps--;
            recreate(i, s, attempt + 1);
            return;
          }
          return done(`skipped: ${err instanceof ApiError ? err.status : String(err)}`);
        },
      );
    });
  };
  /** Steps held behind a create waiting for its namesake to go, by object. */
  const waiting = new Map<string, [number, ScenarioStep][]>();
  const stepId = (s: ScenarioStep): string => {
    const t = targetOfStep(s);
    return `${t.apiVersion} ${t.kind} ${t.namespace ?? ''}/${t.name}`;
  };
  const applyStep = async (i: number, s: ScenarioStep): Promise<void> => {
    try {
      if (s.type === 'create') await store.create(s.object);
      else if (s.type === 'patch')
        await store.patch(s.target, s.target.name, s.patch, { type: 'merge', namespace: s.target.namespace });
      else {
        await store.delete(s.target, s.target.name, { namespace: s.target.namespace });
        const t = targetOfStep(s);
        deletedByScenario.push(`${t.apiVersion} ${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name}`);
      }
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (s.type === 'create' && isAlreadyExists(err) && isTerminating(s.object)) {
        waiting.set(stepId(s), []);
        recreate(i, s, 1);
      } else note(`${now()} step ${i} skipped: ${err.status}`);
    }
  };
  const gap = options.stepGapMs ?? DEFAULT_STEP_GAP_MS;
  const scenario = typeof options.scenario === 'function' ? options.scenario(run.seed) : options.scenario;
  for (const [i, s] of scenario.entries()) {
    await clock.advance(s.afterMs ?? gap);
    const overTime = budget.checkRealTime(now());
    if (overTime) cut(overTime);
    if (cutShort) break;
    step = i;
    stepTimesMs.push(now());
    note(`${now()} step ${i}: ${describeStep(s)}`);
    const queue = waiting.get(stepId(s));
    if (queue) {
      note(`${now()} step ${i} waits behind the re-create of its object`);
      queue.push([i, s]);
    } else await applyStep(i, s);
  }

  faultsOn = false;
  cluster.stopFaults();
  note(`${now()} faults stop`);
  const settleUntil = now() + (options.settleMs ?? DEFAULT_SETTLE_MS);
  let seenActivity = -1;
  let lastActivityMs = now();
  let settled = false;
  while (!cutShort && now() < settleUntil) {
    await clock.advance(SETTLE_TICK_MS);
    const overTime = budget.checkRealTime(now());
    if (overTime) cut(overTime);
    const activity = cluster.writes.filter(isSignificant).length + spans.length;
    if (activity !== seenActivity) {
      seenActivity = activity;
      lastActivityMs = now();
    }
    // The newest process must be at work: a new leader waits out the old one's Lease in silence.
    const newest = nextIncarnation - 1;
    const atWork = working.has(newest) && !cluster.isDead(newest);
    if (
      pendingStarts === 0 &&
      pendingSteps === 0 &&
      !cluster.windowsOpen &&
      atWork &&
      now() - lastActivityMs >= SETTLED_AFTER_MS
    ) {
      settled = true;
      break;
    }
  }
  const quietFromMs = now();
  if (!cutShort) {
    note(`${quietFromMs} quiet window opens${settled ? '' : ' (the run did not settle)'}`);
    await clock.advance(options.quietWindowMs ?? DEFAULT_QUIET_WINDOW_MS);
  }
  const reconcilesByKey = new Map<string, number>();
  for (const s of spans)
    if (s.startedAtMs >= quietFromMs) {
      const key = `${s.controller} ${s.key}`;
      reconcilesByKey.set(key, (reconcilesByKey.get(key) ?? 0) + 1);
    }
  const quietWindow = {
    writes: cluster.writes.filter((w) => w.atMs >= quietFromMs && isSignificant(w)).length,
    reconcilesByKey,
    ms: now() - quietFromMs,
    settled,
  };
  const finalObjects: KubeObject[] = [];
  const endedAtMs = now();
  // As the run ended, before the processes are stopped (which takes fake time).
  finalServices.value = Object.fromEntries([...services].map(([name, service]) => [name, service.state()]));
  for (const type of kinds) finalObjects.push(...(await store.list(type)).items);
  for (const o of finalObjects) note(`final ${findingKey(o)} rv=${o.metadata?.resourceVersion ?? '?'}`);
  await recorder.flush();
  recorder.stop();

  // Stop every process (bounded: a graceful shutdown takes fake time too); a dead one's promise is abandoned.
  gcTimer = false;
  for (const p of processes.values()) stop(p.incarnation, 'the run ended');
  for (let i = 0; i < 40 && [...processes.values()].some((p) => !p.ended && !cluster.isDead(p.incarnation)); i++)
    await clock.advance(1_000);
  await flushMicrotasks();
  const done = { ...record(recorder.events, finalObjects, quietWindow), endMs: endedAtMs };
  if (cutShort) return { record: { ...done, cutShort: budgetFinding(cutShort) }, operatorErrors };
  return { record: done, operatorErrors };
}

/** A write that changed something other than a Lease or an Event (leader election renews for ever; that is not a hot loop). */
function isSignificant(w: WriteRecord): boolean {
  if (w.kind === 'Lease' || w.kind === 'Event') return false;
  return w.verb === 'delete' || w.resultResourceVersion !== w.replacedResourceVersion;
}
