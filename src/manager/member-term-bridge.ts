/**
 * Lets work that needs this replica's ring membership (a sharded fleet's cluster Leases) run inside
 * the manager's own member term, rather than holding the membership Lease a second time: the
 * bridge's runnable joins the sharded group, and `run` hands each term's signal to the work.
 */
import { whenAborted } from '../core/abort.js';
import { isLeadershipLost } from '../core/leadership-lost.js';
import type { LeaderWork } from '../leader-election/leader-elector.js';
import type { Runnable } from './runnable.js';

export class MemberTermBridge {
  private term: AbortSignal | undefined;
  private readonly waiters = new Set<(term: AbortSignal) => void>();

  /** Added to the manager as sharded work: it lives exactly as long as each member term. */
  readonly runnable: Runnable = {
    start: async (termSignal) => {
      this.term = termSignal;
      for (const wake of this.waiters) wake(termSignal);
      this.waiters.clear();
      await whenAborted(termSignal);
      if (this.term === termSignal) this.term = undefined;
    },
  };

  /**
   * Runs `work` in the next member term, under a signal aborted when the term or `signal` ends.
   * Resolves when `signal` aborts or the term ends cleanly (the manager stopping); rejects with
   * the term's reason when membership was lost (fencing, code `ERR_LEADERSHIP_LOST`), which stops
   * the manager, as losing a sharded controller's membership does.
   */
  readonly run = async (signal: AbortSignal, work: LeaderWork): Promise<void> => {
    const term = await this.nextTerm(signal);
    if (!term) return;
    const workSignal = AbortSignal.any([signal, term]);
    await work(workSignal);
    await whenAborted(workSignal);
    if (signal.aborted) return;
    const reason: unknown = term.reason;
    if (isLeadershipLost(reason)) throw reason;
  };

  private nextTerm(signal: AbortSignal): Promise<AbortSignal | undefined> {
    if (this.term && !this.term.aborted) return Promise.resolve(this.term);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        this.waiters.delete(wake);
        resolve(undefined);
      };
      const wake = (term: AbortSignal): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(term);
      };
      if (signal.aborted) return resolve(undefined);
      this.waiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
