import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import { realClock, type Clock } from '../core/clock.js';
import { AbortedError, AlreadyStartedError, InvalidOptionError, OperatorRuntimeError } from '../core/errors.js';
import { isLeadershipLost } from '../core/leadership-lost.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { objectKey, parseObjectKey, type ObjectRef } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { runtimeTracer } from '../core/tracing.js';
import type { RateLimiter } from '../workqueue/rate-limiter.js';
import { DEFAULT_PRIORITY, Workqueue, type AddOptions } from '../workqueue/workqueue.js';
import { DeferredChildLogger } from './deferred-child-logger.js';
import { ControllerMetrics, type ReconcileOutcomeLabel } from './controller-metrics.js';
import type { ReconcileRequest, Reconciler } from './reconciler.js';
import type { Result } from './result.js';
import { isTerminalError } from './terminal-error.js';
import { ReconcileTracing, type ReconcileSpan, type ReconcileTrigger } from './reconcile-tracing.js';

/** @defaultValue 1 */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 1;

/**
 * Longest run of back-to-back reconciles a worker makes without letting the event loop turn. A
 * backlog of reconciles that only read the cache resolves as one microtask chain (the queue hands
 * out keys with already-resolved promises): 5,000 of them after a member's relist held the loop
 * 0.8 s, and no socket was read meanwhile — not another member's watch, not a Lease renewal.
 * @defaultValue 5 ms with the real clock
 */
export const WORKER_TIME_SLICE_MS = 5;
/** @defaultValue 30,000 ms */
export const DEFAULT_GRACEFUL_SHUTDOWN_MS = 30_000;
/** No timeout: a reconcile runs until it returns or the controller stops. @defaultValue 0 */
export const DEFAULT_RECONCILE_TIMEOUT_MS = 0;

export interface ControllerOptions {
  /** Unique within a manager: the `controller` label of metrics and logs. */
  readonly name: string;
  readonly reconciler: Reconciler;
  /** Workers; one key is never reconciled by two at once. @defaultValue {@link DEFAULT_MAX_CONCURRENT_RECONCILES} */
  readonly maxConcurrentReconciles?: number;
  /** Backoff for failed reconciles. @defaultValue per-item 5 ms → 1000 s, max-of a 10/s burst-100 bucket */
  readonly rateLimiter?: RateLimiter;
  /** Aborts a reconcile's signal after this long; 0 means no timeout. @defaultValue {@link DEFAULT_RECONCILE_TIMEOUT_MS} */
  readonly reconcileTimeoutMs?: number;
  /**
   * On stop, how long in-flight reconciles may run before their signals are aborted (and how long
   * after that we still wait for them). @defaultValue {@link DEFAULT_GRACEFUL_SHUTDOWN_MS}
   */
  readonly gracefulShutdownMs?: number;
  readonly clock?: Clock;
  /**
   * A worker lets the event loop turn after this long of back-to-back reconciles (real time); 0:
   * never. Off with an injected clock: a slice measured in real time would make a simulation's
   * run depend on the machine's speed. @defaultValue {@link WORKER_TIME_SLICE_MS} with the real clock, else 0
   */
  readonly workerTimeSliceMs?: number;
  readonly logger?: Logger;
  /** Registry for the controller_runtime_* and workqueue_* metrics; none means no metrics. */
  readonly registry?: Registry;
  /** Told about every finished reconcile (the operator console's feed); must not throw or block. */
  readonly observer?: ReconcileObserver;
  /**
   * Reconcile keys by priority: what changed (watch events, `enqueue`) before what a list or a
   * resync merely announced, with aging so nothing starves. false: first in first out, as before.
   * @defaultValue true
   */
  readonly priorityQueue?: boolean;
  /**
   * Groups keys for fairness (`WorkqueueOptions.fairnessKey`): within a priority, groups take turns.
   * A fleet controller groups by member cluster. @defaultValue none: one FIFO per priority
   */
  readonly fairnessKey?: (key: string) => string;
  /**
   * At most this many reconciles of one fairness group at once (`WorkqueueOptions.maxInFlightPerGroup`):
   * below `maxConcurrentReconciles`, one group whose reconciles hang cannot occupy every worker. A
   * fleet controller caps each member cluster. Needs `fairnessKey`; an integer from 1 to
   * `maxConcurrentReconciles`. @defaultValue no cap
   */
  readonly maxConcurrentReconcilesPerGroup?: number;
  /**
   * How a queue key becomes the request handed to the reconciler and the fields bound on its log
   * lines (before `reconcileID`): a fleet controller's keys name their cluster too.
   * @defaultValue {@link objectRequestCodec} (`namespace/name` keys)
   */
  readonly requests?: RequestCodec;
  /**
   * A span per reconcile, with its trigger and the API and HTTP calls it makes as children, when
   * `@opentelemetry/api` is installed (an optional peer; spans go wherever the application's SDK
   * sends them, nowhere without one). false: no spans from this controller.
   * @defaultValue {@link DEFAULT_CONTROLLER_TRACING}
   */
  readonly tracing?: boolean;
}

