import type { EventHandler } from '../cache/handler-dispatcher.js';
import { deletedObject, isTombstone, type Tombstone } from '../cache/tombstone.js';
import type { KubeObject, ObjectRef } from '../core/object-key.js';
import { objectKey, parseApiVersion } from '../core/object-key.js';
import { LOW_PRIORITY, type AddOptions } from '../workqueue/workqueue.js';
import type { ObjectEvent, Predicate } from './predicates.js';

/** Where the handlers put keys (the controller's workqueue, or a recorder in tests). */
export interface KeySink {
  /** `cause`: the event the key comes from (what a controller's trace notes as the reconcile's trigger). */
  add(key: string, options?: AddOptions, cause?: ObjectEvent<KubeObject>): void;
}

/** What nothing changed for is queued behind what did (controller-runtime's `WithLowPriorityWhenUnchanged`). */
const UNCHANGED: AddOptions = Object.freeze({ priority: LOW_PRIORITY });

/** An informer handler whose calls finish synchronously (enqueueing never waits). */
export type SyncEventHandler<T> = {
  [K in keyof EventHandler<T>]: (...args: Parameters<NonNullable<EventHandler<T>[K]>>) => void;
};

/** Maps one changed object to the requests it should trigger. */
export type MapFunction<T> = (obj: T) => readonly ObjectRef[];

/**
 * Turns informer callbacks into predicate-filtered events, and events into keys for the queue.
 * For an update, keys from the old and the new object are both enqueued (an owner or a mapping may
 * have changed); the queue de-duplicates.
 *
 * Keys of objects nothing changed for go in at {@link LOW_PRIORITY}: an `add` from a list (the
 * initial list, a relist, a late handler's replay: `isInInitialList`) and an update that keeps the
 * resourceVersion (a periodic resync). Watch events go in at the default priority, so an edit made
 * during a long initial sync is reconciled before the backlog.
 */
export function enqueueHandler<T extends KubeObject>(
  sink: KeySink,
  map: MapFunction<T>,
  predicates: readonly Predicate<T>[] = [],
): Required<SyncEventHandler<T>> {
  const pass = (event: ObjectEvent<T>): boolean => predicates.every((p) => p(event));
  const enqueue = (options: AddOptions | undefined, event: ObjectEvent<T>, ...objects: T[]): void => {
    const keys = new Set<string>();
    for (const obj of objects) for (const ref of map(obj)) keys.add(objectKey(ref));
    for (const key of keys) sink.add(key, options, event);
  };
  return {
    add(obj, info) {
      const event: ObjectEvent<T> = { type: 'add', object: obj };
      if (pass(event)) enqueue(info?.isInInitialList ? UNCHANGED : undefined, event, obj);
    },
    update(old, obj) {
      const event: ObjectEvent<T> = { type: 'update', old, object: obj };
      if (!pass(event)) return;
      const unchanged =
        old.metadata?.resourceVersion !== undefined && old.metadata.resourceVersion === obj.metadata?.resourceVersion;
      enqueue(unchanged ? UNCHANGED : undefined, event, obj, old);
    },
    delete(deleted: T | Tombstone<T>) {
      const obj = deletedObject(deleted);
      const event: ObjectEvent<T> = { type: 'delete', object: obj, finalStateUnknown: isTombstone(deleted) };
      if (pass(event)) enqueue(undefined, event, obj);
    },
  };
}

/** The object itself (the controller's primary kind). */
export function mapToSelf<T extends KubeObject>(obj: T): readonly ObjectRef[] {
  const name = obj.metadata?.name;
  return name ? [{ namespace: obj.metadata?.namespace, name }] : [];
}

export interface OwnerKind {
  readonly apiVersion: string;
  readonly kind: string;
  /** Whether the owner kind is cluster-scoped (its key then has no namespace). @defaultValue false */
  readonly clusterScoped?: boolean;
}

/**
 * The controlling owner of the object, if it is of `owner`'s group and kind (the version may
 * differ, as in controller-runtime). An owned object is always in its owner's namespace, or the
 * owner is cluster-scoped.
 */
export function mapToControllingOwner<T extends KubeObject>(owner: OwnerKind): MapFunction<T> {
  const group = parseApiVersion(owner.apiVersion).group;
  return (obj) => {
    const ref = obj.metadata?.ownerReferences?.find((r) => r.controller === true);
    if (!ref || ref.kind !== owner.kind || parseApiVersion(ref.apiVersion).group !== group) return [];
    return [{ namespace: owner.clusterScoped ? undefined : obj.metadata?.namespace, name: ref.name }];
  };
}
