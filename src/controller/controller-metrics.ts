import type { Registry } from 'prom-client';
import { registerCounterCollector } from '../metrics/counter-collector.js';
import { registerGaugeCollector } from '../metrics/gauge-collector.js';
import { getOrCreateGauge } from '../metrics/get-or-create-metric.js';
import { HistogramAccumulator } from '../metrics/histogram-accumulator.js';
import { registerHistogramCollector } from '../metrics/histogram-collector.js';

/** controller-runtime's `result` label values; `requeue` (immediate rate-limited requeue) has no Result of ours. */
export type ReconcileOutcomeLabel = 'success' | 'error' | 'requeue_after';
const OUTCOMES: readonly ReconcileOutcomeLabel[] = ['success', 'error', 'requeue_after'];

/** controller-runtime's reconcile buckets (seconds). */
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2,
  2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/**
 * The controller_runtime_* metrics of one controller, with controller-runtime's names and labels.
 * The reconcile path bumps plain numbers and exports them at scrape time, as the workqueue's
 * metrics do: prom-client's `inc`/`observe`/`dec` hash the labels on every call, ~5 µs of every
 * reconcile in bench/controller-e2e-cpu.bench.ts's profiles.
 */
export class ControllerMetrics {
  private readonly outcomes: Record<ReconcileOutcomeLabel, number> = { success: 0, error: 0, requeue_after: 0 };
  private errors = 0;
  private terminalErrors = 0;
  private panics = 0;
  private activeWorkers = 0;
  private readonly time = new HistogramAccumulator(RECONCILE_TIME_BUCKETS);

  constructor(registry: Registry, controller: string, maxConcurrentReconciles: number) {
    // Every series exists at zero from the start, as controller-runtime initializes them: a counter
    // that first appears at 1 is invisible to increase()/rate(), so the first error or panic after
    // a start would never alert, and a healthy controller would have no error ratio at all.
    registerCounterCollector(
      registry,
      {
        name: 'controller_runtime_reconcile_total',
        help: 'Total number of reconciliations per controller',
        labelNames: ['controller', 'result'],
      },
      (c) => {
        for (const result of OUTCOMES) c.inc({ controller, result }, this.outcomes[result]);
      },
    );
    registerCounterCollector(
      registry,
      {
        name: 'controller_runtime_reconcile_errors_total',
        help: 'Total number of reconciliation errors per controller',
        labelNames: ['controller'],
      },
      (c) => c.inc({ controller }, this.errors),
    );
    registerCounterCollector(
      registry,
      {
        name: 'controller_runtime_terminal_reconcile_errors_total',
        help: 'Total number of terminal reconciliation errors per controller',
        labelNames: ['controller'],
      },
      (c) => c.inc({ controller }, this.terminalErrors),
    );
    registerCounterCollector(
      registry,
      {
        name: 'controller_runtime_reconcile_panics_total',
        help: 'Total number of reconciliation panics (programming errors thrown by the reconciler) per controller',
        labelNames: ['controller'],
      },
      (c) => c.inc({ controller }, this.panics),
    );
    registerHistogramCollector(
      registry,
      {
        name: 'controller_runtime_reconcile_time_seconds',
        help: 'Length of time per reconciliation per controller',
        labelNames: ['controller'],
        buckets: RECONCILE_TIME_BUCKETS,
      },
      (emit) => emit({ controller }, this.time),
    );
    getOrCreateGauge(registry, {
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
    }).set({ controller }, maxConcurrentReconciles);
    registerGaugeCollector(
      registry,
      {
        name: 'controller_runtime_active_workers',
        help: 'Number of currently used workers per controller',
        labelNames: ['controller'],
      },
      (g) => g.set({ controller }, this.activeWorkers),
    );
  }

  reconcileStarted(): void {
    this.activeWorkers++;
  }

  reconcileFinished(
    outcome: ReconcileOutcomeLabel,
    seconds: number,
    kind: { terminal?: boolean; panic?: boolean } = {},
  ): void {
    this.activeWorkers--;
    this.outcomes[outcome]++;
    this.time.observe(seconds);
    if (outcome === 'error') this.errors++;
    if (kind.terminal) this.terminalErrors++;
    if (kind.panic) this.panics++;
  }
}
