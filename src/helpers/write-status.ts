/**
 * The status write a reconcile makes, whole: merge-patch `/status` with the resourceVersion read,
 * re-read and recompute on a 409, and never write a status computed for an older generation over
 * one that already speaks for a newer generation.
 *
 * The pattern it closes (the simulation's seed #880 of the reference operator): after a restart
 * against a stale cache, a reconcile reads generation 1; its status patch gets a 409 because the
 * object is at generation 2 and a newer reconcile already wrote `observedGeneration: 2`; the retry
 * re-reads and, keeping the generation it started from, writes `observedGeneration: 1` over 2. A
 * watcher (kstatus, Flux, Argo CD, `kubectl wait`) then sees the object go back in time.
 */
import type { Getter, StatusWriter } from '../client/contracts.js';
import { nameOf, typeOf } from '../core/object-key.js';
import { retryOnConflict, type RetryOnConflictOptions } from './retry-on-conflict.js';
import { patchStatus, type StatusObject } from './status.js';

export interface WriteStatusOptions extends Omit<RetryOnConflictOptions, 'retryable'> {
  readonly fieldManager?: string;
  /**
   * Where the object is read again after a conflict; an uncached reader (`ctx.cluster.apiClient`)
   * sees the latest at once, a cache-backed one may take a retry or two to catch up.
   * @defaultValue the client given
   */
  readonly reader?: Getter;
}

/** What `writeStatus` did. */
export type WriteStatusResult<T> =
  /** The status was patched; `object` is what the server returned. */
  | { readonly outcome: 'written'; readonly object: T }
  /** The status already was the one computed: nothing was sent. `object` is the latest read. */
  | { readonly outcome: 'unchanged'; readonly object: T }
  /**
   * Refused: the object's status (or one of its conditions) already speaks for a generation newer
   * than the one this status was computed for. Nothing was sent; the reconcile of that newer
   * generation owns the status. `object` is the latest read.
   */
  | {
      readonly outcome: 'superseded';
      readonly object: T;
      /** The generation the refused status was computed for (`observed.metadata.generation`). */
      readonly generation: number;
      /** The newer generation the object's status already observed. */
      readonly observedGeneration: number;
    };

/**
 * Writes `observed`'s status as `compute` makes it, for the generation `observed` has (the one the
 * reconcile read and acted on), with `status.observedGeneration` set to it:
 * - the first attempt computes from `observed` and patches with its resourceVersion, so a status
 *   that did not change costs no request;
 * - on a 409 it re-reads the object (`reader`), computes again from the latest status (so another
 *   writer's conditions are kept) and patches again, with `retryOnConflict`'s backoff and clock;
 * - before every write, if the latest object's `status.observedGeneration` or a condition's
 *   `observedGeneration` is newer than `observed`'s generation, it writes nothing and returns
 *   `outcome: 'superseded'`.
 *
 * A status still for an older generation than the object's (the spec changed, nobody reported on
 * it yet) is not newer, so it is overwritten: `observedGeneration` then says truthfully which
 * generation the status describes, and the resourceVersion precondition turns a newer write that
 * lands meanwhile into a 409, re-read and refused. Any error other than a resourceVersion conflict
 * (404 included) is thrown, as is the last conflict when the attempts run out.
 */
export async function writeStatus<T extends StatusObject>(
  client: StatusWriter & Getter,
  observed: T,
  compute: (latest: T) => NonNullable<T['status']>,
  options: WriteStatusOptions = {},
): Promise<WriteStatusResult<T>> {
  const { fieldManager, reader = client, ...retry } = options;
  const generation = observed.metadata?.generation;
  const namespace = observed.metadata?.namespace;
  return retryOnConflict(async (attempt): Promise<WriteStatusResult<T>> => {
    const latest =
      attempt === 1
        ? observed
        : await reader.get<T>(typeOf(observed), nameOf(observed), { namespace, signal: options.signal });
    if (generation !== undefined) {
      const newer = newestObservedGeneration(latest.status);
      if (newer !== undefined && newer > generation)
        return { outcome: 'superseded', object: latest, generation, observedGeneration: newer };
    }
    const { changed, object } = await patchStatus(client, latest, compute(latest), {
      signal: options.signal,
      fieldManager,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    });
    return { outcome: changed ? 'written' : 'unchanged', object };
  }, retry);
}

/** The newest generation a status speaks for: its `observedGeneration` or any condition's. */
function newestObservedGeneration(status: unknown): number | undefined {
  if (!isRecord(status)) return undefined;
  let newest = typeof status.observedGeneration === 'number' ? status.observedGeneration : undefined;
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  for (const c of conditions) {
    const g = isRecord(c) ? c.observedGeneration : undefined;
    if (typeof g === 'number' && (newest === undefined || g > newest)) newest = g;
  }
  return newest;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
