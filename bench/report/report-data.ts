/**
 * The benchmark report's JSON: what each bench writes through `writeBenchJson` (raw, every round),
 * plus the machine facts and the run's settings. `render-report.ts` turns it into the HTML page and
 * computes the spread (min/median/max) from the raw rounds, so the JSON keeps every measurement.
 */

export interface InformerRow {
  /** Objects asked for; `n` is what the informer held (a few markers more). */
  readonly count: number;
  readonly round: number;
  readonly n: number;
  readonly impl: string;
  readonly syncMs: number;
  readonly bytesPerObject: number;
  readonly baseMb: number;
  readonly steadyMb: number;
  readonly peakMb: number;
  readonly livePeakMb: number;
  readonly relistMs: number;
  readonly stoppedOnError: string;
  readonly deliveredAfterRestartMs?: number | undefined;
}

export interface InformerResult {
  readonly bench: 'informer';
  readonly counts: readonly number[];
  readonly rounds: number;
  readonly deliveryWindowMs: number;
  readonly rows: readonly InformerRow[];
}

export interface ControllerResult {
  readonly bench: 'controller-e2e';
  readonly objects: number;
  readonly workers: number;
  readonly rounds: number;
  readonly ceilingPerSecond: readonly number[];
  readonly ceilingWithWatchPerSecond: readonly number[];
  readonly controllerPerSecond: readonly number[];
  readonly startupSeconds: readonly number[];
}

export interface WorkqueueResult {
  readonly bench: 'workqueue';
  readonly keys: number;
  readonly rounds: number;
  readonly goalPerSecond: number;
  readonly configs: readonly {
    readonly shape: string;
    readonly workers: number;
    readonly metrics: boolean;
    /** The plain FIFO measured beside the queue (absent in results from before it existed). */
    readonly anchor?: boolean;
    readonly totalPerSecond: readonly number[];
    readonly perCpuSecond: readonly number[];
  }[];
}

export interface LeaderFailoverResult {
  readonly bench: 'leader-failover';
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly runs: number;
  readonly killMs: readonly number[];
  readonly termMs: readonly number[];
}

export interface RelistResult {
  readonly bench: 'relist-memory';
  readonly objects: number;
  readonly rounds: number;
  readonly results: readonly {
    readonly label: string;
    readonly round: number;
    readonly syncMs: number;
    readonly steadyBytes: number;
    readonly peakBytes: number;
    readonly afterBytes: number;
  }[];
}

export interface MachineFacts {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly totalMemoryMb: number;
  readonly node: string;
  readonly platform: string;
  /** 1, 5 and 15 minute load averages when the report started and when it ended. */
  readonly loadAverageStart: readonly number[];
  readonly loadAverageEnd: readonly number[];
}

/** A bench that failed: reported on the page instead of silently missing. */
export interface BenchFailure {
  readonly bench: string;
  readonly message: string;
}

export interface ReportData {
  readonly title: string;
  readonly generatedAt: string;
  readonly quick: boolean;
  readonly durationMs: number;
  readonly machine: MachineFacts;
  /** The command line of each bench, as run. */
  readonly commands: Readonly<Record<string, string>>;
  readonly informer?: InformerResult;
  readonly controller?: ControllerResult;
  readonly workqueue?: WorkqueueResult;
  readonly leaderFailover?: LeaderFailoverResult;
  readonly relist?: RelistResult;
  readonly failures: readonly BenchFailure[];
}

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
  readonly n: number;
}

/** min / median / max of finite values (median of an even count: the mean of the middle two). */
export function spread(values: readonly number[]): Spread | undefined {
  const xs = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (xs.length === 0) return undefined;
  const mid = xs.length / 2;
  const median = xs.length % 2 ? xs[Math.floor(mid)]! : (xs[mid - 1]! + xs[mid]!) / 2;
  return { min: xs[0]!, median, max: xs.at(-1)!, n: xs.length };
}
