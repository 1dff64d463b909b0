import type { Registry } from 'prom-client';
import { getOrCreateCounter, getOrCreateGauge, getOrCreateHistogram } from '../metrics/get-or-create-metric.js';

/** controller-runtime's `result` label values; `requeue` (immediate rate-limited requeue) has no Result of ours. */
export type ReconcileOutcomeLabel = 'success' | 'error' | 'requeue_after';

/** controller-runtime's reconcile buckets (seconds). */
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2,
  2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The controller_runtime_* metrics of one controller, with controller-runtime's names and labels. */
export class ControllerMetrics {
  private readonly outcomes: Record<ReconcileOutcomeLabel, { inc(): void }>;
  private readonly errors: { inc(): void };
  private readonly terminalErrors: { inc(): void };
  private readonly panics: { inc(): void };
  private readonly time: { observe(v: number): void };
  private readonly activeWorkers: { inc(): void; dec(): void; set(v: number): void };

  constructor(registry: Registry, controller: string, maxConcurrentReconciles: number) {
    const total = getOrCreateCounter(registry, {
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
    });
    this.outcomes = {
      success: total.labels({ controller, result: 'success' }),
      error: total.labels({ controller, result: 'error' }),
      requeue_after: total.labels({ controller, result: 'requeue_after' }),
    };
    this.errors = getOrCreateCounter(registry, {
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
    }).labels({ controller });
    this.terminalErrors = getOrCreateCounter(registry, {
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
    }).labels({ controller });
    this.panics = getOrCreateCounter(registry, {
      name: 'controller_runtime_reconcile_panics_total',
      help: 'Total number of reconciliation panics (programming errors thrown by the reconciler) per controller',
      labelNames: ['controller'],
    }).labels({ controller });
    const time = getOrCreateHistogram(registry, {
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_TIME_BUCKETS,
    });
    this.time = time.labels({ controller });
    getOrCreateGauge(registry, {
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
    }).set({ controller }, maxConcurrentReconciles);
    this.activeWorkers = getOrCreateGauge(registry, {
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
    }).labels({ controller });
    this.activeWorkers.set(0);
    // Every series exists at zero from the start, as controller-runtime initializes them: a counter
    // that first appears at 1 is invisible to increase()/rate(), so the first error or panic after
    // a start would never alert, and a healthy controller would have no error ratio at all.
    for (const counter of [...Object.values(this.outcomes), this.errors, this.terminalErrors, this.panics] as {
      inc(v: number): void;
    }[])
      counter.inc(0);
    time.zero({ controller });
  }

  reconcileStarted(): void {
    this.activeWorkers.inc();
  }

  reconcileFinished(
    outcome: ReconcileOutcomeLabel,
    seconds: number,
    kind: { terminal?: boolean; panic?: boolean } = {},
  ): void {
    this.activeWorkers.dec();
    this.outcomes[outcome].inc();
    this.time.observe(seconds);
    if (outcome === 'error') this.errors.inc();
    if (kind.terminal) this.terminalErrors.inc();
    if (kind.panic) this.panics.inc();
  }
}
