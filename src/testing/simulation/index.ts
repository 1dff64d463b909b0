/**
 * Simulation testing (issue 28; docs/simulation.md): the user's own operator against the fake
 * client on the fake clock, under seeded fault schedules, judged by oracles; failing seeds shrunk
 * and replayed.
 */
export {
  simulate,
  replaySeed,
  runSimulation,
  scheduleFor,
  simulationSeeds,
  replayCommand,
  replayCommandFor,
  SimulationError,
  DEFAULT_SEEDS,
  DEFAULT_STEP_GAP_MS,
  DEFAULT_SETTLE_MS,
  DEFAULT_QUIET_WINDOW_MS,
  DEFAULT_MAX_FAILURES,
} from './simulate.js';
export type {
  SimulationOptions,
  SimulationReport,
  SimulationRun,
  SeedFailure,
  OperatorSetup,
  OperatorSetupOptions,
} from './simulate.js';
export type { Scenario, ScenarioStep, ScenarioObject, ObjectTarget, StepTiming } from './scenario.js';
export { describeFault, FAULT_KINDS } from './fault.js';
export type {
  Fault,
  SimulationFaultKind,
  CrashFault,
  StaleRestartFault,
  ErrorFault,
  TimeoutFault,
  StaleCacheFault,
  CoalesceFault,
  DropEventsFault,
  WatchExpiryFault,
  LeaderChangeFault,
} from './fault.js';
export { DEFAULT_FAULT_WEIGHTS, DEFAULT_FAULTS_PER_RUN, WRITE_BIAS } from './fault-schedule.js';
export type { FaultMix } from './fault-schedule.js';
export { DEFAULT_MAX_QUIET_RECONCILES_PER_KEY, DEFAULT_MAX_QUIET_WRITES } from './oracles.js';
export {
  DEFAULT_HOT_KEY_RECONCILES_PER_SECOND,
  DEFAULT_BUDGET_RECONCILES,
  DEFAULT_BUDGET_REAL_TIME_MS,
} from './run-budget.js';
export type { SimulationBudget } from './run-budget.js';
export {
  sweepCrashPoints,
  enumerateCrashPoints,
  DEFAULT_CRASH_POINT_KINDS,
  DEFAULT_SWEEP_RESTART_AFTER_MS,
} from './crash-sweep.js';
export type {
  CrashSweepOptions,
  CrashSweepReport,
  CrashPoint,
  CrashPointFailure,
  CrashPointKind,
} from './crash-sweep.js';
export { formatCoverage, writeSite } from './fault-coverage.js';
export type { FaultCoverage } from './fault-coverage.js';
export { findingTrace, formatFinding, TRACE_LINES } from './format-finding.js';
export {
  generateScenario,
  DEFAULT_GENERATED_STEPS,
  DEFAULT_GENERATED_OBJECTS,
  DEFAULT_GENERATED_NAMESPACE,
  OTHER_WRITER_AFTER_MS,
} from './scenario-generator.js';
export type { ScenarioGeneratorOptions } from './scenario-generator.js';
export type { OracleOptions } from './oracles.js';
export { DEFAULT_END_STATE_IGNORED_KINDS, normalizeObject } from './normalize-object.js';
export type { Finding, OracleName, RunRecord, CallRecord, WriteRecord, ReconcileSpan } from './simulation-records.js';
export { ProcessDeadError, SimulatedTimeoutError, STALE_RESTART_CATCH_UP_MS } from './simulated-cluster.js';
export {
  ExternalServiceError,
  isExternalNotFound,
  DEFAULT_EXTERNAL_LATENCY_MS,
  DEFAULT_EXTERNAL_WORK_MS,
  DEFAULT_EXTERNAL_DELETE_MS,
  DEFAULT_EXTERNAL_FAILURE_RATE,
  DEFAULT_EXTERNAL_LOST_RESPONSE_RATE,
  DEFAULT_EXTERNAL_STALE_READ_RATE,
  DEFAULT_EXTERNAL_STALE_READ_LAG_MS,
} from './external-service.js';
export type {
  ExternalService,
  ExternalServiceOptions,
  ExternalServiceState,
  ExternalRecord,
  ExternalRecordState,
  ExternalCreateOptions,
  ExternalCallOptions,
} from './external-service.js';
