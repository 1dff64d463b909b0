import { isConflict, type ApiError } from '../client/api-error.js';
import { sleep, throwIfAborted } from '../core/abort.js';
import { realClock, type Clock } from '../core/clock.js';
import { resolveBackoff, type BackoffOptions, type ResolvedBackoff } from '../core/backoff-options.js';

export interface RetryOnConflictOptions {
  /**
   * Attempts, delays and jitter. Here `jitter` stretches each delay by a random fraction in
   * [0, jitter) (client-go's wait.Backoff), and `'full'` draws it from [0, delay].
   * @defaultValue {@link DEFAULT_RETRY} (5 attempts, 10 ms apart, ×1, 10% jitter, no cap)
   */
  readonly backoff?: BackoffOptions;
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
export const DEFAULT_RETRY: ResolvedBackoff = Object.freeze({
  maxAttempts: 5,
  initialMs: 10,
  maxMs: Infinity,
  factor: 1,
  jitter: 0.1,
});

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
 * `backoff.maxAttempts` attempts. `fn` must re-read the object and re-apply its change each time: retrying a
 * write with the stale resourceVersion can only conflict again, and dropping the precondition
 * would lose the other writer's change. Any other error is thrown at once; after the last attempt
 * the last conflict is thrown. `attempt` counts from 1.
 */
export async function retryOnConflict<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOnConflictOptions = {},
): Promise<T> {
  const { maxAttempts, initialMs, maxMs, factor, jitter } = resolveBackoff(DEFAULT_RETRY, options.backoff);
  const clock = options.clock ?? realClock;
  const random = options.random ?? Math.random;
  const retryable = options.retryable ?? isResourceVersionConflict;
  let delayMs = initialMs;
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(options.signal);
    try {
      return await fn(attempt);
    } catch (err) {
      if (!retryable(err) || attempt >= maxAttempts) throw err;
    }
    const wait =
      jitter === 'full'
        ? random() * delayMs
        : Math.min(maxMs, delayMs + (jitter > 0 ? random() * jitter * delayMs : 0));
    await sleep(clock, wait, options.signal);
    delayMs = Math.min(maxMs, delayMs * factor);
  }
}
