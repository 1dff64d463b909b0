import type { ReconcileObserver, ReconcileRecord } from '../controller/controller.js';
import type { Clock } from '../core/clock.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { HistoryTrigger } from '../controller/reconcile-trigger.js';
import type { Result } from '../controller/result.js';
import { FixedRing } from './fixed-ring.js';
import type { ObjectHistory } from './object-history.js';
import type { ReconcileScope, ReconcileWrites } from './reconcile-writes.js';
import { describeError } from './redact-message.js';
import {
  ReconcileWindow,
  type ReconcileWindowOptions,
  type WindowPoint,
  type WindowSummary,
} from './reconcile-window.js';

/** What the console reads from a controller's queue (a `Workqueue` fits). */
export interface QueueView {
  readonly length: number;
  readonly processingCount: number;
  readonly waitingCount: number;
  backoffKeys(limit: number): {
    readonly total: number;
    readonly keys: readonly { readonly key: string; readonly retryInMs: number; readonly requeues: number }[];
  };
}

export type ReconcileResult = ReconcileRecord['outcome'];

export interface RecentReconcile {
  readonly atMs: number;
  readonly key: string;
  readonly reconcileID: string;
  readonly result: ReconcileResult;
  readonly durationMs: number;
  /** Redacted. */
  readonly error?: string;
}

export interface FailingKey {
  readonly key: string;
  /** Failures in a row since the key last succeeded. */
  readonly failures: number;
  readonly result: ReconcileResult;
  readonly lastError: string;
  readonly lastAtMs: number;
}

export interface ControllerSnapshot {
  readonly name: string;
  readonly workers: number | undefined;
  readonly inFlight: number;
  readonly queued: number;
  /** Keys waiting for a delayed add (backoff or requeueAfter). */
  readonly delayed: number;
  readonly summary: WindowSummary;
  readonly series: readonly WindowPoint[];
  readonly backoff: {
    readonly total: number;
    readonly keys: readonly { readonly key: string; readonly retryAtMs: number; readonly requeues: number }[];
  };
  readonly failing: { readonly total: number; readonly keys: readonly FailingKey[] };
  readonly recent: readonly RecentReconcile[];
}

export interface ControllerViewOptions extends ReconcileWindowOptions {
  readonly recentReconciles: number;
  readonly maxFailingKeys: number;
  readonly listLimit: number;
  /** The per-object history this view feeds, and where it finds each reconcile's writes; off when absent. */
  readonly history?: { readonly store: ObjectHistory; readonly writes: ReconcileWrites };
}

/** Keys whose next trigger is remembered at most (a queue's worth); past it the oldest is dropped. */
const MAX_PENDING_TRIGGERS = 100_000;
const UNKNOWN: HistoryTrigger = Object.freeze({ type: 'unknown' });
const REQUEUE: HistoryTrigger = Object.freeze({ type: 'requeue' });
const RETRY: HistoryTrigger = Object.freeze({ type: 'retry' });

/**
 * The console's record of one controller, fed by the controller as a {@link ReconcileObserver}:
 * a sliding window of counts and latencies, the last N reconciles, and the keys whose last
 * reconcile failed — all bounded. Queue figures are read live from the controller's queue.
 */
export class ControllerView implements ReconcileObserver {
  private readonly window: ReconcileWindow;
  private readonly recent: FixedRing<RecentReconcile>;
  /** Insertion order is failure order: the oldest is evicted first when full. */
  private readonly failing = new Map<string, FailingKey>();
  private queue: QueueView | undefined;
  private workers: number | undefined;
  /** What last put each queued key in (history on): the first cause since the key's last start wins. */
  private readonly triggers = new Map<string, HistoryTrigger>();
  /** Reconciles in progress (history on): their trigger and the scope their writes land in. */
  private readonly open = new Map<string, { readonly trigger: HistoryTrigger; readonly scope: ReconcileScope }>();

