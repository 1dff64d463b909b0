/**
 * The default normalization for comparing the end states of two runs (a faulty one and the
 * fault-free one of the same scenario): what is left is what the operator decided, not what the
 * store or the clock assigned.
 *
 * Dropped:
 * - `metadata.uid`, `resourceVersion`, `creationTimestamp`, `selfLink`, `managedFields`: assigned by
 *   the server; they differ between any two runs.
 * - `metadata.generation`, `status.observedGeneration` and `status.conditions[].observedGeneration`:
 *   generation counts spec writes, i.e. the path, not the state. A run whose operator retried, or
 *   whose scenario step was applied on top of a half-finished reconcile, may reach the same spec in
 *   more writes. Whether status caught up with the spec is the convergence oracle's question, asked
 *   of each run on its own; here it would only repeat that finding as a spurious difference.
 *
 * Reduced: `ownerReferences` to `{ apiVersion, kind, name, controller }` (`uid` is per run;
 * `controller` is `true` or `false`, an absent one counting as `false`; `blockOwnerDeletion` only
 * matters to the garbage collector's ordering).
 *
 * Sorted: `status.conditions` by `type` (a map keyed by type; when two controllers each add their
 * own, the order is who wrote first).
 *
 * Replaced: every string anywhere that is an ISO-8601 date-time (`2026-01-01T00:00:05Z`, with or
 * without fraction or offset) becomes `'<time>'` — timestamps in status, conditions'
 * `lastTransitionTime`, annotations, `deletionTimestamp`: fault delays move them, and which instant
 * was written is not the operator's decision.
 */
import type { KubeObject } from '../../core/object-key.js';

/**
 * Kinds left out of end-state comparison. `Event`: a record of what happened (counts, first/last
 * timestamps, generated names), which differs between a faulty and a fault-free run by design.
 * `Lease`: leader election's lock, whose holder identity, transitions and renew time differ with
 * every restart and leader change.
 */
export const DEFAULT_END_STATE_IGNORED_KINDS: readonly string[] = ['Event', 'Lease'];

export const NORMALIZED_TIME = '<time>';

const DROPPED_METADATA = ['uid', 'resourceVersion', 'creationTimestamp', 'selfLink', 'managedFields', 'generation'];

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** A normalized copy of `obj` (see the module comment); the input is not changed. */
export function normalizeObject(obj: KubeObject): unknown {
  // The dropped metadata (managedFields above all) is left out before the copy rather than after.
  const meta = asRecord((obj as { metadata?: unknown }).metadata);
  const copy = replaceTimes(meta ? { ...obj, metadata: withoutDropped(meta) } : obj) as Record<string, unknown>;
  const metadata = asRecord(copy.metadata);
  if (metadata) {
    for (const field of DROPPED_METADATA) delete metadata[field];
    if (Array.isArray(metadata.ownerReferences)) {
      metadata.ownerReferences = (metadata.ownerReferences as unknown[]).map((ref) => {
        const r = asRecord(ref) ?? {};
        return { apiVersion: r.apiVersion, kind: r.kind, name: r.name, controller: r.controller === true };
      });
    }
  }
  const status = asRecord(copy.status);
  if (status) {
    delete status.observedGeneration;
    if (Array.isArray(status.conditions)) {
      for (const c of status.conditions as unknown[]) delete asRecord(c)?.observedGeneration;
      // A list keyed by type (listType=map): which writer added its condition first is timing.
      status.conditions = [...(status.conditions as unknown[])].sort((a, b) =>
        String(asRecord(a)?.type) < String(asRecord(b)?.type) ? -1 : 1,
      );
    }
  }
  return copy;
}

/** Whether `value` is an ISO-8601 date-time string (what `normalizeObject` replaces). */
export function isDateTimeString(value: unknown): boolean {
  return typeof value === 'string' && ISO_DATE_TIME.test(value);
}

/** A deep copy with every date-time string replaced. */
function replaceTimes(value: unknown): unknown {
  if (isDateTimeString(value)) return NORMALIZED_TIME;
  if (Array.isArray(value)) return value.map(replaceTimes);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = replaceTimes(v);
    return out;
  }
  return value;
}

function withoutDropped(metadata: Record<string, unknown>): Record<string, unknown> {
  const out = { ...metadata };
  for (const field of DROPPED_METADATA) delete out[field];
  return out;
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
