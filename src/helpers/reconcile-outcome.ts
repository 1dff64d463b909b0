/**
 * What a reconcile asks for next — the same shape as the controller's `Result` (structurally
 * identical, so either is accepted where the other is expected), declared here because helpers sit
 * beside the controller module, not above it.
 */
export type ReconcileOutcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'requeueAfter'; readonly requeueAfterMs: number };

export const OUTCOME_DONE: ReconcileOutcome = Object.freeze({ kind: 'done' });

export function isRequeue(outcome: ReconcileOutcome | void | undefined): outcome is { readonly kind: 'requeueAfter'; readonly requeueAfterMs: number } {
  return outcome !== undefined && outcome !== null && outcome.kind === 'requeueAfter';
}
