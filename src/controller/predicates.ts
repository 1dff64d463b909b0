import type { KubeObject } from '../core/object-key.js';

/**
 * One change of a watched object, as predicates and mappers see it. `update` with `old === object`
 * (the same reference) is a periodic resync.
 */
export type ObjectEvent<T> =
  | { readonly type: 'add'; readonly object: T }
  | { readonly type: 'update'; readonly old: T; readonly object: T }
  | { readonly type: 'delete'; readonly object: T; readonly finalStateUnknown: boolean };

/** Decides whether an event should trigger a reconcile. */
export type Predicate<T = KubeObject> = (event: ObjectEvent<T>) => boolean;

/**
 * Builds a predicate that filters updates only: adds, deletes and resyncs pass (a resync was asked
 * for, so it should reconcile), updates pass when `changed(old, new)` says so.
 */
function updateFilter(changed: (old: KubeObject, obj: KubeObject) => boolean): Predicate {
  return (event) => event.type !== 'update' || event.old === event.object || changed(event.old, event.object);
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const sameStringSet = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  sameJson([...(a ?? [])].sort(), [...(b ?? [])].sort());

/** Updates pass when metadata.generation changed (spec changes; status writes do not bump it). */
export const generationChanged: Predicate = updateFilter((o, n) => o.metadata?.generation !== n.metadata?.generation);
/** Updates pass when labels changed. */
export const labelsChanged: Predicate = updateFilter(
  (o, n) => !sameJson(sortedEntries(o.metadata?.labels), sortedEntries(n.metadata?.labels)),
);
/** Updates pass when annotations changed. */
export const annotationsChanged: Predicate = updateFilter(
  (o, n) => !sameJson(sortedEntries(o.metadata?.annotations), sortedEntries(n.metadata?.annotations)),
);
/** Updates pass when resourceVersion changed (drops only no-op resyncs of identical objects). */
export const resourceVersionChanged: Predicate = updateFilter(
  (o, n) => o.metadata?.resourceVersion !== n.metadata?.resourceVersion,
);
/** Updates pass when the finalizer list or deletionTimestamp changed. */
export const finalizersOrDeletionChanged: Predicate = updateFilter(
  (o, n) =>
    !sameStringSet(o.metadata?.finalizers, n.metadata?.finalizers) ||
    o.metadata?.deletionTimestamp !== n.metadata?.deletionTimestamp,
);

export function and<T>(...predicates: Predicate<T>[]): Predicate<T> {
  return (event) => predicates.every((p) => p(event));
}

export function or<T>(...predicates: Predicate<T>[]): Predicate<T> {
  return (event) => predicates.some((p) => p(event));
}

export function not<T>(predicate: Predicate<T>): Predicate<T> {
  return (event) => !predicate(event);
}

/**
 * The default for a controller's primary kind: ignore status-only updates (its own status writes
 * would otherwise retrigger it) but react to spec changes, finalizer changes and deletion.
 */
export const DEFAULT_PRIMARY_PREDICATE: Predicate = or(generationChanged, finalizersOrDeletionChanged);

function sortedEntries(record: Record<string, string> | undefined): [string, string][] {
  return Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
