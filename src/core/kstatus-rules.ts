/**
 * The kstatus contract as one pure function: how a reader (Flux, `kubectl wait`, Argo CD through
 * the generated health check) judges a custom resource from its metadata and status. The status
 * helpers (helpers/kstatus.ts) write objects these rules read as intended, and the generated Flux
 * CEL and Argo CD Lua checks (codegen/health-checks.ts) encode the same rules; docs/status.md lists
 * each rule with its source. It lives in core because both of those layers need it.
 */

/** The condition types kstatus reads. */
export const READY_CONDITION = 'Ready';
export const RECONCILING_CONDITION = 'Reconciling';
export const STALLED_CONDITION = 'Stalled';

/** kstatus's statuses for an object that exists (NotFound and Unknown are the poller's). */
export type KstatusStatus = 'InProgress' | 'Failed' | 'Current' | 'Terminating';

export interface KstatusResult {
  readonly status: KstatusStatus;
  /** Which rule decided (R1…R6 of docs/status.md). */
  readonly rule: KstatusRule;
  /** The deciding condition's reason (or the rule's own, e.g. `LatestGenerationNotObserved`). */
  readonly reason: string;
  readonly message: string;
}

export type KstatusRule = 'R1' | 'R2' | 'R3' | 'R4' | 'R5' | 'R6';

/** The fields the rules read; any custom resource fits. */
export interface KstatusObject {
  readonly metadata?: { readonly generation?: number; readonly deletionTimestamp?: string };
  readonly status?: unknown;
}

interface ConditionLike {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly reason?: unknown;
  readonly message?: unknown;
  readonly observedGeneration?: unknown;
}

/**
 * A condition of `type` that speaks for the current generation: one whose observedGeneration is
 * older than metadata.generation describes a spec that is gone, and is not read.
 */
function freshCondition(obj: KstatusObject, type: string): ConditionLike | undefined {
  const status = obj.status as { conditions?: unknown } | undefined;
  const conditions = Array.isArray(status?.conditions) ? (status.conditions as ConditionLike[]) : [];
  const generation = obj.metadata?.generation;
  return conditions.find(
    (c) => c.type === type && (c.observedGeneration === undefined || c.observedGeneration === generation),
  );
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * Judges `obj` by the rules in order; the first that applies decides:
 * R1 deleting → Terminating; R2 status.observedGeneration missing or not metadata.generation →
 * InProgress; R3 Reconciling=True → InProgress; R4 Stalled=True → Failed; R5 Ready=True → Current;
 * R6 otherwise (Ready False, Unknown or absent) → InProgress.
 */
export function computeKstatus(obj: KstatusObject): KstatusResult {
  if (obj.metadata?.deletionTimestamp)
    return { status: 'Terminating', rule: 'R1', reason: 'Deleting', message: 'the object is being deleted' };
  const generation = obj.metadata?.generation;
  const observed = (obj.status as { observedGeneration?: unknown } | undefined)?.observedGeneration;
  if (observed === undefined || observed !== generation) {
    return {
      status: 'InProgress',
      rule: 'R2',
      reason: 'LatestGenerationNotObserved',
      message: `generation ${String(generation)} not yet observed (observedGeneration ${String(observed)})`,
    };
  }
  const reconciling = freshCondition(obj, RECONCILING_CONDITION);
  if (reconciling?.status === 'True')
    return { status: 'InProgress', rule: 'R3', reason: text(reconciling.reason), message: text(reconciling.message) };
  const stalled = freshCondition(obj, STALLED_CONDITION);
  if (stalled?.status === 'True')
    return { status: 'Failed', rule: 'R4', reason: text(stalled.reason), message: text(stalled.message) };
  const ready = freshCondition(obj, READY_CONDITION);
  if (ready?.status === 'True')
    return { status: 'Current', rule: 'R5', reason: text(ready.reason), message: text(ready.message) };
  return {
    status: 'InProgress',
    rule: 'R6',
    reason: ready ? text(ready.reason) : 'ReadyNotReported',
    message: ready ? text(ready.message) : 'no Ready condition for this generation yet',
  };
}