/** Reconciles are traced whenever `@opentelemetry/api` is installed. @defaultValue true */
export const DEFAULT_CONTROLLER_TRACING = true;

/** Turns a queue key into a request, and names the request on log lines. */
export interface RequestCodec {
  /** Throws for a key that does not name a request (a bug in whoever enqueued it). */
  parse(key: string): ReconcileRequest;
  /** Bound on every line of the reconcile, in this order, before `reconcileID`. */
  logFields(request: ReconcileRequest): Readonly<Record<string, string>>;
}

/** Keys `namespace/name` (or `name`): the codec of every plain controller. */
export const objectRequestCodec: RequestCodec = {
  parse: parseObjectKey,
  logFields: (request) => ({ namespace: request.namespace ?? '', name: request.name }),
};

/** One finished reconcile, as given to a {@link ReconcileObserver}. */
export interface ReconcileRecord {
  readonly key: string;
  readonly reconcileID: string;
  /** `clock.now()` when the reconcile started. */
  readonly startedAtMs: number;
  readonly durationMs: number;
  readonly outcome: ReconcileOutcomeLabel | 'terminal_error';
  /** What the reconciler threw, for `error` and `terminal_error`. */
  readonly error?: unknown;
}

export interface ReconcileObserver {
  reconciled(record: ReconcileRecord): void;
}

/** Thrown into a reconcile's signal when `reconcileTimeoutMs` elapses. */
export class ReconcileTimeoutError extends OperatorRuntimeError {
  declare readonly code: 'ERR_RECONCILE_TIMEOUT';
  constructor(timeoutMs: number) {
    super('ERR_RECONCILE_TIMEOUT', `reconcile timed out after ${timeoutMs} ms`);
  }
}

/**
 * Workers that take keys from a rate-limited workqueue and run the reconciler on them:
 * one key at a time per key, a thrown error requeues with per-key backoff, `TerminalError` is
 * counted and not retried, success forgets the key's backoff, `requeueAfter` schedules the key
 * again. No throw of any kind ends a worker. Every throw counts as a reconcile error; only a
 * programming fault in user code also counts as a panic — see {@link isReconcilePanic} for the rule
 * (the library's own errors never do).
 *
 * Sources (informer handlers) put keys in with `enqueue`; `start(signal)` runs the workers until
 * the signal aborts, then drains in-flight reconciles within `gracefulShutdownMs`.
 */
export class Controller {
  readonly name: string;
  readonly queue: Workqueue;
  private readonly reconciler: Reconciler;
  private readonly workers: number;
  private readonly reconcileTimeoutMs: number;
  private readonly gracefulShutdownMs: number;
  private readonly clock: Clock;
  private readonly workerTimeSliceMs: number;
  private readonly log: Logger;
  private readonly metrics: ControllerMetrics | undefined;
  private readonly observer: ReconcileObserver | undefined;
  private readonly requests: RequestCodec;
  /**
   * The signals of the reconciles in flight, aborted to cancel them (drain ran out of time, or
   * fencing). A set rather than one parent signal each reconcile links to: adding and removing an
   * abort listener per reconcile cost more than the set.
   */
  private readonly inFlight = new Set<AbortController>();
  private started = false;
  private readonly tracing: ReconcileTracing | undefined;

