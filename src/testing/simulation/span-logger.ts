/**
 * The logger a simulation hands each operator process: it turns the controller's own reconcile
 * lines (`starting workers`; `reconcile started`, then `reconcile succeeded` / `requested a requeue` / `failed…`, all
 * bound to `controller`, `namespace`, `name` and `reconcileID`) into ReconcileSpans. That is the one
 * seam every controller of an unchanged manager set-up passes through: the set-up must give the
 * manager the logger it is handed. Lines of a process the simulation has killed are ignored (a dead
 * process writes nothing); every line also goes to the `forward` logger, when one is given.
 */
import type { Logger } from '../../core/logger.js';

const STARTED = 'reconcile started';
const WORKERS_STARTED = 'starting workers';
const ENDED: Readonly<Record<string, string>> = {
  'reconcile succeeded': 'success',
  'reconcile requested a requeue': 'requeue_after',
  'reconcile failed with a terminal error: not retrying': 'terminal_error',
  'reconcile failed: requeued with backoff': 'error',
  'reconciler threw a programming error: requeued with backoff': 'panic',
};

/** Where span lines go: `reconcileID` ties an end to its start. */
export interface SpanSink {
  /** A controller of this process started its workers (it leads, or needs no election). */
  controllerStarted(controller: string): void;
  started(controller: string, key: string, reconcileID: string): void;
  ended(reconcileID: string, outcome: string): void;
}

export class SpanLogger implements Logger {
  private readonly sink: SpanSink;
  private readonly bindings: Readonly<Record<string, unknown>>;
  private readonly forward: Logger | undefined;

  /** `forward`: a logger that also gets every line (the simulation's `logger` option, for looking at one seed). */
  constructor(sink: SpanSink, forward?: Logger, bindings: Readonly<Record<string, unknown>> = {}) {
    this.sink = sink;
    this.forward = forward;
    this.bindings = bindings;
  }

  debug(obj: Record<string, unknown>, msg?: string): void {
    this.forward?.debug(obj, msg);
    this.line(msg);
  }

  info(obj: Record<string, unknown>, msg?: string): void {
    this.forward?.info(obj, msg);
    this.line(msg);
  }

  warn(obj: Record<string, unknown>, msg?: string): void {
    this.forward?.warn(obj, msg);
    this.line(msg);
  }

  error(obj: Record<string, unknown>, msg?: string): void {
    this.forward?.error(obj, msg);
    this.line(msg);
  }

  child(bindings: Record<string, unknown>): Logger {
    return new SpanLogger(this.sink, this.forward?.child(bindings), { ...this.bindings, ...bindings });
  }

  private line(msg: string | undefined): void {
    if (msg === undefined) return;
    const id = this.bindings.reconcileID;
    if (msg === WORKERS_STARTED && typeof this.bindings.controller === 'string') {
      this.sink.controllerStarted(this.bindings.controller);
      return;
    }
    if (typeof id !== 'string') return;
    if (msg === STARTED) {
      const namespace = typeof this.bindings.namespace === 'string' ? this.bindings.namespace : '';
      const name = typeof this.bindings.name === 'string' ? this.bindings.name : '';
      const controller = typeof this.bindings.controller === 'string' ? this.bindings.controller : '';
      this.sink.started(controller, namespace ? `${namespace}/${name}` : name, id);
      return;
    }
    const outcome = ENDED[msg];
    if (outcome !== undefined) this.sink.ended(id, outcome);
  }
}
