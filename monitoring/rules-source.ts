/**
 * The one source of operator-runtime's Prometheus rules. `render.ts` turns it into the plain rule
 * file, the PrometheusRule manifest and the Grafana dashboard's queries; `generate.ts` writes them;
 * `monitoring.test.ts` fails if a written file drifts from what this source renders.
 *
 * Metric names are the ones the runtime registers (controller_runtime_*, workqueue_* with
 * controller-runtime's names and labels; cache_*, leader_election_*, rest_client_*). Every rule
 * aggregates by `namespace` and `job` so that replicas of one operator Deployment (one job) add up
 * and two operators in one Prometheus stay apart; `namespace` is simply empty outside Kubernetes.
 */

export type Severity = 'warning' | 'critical';

export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
}

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  /** A Prometheus duration ("15m"); the live test shortens every `for` through `RenderOptions`. */
  readonly for: string;
  readonly severity: Severity;
  readonly summary: string;
  readonly description: string;
}

export interface RuleGroup<R> {
  readonly name: string;
  readonly rules: readonly R[];
}

/** Labels every aggregation keeps: one operator (job) in one namespace. */
const BY = 'namespace, job';

export const RECORD = {
  reconcileRate: 'operator_runtime:controller_runtime_reconcile:rate5m',
  reconcileErrorRate: 'operator_runtime:controller_runtime_reconcile_errors:rate5m',
  reconcileErrorRatio: 'operator_runtime:controller_runtime_reconcile_error_ratio:rate5m',
  reconcileP50: 'operator_runtime:controller_runtime_reconcile_time_seconds:p50_5m',
  reconcileP99: 'operator_runtime:controller_runtime_reconcile_time_seconds:p99_5m',
  workqueueDepth: 'operator_runtime:workqueue_depth:max',
  workqueueAddRate: 'operator_runtime:workqueue_adds:rate5m',
  workqueueWaitP99: 'operator_runtime:workqueue_queue_duration_seconds:p99_5m',
  watchRestartRate: 'operator_runtime:cache_watch_restarts:rate5m',
  leaders: 'operator_runtime:leader_election_master_status:sum',
} as const;

export const RECORDING_RULES: RuleGroup<RecordingRule> = {
  name: 'operator-runtime.rules',
  rules: [
    {
      record: RECORD.reconcileRate,
      expr: `sum by (${BY}, controller, result) (rate(controller_runtime_reconcile_total[5m]))`,
    },
    {
      record: RECORD.reconcileErrorRate,
      expr: `sum by (${BY}, controller) (rate(controller_runtime_reconcile_errors_total[5m]))`,
    },
    {
      record: RECORD.reconcileErrorRatio,
      // Errors over all outcomes; a controller that did nothing has no ratio (0/0), not 0.
      expr: `${RECORD.reconcileErrorRate} / on (${BY}, controller) sum by (${BY}, controller) (${RECORD.reconcileRate})`,
    },
    {
      record: RECORD.reconcileP50,
      expr: `histogram_quantile(0.5, sum by (${BY}, controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket[5m])))`,
    },
    {
      record: RECORD.reconcileP99,
      expr: `histogram_quantile(0.99, sum by (${BY}, controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket[5m])))`,
    },
    {
      // One series per priority (controller-runtime's priority queue): summed per queue, then the busiest replica.
      record: RECORD.workqueueDepth,
      expr: `max by (${BY}, controller, name) (sum without (priority) (workqueue_depth))`,
    },
    { record: RECORD.workqueueAddRate, expr: `sum by (${BY}, controller, name) (rate(workqueue_adds_total[5m]))` },
    {
      record: RECORD.workqueueWaitP99,
      expr: `histogram_quantile(0.99, sum by (${BY}, controller, name, le) (rate(workqueue_queue_duration_seconds_bucket[5m])))`,
    },
    {
      record: RECORD.watchRestartRate,
      expr: `sum by (${BY}, informer, reason) (rate(cache_watch_restarts_total[5m]))`,
    },
    // Each replica exports 1 while it leads the named Lease, 0 otherwise: the sum is the number of leaders.
    { record: RECORD.leaders, expr: `sum by (${BY}, name) (leader_election_master_status)` },
  ],
};

