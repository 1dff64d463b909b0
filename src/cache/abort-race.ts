/**
 * Races promises, one after another, against one abort signal with a single abort listener. The
 * watch loop races every event's `next()`; adding and removing a listener on the signal (and a
 * closure for it) per event cost more than the rest of the race.
 */
import { AbortedError } from '../core/errors.js';

export class AbortRace {
  /** Rejects the race in progress, if any. */
  private rejectPending: ((err: unknown) => void) | undefined;
  private readonly onAbort = (): void => {
    const reject = this.rejectPending;
    this.rejectPending = undefined;
    reject?.(this.abortedError());
  };

  constructor(private readonly signal: AbortSignal) {
    if (!signal.aborted) signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /**
   * Settles like `p`, or rejects with `AbortedError` as soon as the signal aborts. One race at a
   * time: a new one replaces the previous as the one an abort rejects.
   */
  race<R>(p: Promise<R>): Promise<R> {
    if (this.signal.aborted) {
      p.catch(() => {});
      return Promise.reject(this.abortedError());
    }
    return new Promise<R>((resolve, reject) => {
      this.rejectPending = reject;
      p.then(resolve, reject);
    });
  }

  /** Removes the listener from the signal. */
  dispose(): void {
    this.rejectPending = undefined;
    this.signal.removeEventListener('abort', this.onAbort);
  }

  private abortedError(): AbortedError {
    return new AbortedError('aborted', { cause: this.signal.reason });
  }
}
