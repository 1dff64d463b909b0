/**
 * A term: work that runs only while this replica holds something — the leadership (`LeaderElection`)
 * or its ring membership (`Sharding.runMember`). Both hand the work a signal that aborts when the
 * term ends and wait for the work to stop before they let their Lease go; one function serves both.
 */
import { linkedAbortController, whenAborted } from '../core/abort.js';
import type { Logger } from '../core/logger.js';
import type { RunnableGroup } from './runnable-group.js';
import type { Runnable } from './runnable.js';

export interface TermOptions {
  /** A fresh group of the term's work, for each term. */
  readonly work: () => RunnableGroup;
  /** Aborts when the manager stops: a term that ends then is no failure. */
  readonly stopping: AbortSignal;
  /** Stops the manager with the reason the term was lost (e.g. `ERR_LEADERSHIP_LOST`). */
  readonly fail: (reason: unknown) => void;
  readonly logger: Logger;
  /** Logged (info) when a term's work starts, with `fields`. */
  readonly startMessage: string;
  /** Logged (error) when the term is lost while the manager runs. */
  readonly lostMessage: string;
  readonly fields?: Readonly<Record<string, unknown>>;
}

/**
 * Runs one term's work until `termSignal` aborts (the term lost) or `options.stopping` does. The
 * work's signal aborts with the term's reason, so controllers see `ERR_LEADERSHIP_LOST` and abort
 * in-flight reconciles (fencing); losing the term while the manager runs fails the manager with that
 * reason. Settles (never rejects) once the work has stopped: the holder waits for it before it
 * releases its Lease, so nobody else works while ours still runs.
 */
export async function runTerm(termSignal: AbortSignal, options: TermOptions): Promise<void> {
  const { controller: work, dispose } = linkedAbortController(termSignal, options.stopping);
  const onLost = (): void => {
    if (options.stopping.aborted) return;
    options.logger.error({ reason: String(termSignal.reason) }, options.lostMessage);
    options.fail(termSignal.reason);
  };
  termSignal.addEventListener('abort', onLost, { once: true });
  const group = options.work();
  options.logger.info({ runnables: group.size, ...options.fields }, options.startMessage);
  try {
    await group.start(work.signal);
    await whenAborted(work.signal);
  } catch (err) {
    options.fail(err);
  } finally {
    await group.stop();
    termSignal.removeEventListener('abort', onLost);
    dispose();
  }
}

/** How terms are held: `(signal, work) => election.run(signal, work)`, or `sharding.runMember`. */
export type TermHolder = (signal: AbortSignal, onStarted: (termSignal: AbortSignal) => Promise<void>) => Promise<void>;

/** A term that is always held (a manager without leader election leads alone). */
export const alwaysHeld: TermHolder = async (signal, onStarted) => {
  void onStarted(new AbortController().signal);
  await whenAborted(signal);
};

/**
 * A runnable holding terms with `hold`, each term's work run by `runTerm`. When its signal aborts
 * it waits for every term's work to stop, and only then stops the holder (which releases its
 * Lease). The holder failing fails the manager; the runnable itself never rejects.
 */
export function termRunnable(hold: TermHolder, options: TermOptions): Runnable {
  return {
    async start(signal) {
      const stopping = linkedAbortController(options.stopping, signal);
      const term: TermOptions = { ...options, stopping: stopping.controller.signal };
      const terms: Promise<void>[] = [];
      const holding = new AbortController();
      const held = hold(holding.signal, (termSignal) => {
        const run = runTerm(termSignal, term);
        terms.push(run);
        return run;
      }).catch((err: unknown) => options.fail(err));
      await Promise.race([held, whenAborted(signal)]);
      await Promise.all(terms);
      holding.abort();
      await held;
      stopping.dispose();
    },
  };
}
