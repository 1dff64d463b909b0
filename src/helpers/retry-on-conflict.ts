import { isConflict, type ApiError } from '../client/api-error.js';
import { sleep, throwIfAborted } from '../core/abort.js';
import { realClock, type Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';

export interface RetryOnConflictOptions {
  /** Attempts in all (not retries). @defaultValue DEFAULT_RETRY.steps (5) */
  readonly steps?: number;
  /** Delay before the second attempt. @defaultValue DEFAULT_RETRY.baseMs (10) */
  readonly baseMs?: number;
  /** Growth of the delay per attempt. @defaultValue DEFAULT_RETRY.factor (1) */
  readonly factor?: number;
  /** Each delay is stretched by a random fraction in [0, jitter), as client-go's wait.Backoff. @defaultValue DEFAULT_RETRY.jitter (0.1) */
  readonly jitter?: number;
  /** Cap on one delay. @defaultValue Infinity */
  readonly capMs?: number;
  /** @defaultValue realClock (awaited waits use keep-alive timers) */
  readonly clock?: Clock;
  /** Stops retrying (and waiting) when aborted; the reconcile's signal. */
  readonly signal?: AbortSignal;
  /** Random source in [0, 1) for jitter (tests). @defaultValue Math.random */
  readonly random?: () => number;
  /** Which errors are retried. @defaultValue isResourceVersionConflict */
  readonly retryable?: (err: unknown) => boolean;
}

/**
 * client-go's `retry.DefaultRetry`: 5 attempts 10 ms apart with 10% jitter. Short on purpose: a
 * conflict means someone else just wrote, and re-reading usually wins at once; a longer fight is
 * better left to the workqueue's backoff.
 */
export const DEFAULT_RETRY = Object.freeze({ steps: 5, baseMs: 10, factor: 1, jitter: 0.1 });

/**
 * A 409 Conflict that re-reading can fix: a stale resourceVersion. Not AlreadyExists, and not a
 * server-side apply field-ownership conflict (also a 409, with FieldManagerConflict causes), which
 * repeats identically until the apply is forced or the other manager lets go.
 */
export function isResourceVersionConflict(err: unknown): boolean {
  if (!isConflict(err)) return false;
  // A server-side apply field conflict is a 409 too, but re-reading cannot resolve it.
  const causes = (err as ApiError).details?.causes ?? [];
  return !causes.some((c) => c.reason === 'FieldManagerConflict');
}

/**
 * Runs `fn` and, when it fails with 409 Conflict, runs it again after a short backoff, up to
 * `steps` attempts. `fn` must re-read the object and re-apply its change each time: retrying a
 * write with the stale resourceVersion can only conflict again, and dropping the precondition
 * would lose the other writer's change. Any other error is thrown at once; after the last attempt
 * the last conflict is thrown. `attempt` counts from 1.
 */
export async function retryOnConflict<T>(fn: (attempt: number) => Promise<T>, options: RetryOnConflictOptions = {}): Promise<T> {
  const steps = options.steps ?? DEFAULT_RETRY.steps;
  const baseMs = options.baseMs ?? DEFAULT_RETRY.baseMs;
  const factor = options.factor ?? DEFAULT_RETRY.factor;
  const jitter = options.jitter ?? DEFAULT_RETRY.jitter;
  const capMs = options.capMs ?? Infinity;
  if (!(Number.isInteger(steps) && steps >= 1)) throw new InvalidOptionError('steps', 'must be an integer >= 1');
  if (!(baseMs >= 0)) throw new InvalidOptionError('baseMs', 'must be >= 0');
  if (!(factor >= 1)) throw new InvalidOptionError('factor', 'must be >= 1');
  if (!(jitter >= 0)) throw new InvalidOptionError('jitter', 'must be >= 0');
  const clock = options.clock ?? realClock;
  const random = options.random ?? Math.random;
  const retryable = options.retryable ?? isResourceVersionConflict;
  let delayMs = baseMs;
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(options.signal);
    try {
      return await fn(attempt);
    } catch (err) {
      if (!retryable(err) || attempt >= steps) throw err;
    }
    const wait = Math.min(capMs, delayMs + (jitter > 0 ? random() * jitter * delayMs : 0));
    await sleep(clock, wait, options.signal);
    delayMs = Math.min(capMs, delayMs * factor);
  }
}
