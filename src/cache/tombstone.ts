/**
 * What a delete handler gets when the object vanished while the watch was down (found missing on a
 * relist): its final state is unknown, so we hand over the last state we knew, clearly marked.
 */
export interface Tombstone<T> {
  readonly type: 'tombstone';
  readonly key: string;
  /** The last state the cache held; the object may have changed after it before being deleted. */
  readonly lastKnown: T;
}

export function tombstone<T>(key: string, lastKnown: T): Tombstone<T> {
  return Object.freeze({ type: 'tombstone', key, lastKnown });
}

/** Narrows a delete handler's argument. */
export function isTombstone<T>(x: T | Tombstone<T>): x is Tombstone<T> {
  return (
    typeof x === 'object' &&
    x !== null &&
    (x as { type?: unknown }).type === 'tombstone' &&
    'lastKnown' in x &&
    'key' in x &&
    !('metadata' in x)
  );
}

/** The object of a delete, whichever form it came in (the final state or the last known one). */
export function deletedObject<T>(x: T | Tombstone<T>): T {
  return isTombstone(x) ? x.lastKnown : x;
}