export const ALERT_RULES: RuleGroup<AlertRule> = {
  name: 'operator-runtime.alerts',
  rules: [
    {
      alert: 'OperatorReconcileErrors',
      expr: `${RECORD.reconcileErrorRatio} > 0.1`,
      for: '15m',
      severity: 'warning',
      summary: 'Controller {{ $labels.controller }} fails more than 10% of its reconciles.',
      description:
        "{{ $value | humanizePercentage }} of the reconciles of controller {{ $labels.controller }} ({{ $labels.job }} in {{ $labels.namespace }}) failed over the last 5 minutes. The keys are retried with backoff; the operator's logs (reconcileID, namespace, name) and the objects' Warning events say which and why.",
    },
    {
      alert: 'OperatorReconcilePanics',
      expr: `sum by (${BY}, controller) (increase(controller_runtime_reconcile_panics_total[10m])) > 0`,
      for: '0m',
      severity: 'warning',
      summary: 'Controller {{ $labels.controller }} threw a programming error.',
      description:
        'The reconciler of {{ $labels.controller }} ({{ $labels.job }}) threw something that is not an error it meant to throw (a TypeError, say) in the last 10 minutes: a bug in the operator.',
    },
    {
      alert: 'OperatorWorkqueueDepthGrowing',
      // Depth above a floor and still rising over 15 minutes: the workers do not keep up.
      expr: `${RECORD.workqueueDepth} > 10 and on (${BY}, controller, name) deriv(${RECORD.workqueueDepth}[15m]) > 0`,
      for: '15m',
      severity: 'warning',
      summary: 'The work queue of controller {{ $labels.controller }} keeps growing.',
      description:
        'Queue {{ $labels.name }} of {{ $labels.job }} holds {{ $value | humanize }} keys and has grown for 15 minutes: the controller does not keep up (slow reconciles, too few workers, or a hot loop of requeues).',
    },
    {
      alert: 'OperatorReconcileStuck',
      expr: `max by (${BY}, controller, name) (workqueue_longest_running_processor_seconds) > 600`,
      for: '5m',
      severity: 'warning',
      summary: 'A reconcile of controller {{ $labels.controller }} has run for more than 10 minutes.',
      description:
        'The longest running reconcile of {{ $labels.controller }} ({{ $labels.job }}) has run for {{ $value | humanizeDuration }}; a reconciler that ignores its AbortSignal holds a worker.',
    },
    {
      alert: 'OperatorNoLeader',
      expr: `${RECORD.leaders} < 1`,
      for: '5m',
      severity: 'critical',
      summary: 'No replica of {{ $labels.job }} leads Lease {{ $labels.name }}.',
      description:
        "Replicas of {{ $labels.job }} in {{ $labels.namespace }} are scraped but none has held Lease {{ $labels.name }} for 5 minutes, so no controller reconciles. Check the Lease (kubectl get lease {{ $labels.name }}) and the replicas' RBAC on coordination.k8s.io.",
    },
    {
      alert: 'OperatorWatchStalls',
      expr: `sum by (${BY}, informer) (increase(cache_watch_restarts_total{reason="stalled"}[15m])) > 2`,
      for: '0m',
      severity: 'warning',
      summary: 'The watch of informer {{ $labels.informer }} keeps going silent.',
      description:
        'The watch of {{ $labels.informer }} ({{ $labels.job }}) went silent past its deadline and was torn down {{ $value | humanize }} times in 15 minutes. Something between the operator and the API server (a proxy, a load balancer idle timeout) holds connections open without passing events.',
    },
    {
      alert: 'OperatorWatchFailing',
      expr: `max by (${BY}, informer) (cache_watcher_state{state="backoff"}) == 1`,
      for: '10m',
      severity: 'warning',
      summary: 'The watcher of informer {{ $labels.informer }} has been backing off for 10 minutes.',
      description:
        'Every list or watch of {{ $labels.informer }} ({{ $labels.job }}) fails (RBAC, a removed CRD, an unreachable API server); the cache serves data that is getting older.',
    },
    {
      alert: 'OperatorCacheNotSynced',
      expr: `min by (${BY}, informer) (cache_synced) == 0`,
      for: '10m',
      severity: 'critical',
      summary: 'The cache of informer {{ $labels.informer }} never synced.',
      description:
        'Informer {{ $labels.informer }} of {{ $labels.job }} has not completed its first list for 10 minutes; its controllers wait for it and reconcile nothing.',
    },
  ],
};
