import { setMaxListeners } from 'node:events';
import { linkedAbortController } from '../core/abort.js';

/** Listeners the manager's stop signal may carry before Node warns (one per runnable and term, and more). */
const MAX_SIGNAL_LISTENERS = 10_000;

/**
 * One signal that stops a manager's run: the caller's, or the first failure of any part, which
 * `start()` then rethrows. Later failures are logged by their owners and otherwise dropped.
 */
export class StopOnFailure {
  readonly signal: AbortSignal;
  private readonly controller: AbortController;
  private readonly unlink: () => void;
  private first: unknown;

  constructor(caller: AbortSignal) {
    const { controller, dispose } = linkedAbortController(caller);
    this.controller = controller;
    this.signal = controller.signal;
    this.unlink = dispose;
    setMaxListeners(MAX_SIGNAL_LISTENERS, this.signal);
  }

  /** What failed first; undefined while nothing has (a rejection with `undefined` counts as none, as before). */
  get failure(): unknown {
    return this.first;
  }

  /** Records `err` unless something failed before, and stops everything with it as the reason. */
  fail = (err: unknown): void => {
    this.first ??= err;
    this.controller.abort(err);
  };

  /** Removes the listener on the caller's signal, once the run is over. */
  dispose(): void {
    this.unlink();
  }
}