  constructor(options: ControllerOptions) {
    if (!options.name) throw new InvalidOptionError('name', 'is required');
    this.name = options.name;
    this.reconciler = options.reconciler;
    this.workers = options.maxConcurrentReconciles ?? DEFAULT_MAX_CONCURRENT_RECONCILES;
    if (!Number.isInteger(this.workers) || this.workers < 1)
      throw new InvalidOptionError('maxConcurrentReconciles', 'must be an integer >= 1');
    this.reconcileTimeoutMs = options.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    if (!(this.reconcileTimeoutMs >= 0)) throw new InvalidOptionError('reconcileTimeoutMs', 'must be >= 0');
    this.gracefulShutdownMs = options.gracefulShutdownMs ?? DEFAULT_GRACEFUL_SHUTDOWN_MS;
    if (!(this.gracefulShutdownMs >= 0)) throw new InvalidOptionError('gracefulShutdownMs', 'must be >= 0');
    const perGroup = options.maxConcurrentReconcilesPerGroup;
    if (perGroup !== undefined) {
      if (!Number.isInteger(perGroup) || perGroup < 1 || perGroup > this.workers)
        throw new InvalidOptionError(
          'maxConcurrentReconcilesPerGroup',
          `must be an integer from 1 to maxConcurrentReconciles (${this.workers}), got ${perGroup}`,
        );
      if (!options.fairnessKey)
        throw new InvalidOptionError(
          'maxConcurrentReconcilesPerGroup',
          'needs the fairnessKey option (the groups it caps)',
        );
    }
    this.clock = options.clock ?? realClock;
    this.workerTimeSliceMs = options.workerTimeSliceMs ?? (this.clock === realClock ? WORKER_TIME_SLICE_MS : 0);
    if (!(this.workerTimeSliceMs >= 0)) throw new InvalidOptionError('workerTimeSliceMs', 'must be a number >= 0');
    this.log = (options.logger ?? silentLogger).child({ controller: this.name });
    this.queue = new Workqueue({
      name: this.name,
      controller: this.name,
      clock: this.clock,
      ...omitUndefined({
        rateLimiter: options.rateLimiter,
        registry: options.registry,
        priorityQueue: options.priorityQueue,
        fairnessKey: options.fairnessKey,
        maxInFlightPerGroup: perGroup,
      }),
    });
    this.metrics = options.registry ? new ControllerMetrics(options.registry, this.name, this.workers) : undefined;
    this.observer = options.observer;
    this.requests = options.requests ?? objectRequestCodec;
    const tracer = (options.tracing ?? DEFAULT_CONTROLLER_TRACING) ? runtimeTracer() : undefined;
    this.tracing = tracer && new ReconcileTracing(tracer.api, tracer.tracer, this.name);
  }

  /** Whether reconciles are traced (`tracing` on and `@opentelemetry/api` installed): worth calling {@link recordTrigger}. */
  get traced(): boolean {
    return this.tracing !== undefined;
  }

  /**
   * Notes what caused `key` (a queue key) to be queued, for the span of its next reconcile; the
   * controller's own sources and requeues do it themselves. A no-op when not {@link traced}.
   */
  recordTrigger(key: string, trigger: ReconcileTrigger): void {
    this.tracing?.record(key, trigger);
  }

  /** Number of workers (`maxConcurrentReconciles`). */
  get workerCount(): number {
    return this.workers;
  }

  /**
   * Asks for a reconcile of `ref` (de-duplicated with any pending one; a pending one moves up to
   * `options.priority` if that is higher).
   */
  enqueue(ref: ObjectRef, options?: AddOptions): void {
    const key = objectKey(ref);
    this.tracing?.record(key, { type: 'enqueue' });
    this.queue.add(key, options);
  }

