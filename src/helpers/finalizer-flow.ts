import type { Getter, Patcher } from '../client/contracts.js';
import {
  addFinalizer,
  hasFinalizer,
  removeFinalizer,
  validateFinalizerName,
  type FinalizerWriteOptions,
} from './finalizers.js';
import type { MetaObject } from './meta-object.js';
import { done, isRequeue, type Result } from '../core/result.js';

export interface HandleFinalizerOptions<T> extends FinalizerWriteOptions {
  /** Our finalizer, domain-qualified (`example.com/backup`). */
  readonly name: string;
  /**
   * Releases what the object holds outside the API (backups, cloud resources…). Must be
   * idempotent: it runs again if the finalizer could not be removed. Return a requeue to wait
   * (the finalizer stays); throw to fail (the finalizer stays, the workqueue backs off).
   */
  readonly cleanup: (obj: T) => Promise<Result | void>;
}

/**
 * What the reconciler does after `handleFinalizer`:
 * - `continue`: the object is live and carries our finalizer; reconcile `object` as usual.
 * - `stop`: the object is being deleted; return `result` and do nothing else. `reason` says
 *   whether our cleanup finished (`finalized`, finalizer removed), asked to wait
 *   (`cleanupPending`, finalizer kept) or had nothing to do (`notOurs`: no finalizer of ours).
 */
export type FinalizerStep<T> =
  | { readonly kind: 'continue'; readonly object: T }
  | {
      readonly kind: 'stop';
      readonly reason: 'finalized' | 'cleanupPending' | 'notOurs';
      readonly result: Result;
      /** The object after our write (its final state, if that let the server delete it); undefined if it was already gone. */
      readonly object: T | undefined;
    };

/**
 * The finalizer part of a reconcile, in one call (a fragment of a reconcile, hence no-check):
 * ```ts no-check
 * const step = await handleFinalizer(client, obj, { name: 'example.com/backup', cleanup, signal });
 * if (step.kind === 'stop') return step.result;
 * obj = step.object;
 * ```
 * Not deleting → ensures our finalizer is present (one write the first time, none after).
 * Deleting with our finalizer → runs `cleanup`; on success removes only our finalizer.
 */
export async function handleFinalizer<T extends MetaObject>(
  client: Getter & Patcher,
  obj: T,
  options: HandleFinalizerOptions<T>,
): Promise<FinalizerStep<T>> {
  validateFinalizerName(options.name);
  const deleting = Boolean(obj.metadata?.deletionTimestamp);
  if (!deleting) {
    return { kind: 'continue', object: await addFinalizer(client, obj, options.name, options) };
  }
  // A deleting object accepts no new finalizers, and without ours there is nothing we must do.
  if (!hasFinalizer(obj, options.name)) return { kind: 'stop', reason: 'notOurs', result: done(), object: obj };
  const outcome = await options.cleanup(obj);
  if (isRequeue(outcome)) return { kind: 'stop', reason: 'cleanupPending', result: outcome, object: obj };
  const after = await removeFinalizer(client, obj, options.name, options);
  return { kind: 'stop', reason: 'finalized', result: done(), object: after };
}
