/**
 * Plan mode (`ManagerOptions.plan`): the operator runs against the real cluster, reads stay real,
 * and every write goes as a server-side dry run (`dryRun=All`) and is reported instead of
 * persisted. Each controller reconciles each key once — a dry-run create is never seen by the
 * cache, so a second pass would only plan the same write again — and the run ends when every queue
 * has stayed empty for `quietMs` with every handler caught up. The report is JSON lines: one per
 * write, one per reconcile, a summary at the end.
 */
import type { InformerHealth } from '../cache/informer.js';
import type { ReconcileRecord } from '../controller/controller.js';
import type { ControllerConsoleView } from '../controller/controller-host.js';
import type { Result } from '../controller/result.js';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { describeError } from '../console/redact-message.js';
import type { ObjectWrite, ReconcileScope, ReconcileWrites } from '../console/reconcile-writes.js';

/** How long every queue must stay empty (nothing in flight, every handler caught up) before a plan ends. @defaultValue 1,000 ms */
export const DEFAULT_PLAN_QUIET_MS = 1_000;

export interface PlanOptions {
  /** Where each line of the report goes. @defaultValue one JSON line per call on stdout */
  readonly output?: (line: PlanLine) => void;
  /** @defaultValue {@link DEFAULT_PLAN_QUIET_MS} */
  readonly quietMs?: number;
}

/** A write the operator would make: the object, the verb, and the fields it would change. */
export interface PlanWriteLine extends ObjectWrite {
  readonly plan: 'write';
  readonly controller: string;
  /** The key whose reconcile would make it. */
  readonly key: string;
  readonly reconcileID: string;
}

/** One reconcile of the plan, with its outcome and the number of writes it would make. */
export interface PlanReconcileLine {
  readonly plan: 'reconcile';
  readonly controller: string;
  readonly key: string;
  readonly reconcileID: string;
  readonly result: ReconcileRecord['outcome'];
  /** Redacted. */
  readonly error?: string;
  readonly writes: number;
}

/** The last line: how many keys were reconciled and writes planned, by verb. */
export interface PlanSummaryLine {
  readonly plan: 'summary';
  readonly reconciled: number;
  readonly errors: number;
  readonly writes: number;
  readonly creates: number;
  readonly updates: number;
  readonly patches: number;
  readonly applies: number;
  readonly deletes: number;
}

export type PlanLine = PlanWriteLine | PlanReconcileLine | PlanSummaryLine;

const POLL_MS = 50;

/** One plan-mode run of a manager: the once-per-key gate of every controller, and the report. */
export class PlanRun {
  private readonly output: (line: PlanLine) => void;
  private readonly quietMs: number;
  private readonly queues: ControllerConsoleQueue[] = [];
  private readonly planned: PlanWriteLine[] = [];
  private reconciled = 0;
  private errors = 0;

  constructor(
    options: PlanOptions,
    private readonly deps: {
      readonly clock: Clock;
      readonly writes: ReconcileWrites;
      readonly informers: () => readonly InformerHealth[];
    },
  ) {
    this.quietMs = options.quietMs ?? DEFAULT_PLAN_QUIET_MS;
    if (!(Number.isFinite(this.quietMs) && this.quietMs >= 0))
      throw new InvalidOptionError('plan.quietMs', 'must be a number >= 0');
    this.output = options.output ?? ((line) => void process.stdout.write(`${JSON.stringify(line)}\n`));
  }

  /** Every write planned so far, in order. */
  writes(): readonly PlanWriteLine[] {
    return this.planned;
  }

  /** A write the observed client sent as a dry run: reported with the reconcile it belongs to. */
  wrote(write: ObjectWrite, scope: ReconcileScope | undefined): void {
    const line: PlanWriteLine = {
      plan: 'write',
      controller: scope?.controller ?? '',
      key: scope?.key ?? '',
      reconcileID: scope?.reconcileID ?? '',
      ...write,
    };
    this.planned.push(line);
    this.output(line);
  }

  /**
   * The view a controller gets in plan mode: each key reconciled once, inside a writes scope; `inner` (the console's) still hears everything.
   * @internal the manager's seam
   */
  track(name: string, inner: ControllerConsoleView | undefined): ControllerConsoleView {
    const done = new Set<string>();
    const writes = this.deps.writes;
    const counts = new Map<string, number>();
    const entry: ControllerConsoleQueue = { queue: undefined };
    this.queues.push(entry);
    return {
      attach: (queue, workers) => {
        entry.queue = queue;
        inner?.attach(queue, workers);
      },
      noteTrigger: (key, trigger) => inner?.noteTrigger?.(key, trigger),
      around: (key, reconcileID, run) => {
        if (done.has(key)) return Promise.resolve();
        done.add(key);
        // The console's view opens the scope when its history is on; otherwise this one does.
        const scoped = (): Promise<Result | void> => {
          const scope = writes.current();
          if (scope) return run().finally(() => counts.set(reconcileID, scope.writes.length + scope.omittedWrites));
          const own: ReconcileScope = { controller: name, key, reconcileID, writes: [], omittedWrites: 0 };
          return writes.run(own, run).finally(() => counts.set(reconcileID, own.writes.length + own.omittedWrites));
        };
        return inner?.around ? inner.around(key, reconcileID, scoped) : scoped();
      },
      reconciled: (record) => {
        inner?.reconciled(record);
        const writeCount = counts.get(record.reconcileID);
        if (writeCount === undefined) return; // a key already planned, skipped
        counts.delete(record.reconcileID);
        const failed = record.outcome === 'error' || record.outcome === 'terminal_error';
        this.reconciled++;
        if (failed) this.errors++;
        this.output({
          plan: 'reconcile',
          controller: name,
          key: record.key,
          reconcileID: record.reconcileID,
          result: record.outcome,
          ...(failed ? { error: describeError(record.error) } : {}),
          writes: writeCount,
        });
      },
    };
  }

  /**
   * Resolves once every controller's queue has been empty, with nothing in flight and every
   * informer handler caught up, for `quietMs` in a row (or when `signal` aborts); then reports the
   * summary.
   */
  async quiet(signal: AbortSignal): Promise<void> {
    let quietSince: number | undefined;
    while (!signal.aborted) {
      const now = this.deps.clock.monotonicNow();
      if (this.idle()) {
        quietSince ??= now;
        if (now - quietSince >= this.quietMs) break;
      } else quietSince = undefined;
      await new Promise<void>((resolve) => {
        const onAbort = (): void => (timer.cancel(), resolve());
        const timer = this.deps.clock.setTimer(
          POLL_MS,
          () => (signal.removeEventListener('abort', onAbort), resolve()),
          { keepAlive: true },
        );
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    const count = (verb: ObjectWrite['verb']): number => this.planned.filter((w) => w.verb === verb).length;
    this.output({
      plan: 'summary',
      reconciled: this.reconciled,
      errors: this.errors,
      writes: this.planned.length,
      creates: count('create'),
      updates: count('update'),
      patches: count('patch'),
      applies: count('apply'),
      deletes: count('delete'),
    });
  }

  private idle(): boolean {
    if (this.queues.some((q) => !q.queue || q.queue.length > 0 || q.queue.processingCount > 0)) return false;
    return this.deps.informers().every((i) => i.synced && i.handlers.every((h) => h.synced && h.pendingKeys === 0));
  }
}

interface ControllerConsoleQueue {
  queue: { readonly length: number; readonly processingCount: number } | undefined;
}