  /**
   * Runs the workers until `signal` aborts, then stops intake and waits for in-flight reconciles:
   * up to `gracefulShutdownMs`, after which their signals are aborted and we wait once more for
   * as long. When the abort reason has code `ERR_LEADERSHIP_LOST` (fencing), in-flight reconciles
   * are aborted at once instead. Resolves when every worker has returned.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new AlreadyStartedError(`controller ${this.name} was already started`);
    this.started = true;
    this.log.info({ workers: this.workers }, 'starting workers');
    const workers = Array.from({ length: this.workers }, () => this.worker());
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    if (isLeadershipLost(signal.reason)) {
      // Another replica may lead soon: in-flight reconciles must stop now, not after a graceful drain.
      this.log.warn({}, 'leadership lost: aborting in-flight reconciles');
      this.abortInFlight(signal.reason);
    } else {
      this.log.info({}, 'stopping: draining in-flight reconciles');
    }
    const drained = await this.queue.shutdown({ drainTimeoutMs: this.gracefulShutdownMs });
    if (!drained.drained) {
      this.log.warn({ inFlight: drained.inFlight }, 'graceful shutdown timed out: aborting in-flight reconciles');
      this.abortInFlight(new AbortedError('graceful shutdown timed out'));
      await this.queue.shutdown({ drainTimeoutMs: this.gracefulShutdownMs });
    }
    await Promise.all(workers);
    this.log.info({}, 'stopped');
  }

  /** Aborts the signal of every reconcile in flight now (fencing on leadership loss, hard stop). */
  abortInFlight(reason: unknown): void {
    for (const abort of this.inFlight) abort.abort(reason);
  }

  private async worker(): Promise<void> {
    // Real time, not the injected clock: what is bounded is how long the event loop is held.
    let sliceStartedAt = performance.now();
    for (;;) {
      const next = await this.queue.get();
      if (next.shutdown) return;
      try {
        await this.reconcileKey(next.key);
      } catch (err) {
        // reconcileKey handles reconciler errors itself; this is a bug in our own bookkeeping.
        this.log.error({ err, key: next.key }, 'internal error in controller worker');
      } finally {
        this.queue.done(next.key);
      }
      if (this.workerTimeSliceMs > 0 && performance.now() - sliceStartedAt >= this.workerTimeSliceMs) {
        await nextMacrotask();
        sliceStartedAt = performance.now();
      }
    }
  }

