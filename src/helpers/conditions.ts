/**
 * metav1.Condition helpers, pure: they return a new array and never write. Semantics of
 * apimachinery's `meta.SetStatusCondition`: `lastTransitionTime` moves only when `status` changes,
 * so readers can tell how long a condition has held; reason, message and observedGeneration are
 * refreshed on every set.
 */
import { realClock, type Clock } from '../core/clock.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { InvalidConditionError } from './errors.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition as it appears in `status.conditions`. */
export interface Condition {
  /** CamelCase, e.g. `Ready`, `Available`, or `example.com/Synced`. */
  type: string;
  status: ConditionStatus;
  /** The generation the condition was computed from. */
  observedGeneration?: number;
  /** RFC 3339, second precision, as the API server serializes metav1.Time. */
  lastTransitionTime: string;
  /** CamelCase, machine-readable: why the status is what it is. */
  reason: string;
  /** For humans; may be empty. */
  message: string;
}

/** What the caller sets; `lastTransitionTime` is the helper's job. */
export interface ConditionInput {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  /** @defaultValue '' */
  readonly message?: string;
  readonly observedGeneration?: number;
}

export interface SetConditionOptions {
  /** Source of `lastTransitionTime`. @defaultValue realClock */
  readonly clock?: Clock;
}

// The patterns and limits of metav1.Condition's validation, so a bad condition fails here, not
// as a 422 from the API server after the reconcile did its work.
const TYPE_PATTERN =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const MAX_TYPE_LENGTH = 316;
const MAX_REASON_LENGTH = 1024;
const MAX_MESSAGE_LENGTH = 32768;
const STATUSES: ReadonlySet<string> = new Set(['True', 'False', 'Unknown']);

/** Throws `InvalidConditionError` for what the API server would reject, and for a reason that is not CamelCase. */
export function validateCondition(input: ConditionInput): void {
  if (input.type.length > MAX_TYPE_LENGTH || !TYPE_PATTERN.test(input.type)) {
    throw new InvalidConditionError(
      'type',
      `${JSON.stringify(input.type)} is not a qualified name (e.g. Ready or example.com/Synced)`,
    );
  }
  if (!STATUSES.has(input.status))
    throw new InvalidConditionError('status', `${JSON.stringify(input.status)} is not True, False or Unknown`);
  // metav1 allows a lowercase first letter; the API conventions ask for CamelCase, and a leading
  // capital is what makes reasons readable as identifiers in `kubectl describe`.
  if (input.reason.length > MAX_REASON_LENGTH || !REASON_PATTERN.test(input.reason) || !/^[A-Z]/.test(input.reason)) {
    throw new InvalidConditionError(
      'reason',
      `${JSON.stringify(input.reason)} is not CamelCase (e.g. MinimumReplicasAvailable)`,
    );
  }
  if ((input.message ?? '').length > MAX_MESSAGE_LENGTH)
    throw new InvalidConditionError('message', `longer than ${MAX_MESSAGE_LENGTH} characters`);
  if (
    input.observedGeneration !== undefined &&
    !(Number.isInteger(input.observedGeneration) && input.observedGeneration >= 0)
  ) {
    throw new InvalidConditionError('observedGeneration', 'must be an integer >= 0');
  }
}

/** metav1.Time: RFC 3339 at second precision (the API server drops fractions). */
export function formatConditionTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * Returns `conditions` with `input` set: added (with a fresh lastTransitionTime) when its type is
 * new; otherwise updated in place of the old entry, with lastTransitionTime changed only if the
 * status changed. Order is kept. The input array is not modified.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  options: SetConditionOptions = {},
): Condition[] {
  validateCondition(input);
  const list = (conditions ?? []).map((c) => ({ ...c }));
  const existing = list.find((c) => c.type === input.type);
  const next: Condition = {
    type: input.type,
    status: input.status,
    ...omitUndefined({ observedGeneration: input.observedGeneration }),
    lastTransitionTime:
      existing && existing.status === input.status && existing.lastTransitionTime
        ? existing.lastTransitionTime
        : formatConditionTime((options.clock ?? realClock).now()),
    reason: input.reason,
    message: input.message ?? '',
  };
  if (!existing) return [...list, next];
  return list.map((c) => (c === existing ? next : c));
}

export function getCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

export function isConditionFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'False';
}

/** Returns `conditions` without the condition of `type` (a copy either way). */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type).map((c) => ({ ...c }));
}
