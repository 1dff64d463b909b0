import { InvalidArgumentError } from '../core/errors.js';

/**
 * What a reconcile asks for next. Returning nothing means done. A thrown error means "retry with
 * backoff"; a `TerminalError` means "do not retry until something changes".
 */
export type Result =
  | { readonly kind: 'done' }
  | { readonly kind: 'requeueAfter'; readonly requeueAfterMs: number };

const DONE: Result = Object.freeze({ kind: 'done' });

/** Nothing more to do until the next change. */
export function done(): Result {
  return DONE;
}

/**
 * Reconcile this key again after `ms` (for polling external work without holding a worker). Several
 * requests for one key coalesce; the earliest wins. The key's error backoff is reset.
 */
export function requeueAfter(ms: number): Result {
  if (!(ms >= 0) || !Number.isFinite(ms)) throw new InvalidArgumentError(`requeueAfter: ms must be a finite number >= 0, got ${ms}`);
  return { kind: 'requeueAfter', requeueAfterMs: ms };
}
