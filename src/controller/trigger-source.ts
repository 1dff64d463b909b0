/**
 * An external trigger source: keys from outside the cluster (a webhook, a timer, a message queue)
 * fed into a controller's queue, as kube-rs `reconcile_on` / controller-runtime `source.Channel`.
 */
import type { Logger } from '../core/logger.js';
import { objectKey, type ObjectRef } from '../core/object-key.js';
import type { AddOptions } from '../workqueue/workqueue.js';

/** A key with the priority to queue it at (higher runs first; see `AddOptions.priority`). */
export interface PrioritizedTriggerKey {
  readonly key: string | ObjectRef;
  readonly priority: number;
}

/**
 * A key to reconcile: `ns/name` (or `name` for cluster-scoped), or a reference — at the default
 * priority — or either with a priority.
 */
export type TriggerKey = string | ObjectRef | PrioritizedTriggerKey;

/** Where keys go (a controller's workqueue). */
export interface TriggerSink {
  add(key: string, options?: AddOptions): void;
}

/**
 * Moves keys from `keys` into `sink` until the iterable ends or `signal` aborts. On abort the
 * iterator's `return()` is called (not awaited: a stuck producer must not hold up shutdown). A
 * throwing iterable is logged and ends this source; it never rejects.
 */
export async function pumpTriggers(
  keys: AsyncIterable<TriggerKey>,
  sink: TriggerSink,
  signal: AbortSignal,
  log: Logger,
): Promise<void> {
  if (signal.aborted) return;
  const iterator = keys[Symbol.asyncIterator]();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next === 'aborted') {
        iterator.return?.().catch((err: unknown) => log.error({ err }, 'trigger source failed to close'));
        return;
      }
      if (next.done) return;
      const prioritized = isPrioritized(next.value) ? next.value : undefined;
      const ref = isPrioritized(next.value) ? next.value.key : next.value;
      const key = typeof ref === 'string' ? ref : objectKey(ref);
      if (!key) {
        log.error({ value: String(next.value) }, 'trigger source yielded an empty key: ignored');
        continue;
      }
      if (!prioritized) sink.add(key);
      else if (Number.isSafeInteger(prioritized.priority)) sink.add(key, { priority: prioritized.priority });
      else
        log.error(
          { key, priority: String(prioritized.priority) },
          'trigger source yielded a priority that is not an integer: key ignored',
        );
    }
  } catch (err) {
    log.error({ err }, 'trigger source failed: no more keys from it');
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

function isPrioritized(value: TriggerKey): value is PrioritizedTriggerKey {
  return typeof value === 'object' && value !== null && 'key' in value;
}