  private async reconcileKey(key: string): Promise<void> {
    const request = this.requests.parse(key);
    const reconcileID = randomUUID();
    const traced = this.tracing?.start(key, reconcileID, request);
    // The trace id on every line of the reconcile ties its logs to its trace (and reconcileID is on the span).
    const log = new DeferredChildLogger(this.log, {
      ...this.requests.logFields(request),
      reconcileID,
      ...(traced?.traceID !== undefined && { traceID: traced.traceID }),
    });
    const abort = new AbortController();
    this.inFlight.add(abort);
    const timer =
      this.reconcileTimeoutMs > 0
        ? this.clock.setTimer(this.reconcileTimeoutMs, () =>
            abort.abort(new ReconcileTimeoutError(this.reconcileTimeoutMs)),
          )
        : undefined;
    const started = this.clock.monotonicNow();
    const startedAtMs = this.observer ? this.clock.now() : 0;
    this.metrics?.reconcileStarted();
    // The start of a reconcile, for whoever follows spans through the log (the simulation's
    // concurrent-reconcile oracle); a debug line, dropped without cost at pino's usual level.
    log.debug({}, 'reconcile started');
    let outcome: ReconcileOutcomeLabel = 'success';
    let flags: { terminal?: boolean; panic?: boolean } = {};
    let thrown: unknown;
    let result: Result | void = undefined;
    try {
      try {
        const context = { signal: abort.signal, log, reconcileID };
        result = await (traced
          ? traced.run(() => this.reconciler.reconcile(request, context))
          : this.reconciler.reconcile(request, context));
      } catch (err) {
        outcome = 'error';
        thrown = err;
        flags = this.handleError(key, err, log);
        return;
      }
      if (result && result.kind === 'requeueAfter') {
        outcome = 'requeue_after';
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfterMs, this.requeuePriority(key));
        log.debug({ requeueAfterMs: result.requeueAfterMs }, 'reconcile requested a requeue');
      } else {
        this.queue.forget(key);
        log.debug({}, 'reconcile succeeded');
      }
    } finally {
      timer?.cancel();
      this.inFlight.delete(abort);
      const durationMs = this.clock.monotonicNow() - started;
      this.metrics?.reconcileFinished(outcome, durationMs / 1000, flags);
      if (traced) this.finishSpan(traced, key, outcome, flags, result, thrown);
      if (this.observer)
        this.notify({
          key,
          reconcileID,
          startedAtMs,
          durationMs,
          outcome: flags.terminal ? 'terminal_error' : outcome,
          error: thrown,
        });
    }
  }

  private finishSpan(
    traced: ReconcileSpan,
    key: string,
    outcome: ReconcileOutcomeLabel,
    flags: { terminal?: boolean },
    result: Result | void,
    error: unknown,
  ): void {
    try {
      this.tracing!.finish(traced, key, { label: flags.terminal ? 'terminal_error' : outcome, result, error });
    } catch (err) {
      // A tracing SDK's bug must not become a reconcile failure.
      this.log.error({ err }, 'ending the reconcile span failed');
    }
  }

  private notify(record: ReconcileRecord): void {
    try {
      this.observer!.reconciled(record);
    } catch (err) {
      // An observer is a view; its bug must not become a reconcile failure.
      this.log.error({ err }, 'reconcile observer threw');
    }
  }

  /** Backoff-requeue for ordinary errors; log-and-forget for terminal ones. */
  private handleError(key: string, err: unknown, log: Logger): { terminal?: boolean; panic?: boolean } {
    if (isTerminalError(err)) {
      this.queue.forget(key);
      log.error({ err }, 'reconcile failed with a terminal error: not retrying');
      return { terminal: true };
    }
    const panic = isReconcilePanic(err);
    this.queue.addRateLimited(key, this.requeuePriority(key));
    log.error(
      { err, retries: this.queue.numRequeues(key), panic },
      panic ? 'reconciler threw a programming error: requeued with backoff' : 'reconcile failed: requeued with backoff',
    );
    return { panic };
  }

  /** A requeue keeps the priority the key was handed out at, as controller-runtime's does. */
  private requeuePriority(key: string): AddOptions | undefined {
    const priority = this.queue.priorityOf(key);
    return priority === undefined || priority === DEFAULT_PRIORITY ? undefined : { priority };
  }
}

/**
 * Whether a value thrown by a reconciler is a panic (`controller_runtime_reconcile_panics_total`):
 * JavaScript's closest thing to a Go panic, a programming fault in user code.
 *
 * - A panic: a `TypeError`, `RangeError`, `ReferenceError` or `SyntaxError` (calling undefined,
 *   a bad array length, a typo'd name, `JSON.parse` of malformed text), or a thrown value that is
 *   not an `Error` at all (`throw 'x'`, `throw null`).
 * - Not a panic, only a reconcile error: any `OperatorRuntimeError` — the library's own errors
 *   (an `ApiError` conflict, an `InvalidArgumentError` from `requeueAfter(-1)`, a timeout) bubbling
 *   out of a client or helper call (code in `src/` throws no bare TypeError/RangeError/Error; a
 *   test, no-bare-throws.test.ts, keeps it so) —
 *   and any other `Error` the user throws (`throw new Error('backup not ready')`), including
 *   DOMException aborts and undici's `TypeError('fetch failed')`, which is a network failure
 *   wearing a TypeError, not a bug.
 *
 * Both count in `controller_runtime_reconcile_errors_total` and requeue with backoff; a panic also
 * counts in the panics counter, so an alert on it means "a bug to fix", not "the cluster is busy".
 */
function isReconcilePanic(err: unknown): boolean {
  if (!(err instanceof Error)) return true;
  if (err instanceof OperatorRuntimeError) return false;
  if (err instanceof TypeError && err.message === 'fetch failed') return false;
  return (
    err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError || err instanceof SyntaxError
  );
}