  constructor(
    readonly name: string,
    private readonly clock: Clock,
    private readonly options: ControllerViewOptions,
  ) {
    this.window = new ReconcileWindow(clock.now(), options);
    this.recent = new FixedRing(options.recentReconciles);
  }

  /** Connects the live queue figures (the controller exists only after its observer does). */
  attach(queue: QueueView, workers: number): void {
    this.queue = queue;
    this.workers = workers;
  }

  noteTrigger(key: string, trigger: HistoryTrigger): void {
    if (!this.options.history || this.triggers.has(key)) return;
    if (this.triggers.size >= MAX_PENDING_TRIGGERS) this.triggers.delete(this.triggers.keys().next().value!);
    this.triggers.set(key, trigger);
  }

  around(key: string, reconcileID: string, run: () => Promise<Result | void>): Promise<Result | void> {
    const history = this.options.history;
    if (!history) return run();
    const trigger = this.triggers.get(key) ?? UNKNOWN;
    this.triggers.delete(key);
    const scope: ReconcileScope = { controller: this.name, key, reconcileID, writes: [], omittedWrites: 0 };
    this.open.set(reconcileID, { trigger, scope });
    return history.writes.run(scope, run);
  }

  reconciled(record: ReconcileRecord): void {
    const failed = record.outcome === 'error' || record.outcome === 'terminal_error';
    this.window.record(this.clock.now(), record.durationMs, failed);
    const error = failed ? describeError(record.error) : undefined;
    this.remember(record, error);
    this.recent.push({
      atMs: record.startedAtMs,
      key: record.key,
      reconcileID: record.reconcileID,
      result: record.outcome,
      durationMs: record.durationMs,
      ...omitUndefined({ error }),
    });
    if (!failed) {
      this.failing.delete(record.key);
      return;
    }
    const previous = this.failing.get(record.key);
    this.failing.delete(record.key);
    this.failing.set(record.key, {
      key: record.key,
      failures: (previous?.failures ?? 0) + 1,
      result: record.outcome,
      lastError: error!,
      lastAtMs: record.startedAtMs + record.durationMs,
    });
    if (this.failing.size > this.options.maxFailingKeys) this.failing.delete(this.failing.keys().next().value!);
  }

  /** Adds the reconcile to the object's history (when it ran through `around`), and what will have caused its next one. */
  private remember(record: ReconcileRecord, error: string | undefined): void {
    const history = this.options.history;
    const open = history && this.open.get(record.reconcileID);
    if (!history || !open) return;
    this.open.delete(record.reconcileID);
    const { scope, trigger } = open;
    history.store.record(this.name, record.key, {
      reconcileID: record.reconcileID,
      trigger,
      startedAtMs: record.startedAtMs,
      durationMs: record.durationMs,
      result: record.outcome,
      ...omitUndefined({ error }),
      writes: scope.writes,
      omittedWrites: scope.omittedWrites,
    });
    // The controller queues these itself; an event arriving meanwhile was noted first and wins.
    if (record.outcome === 'requeue_after') this.noteTrigger(record.key, REQUEUE);
    else if (record.outcome === 'error') this.noteTrigger(record.key, RETRY);
  }

  snapshot(): ControllerSnapshot {
    const now = this.clock.now();
    const backoff = this.queue?.backoffKeys(this.options.listLimit) ?? { total: 0, keys: [] };
    const failing = [...this.failing.values()].reverse().slice(0, this.options.listLimit);
    return {
      name: this.name,
      workers: this.workers,
      inFlight: this.queue?.processingCount ?? 0,
      queued: this.queue?.length ?? 0,
      delayed: this.queue?.waitingCount ?? 0,
      summary: this.window.summary(now),
      series: this.window.series(now),
      backoff: {
        total: backoff.total,
        keys: backoff.keys.map((k) => ({ key: k.key, retryAtMs: now + k.retryInMs, requeues: k.requeues })),
      },
      failing: { total: this.failing.size, keys: failing },
      recent: this.recent.newestFirst(),
    };
  }
}
