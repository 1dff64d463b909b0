import { InvalidArgumentError } from './errors.js';

/**
 * What a reconcile, or one step of it, asks for next: the one result type of reconcilers,
 * `runActions`' actions and `handleFinalizer`'s cleanup (it lives in core so that the helpers,
 * which sit beside the controller module, share it). Returning nothing asks for nothing: a
 * reconcile is then done, and an action chain goes on with its next action. A thrown error means
 * "retry with backoff"; a `TerminalError` means "do not retry until something changes".
 */
export type Result = { readonly kind: 'done' } | { readonly kind: 'requeueAfter'; readonly requeueAfterMs: number };

const DONE: Result = Object.freeze({ kind: 'done' });

/** Nothing more to do until the next change (in an action chain: stop here). */
export function done(): Result {
  return DONE;
}

/**
 * Reconcile this key again after `ms` (for polling external work without holding a worker). Several
 * requests for one key coalesce; the earliest wins. The key's error backoff is reset.
 */
export function requeueAfter(ms: number): Result {
  if (!(ms >= 0) || !Number.isFinite(ms))
    throw new InvalidArgumentError(`requeueAfter: ms must be a finite number >= 0, got ${ms}`);
  return { kind: 'requeueAfter', requeueAfterMs: ms };
}

/** True for a `requeueAfter` result. */
export function isRequeue(result: Result | void | undefined): result is Extract<Result, { kind: 'requeueAfter' }> {
  return result !== undefined && result !== null && result.kind === 'requeueAfter';
}
