/**
 * Actions: a reconcile as an ordered chain of small named steps, each testable on its
 * own with a fake client. An action returns what a reconciler returns (the one `Result`):
 * nothing to let the chain go on, `done()` to stop it, `requeueAfter(ms)` to stop and come back.
 * The runner only schedules: it runs the steps in order, stops at the first that returns a result
 * or fails, and logs and times every step.
 */
import type { Registry } from 'prom-client';
import { throwIfAborted } from '../core/abort.js';
import { realClock, type Clock } from '../core/clock.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { getOrCreateHistogram } from '../metrics/get-or-create-metric.js';
import { done, type Result } from '../core/result.js';

/** One step of a reconcile. `C` is whatever the reconciler hands its actions (object, client, signal…). */
export interface Action<C> {
  /** Stable, low-cardinality: it is a metric label. */
  readonly name: string;
  /** Nothing: go on with the next action; `done()`: stop; `requeueAfter(ms)`: stop and come back. */
  run(ctx: C): Promise<Result | void>;
}

export interface RunActionsOptions {
  /** Controller name, for the metric label and the log lines. */
  readonly controller: string;
  /** @defaultValue silentLogger */
  readonly logger?: Logger;
  /** Where `operator_action_duration_seconds` goes; no metric without one. */
  readonly registry?: Registry;
  /** @defaultValue realClock */
  readonly clock?: Clock;
  /** Checked before each action: an aborted reconcile runs no further action. */
  readonly signal?: AbortSignal;
}

export type ActionOutcomeLabel = 'continue' | 'done' | 'requeue' | 'error';

export interface ActionRecord {
  readonly action: string;
  readonly result: ActionOutcomeLabel;
  readonly durationMs: number;
}

export interface ActionsReport {
  /** What to return from the reconcile (a requeue if an action asked for one, else done). */
  readonly result: Result;
  /** Every action that ran, in order. */
  readonly actions: readonly ActionRecord[];
  /** The action that ended the chain early (done or requeue), if any. */
  readonly stoppedBy?: string;
}

export const ACTION_DURATION_METRIC = 'operator_action_duration_seconds';
/** Buckets in seconds, from a cache read to a slow external call. */
export const ACTION_DURATION_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/**
 * Runs `actions` in order with `ctx`. Stops at the first action that returns `done` or
 * `requeueAfter`, or throws. A thrown error is logged, measured and rethrown unchanged (so a
 * `TerminalError` stays terminal and the workqueue's backoff applies to the rest).
 */
export async function runActions<C>(
  actions: readonly Action<C>[],
  ctx: C,
  options: RunActionsOptions,
): Promise<ActionsReport> {
  const clock = options.clock ?? realClock;
  const log = options.logger ?? silentLogger;
  const histogram = options.registry
    ? getOrCreateHistogram(options.registry, {
        name: ACTION_DURATION_METRIC,
        help: 'Duration of each reconcile action, by controller, action and result (continue, done, requeue, error).',
        labelNames: ['controller', 'action', 'result'],
        buckets: [...ACTION_DURATION_BUCKETS],
      })
    : undefined;
  const records: ActionRecord[] = [];
  const record = (action: string, result: ActionOutcomeLabel, start: number): ActionRecord => {
    const entry = { action, result, durationMs: clock.monotonicNow() - start };
    records.push(entry);
    histogram?.observe({ controller: options.controller, action, result }, entry.durationMs / 1000);
    return entry;
  };
  for (const action of actions) {
    throwIfAborted(options.signal);
    const start = clock.monotonicNow();
    let out: Result | void;
    try {
      out = await action.run(ctx);
    } catch (err) {
      const entry = record(action.name, 'error', start);
      log.error(
        { controller: options.controller, action: action.name, durationMs: entry.durationMs, err },
        'action failed',
      );
      throw err;
    }
    const label: ActionOutcomeLabel = !out ? 'continue' : out.kind === 'requeueAfter' ? 'requeue' : out.kind;
    const entry = record(action.name, label, start);
    log.debug(
      { controller: options.controller, action: action.name, result: label, durationMs: entry.durationMs },
      'action finished',
    );
    if (out) return { result: out, actions: records, stoppedBy: action.name };
  }
  return { result: done(), actions: records };
}
