import { AbortedError } from '../core/errors.js';

/**
 * Waits for a shared promise, but stops waiting (AbortedError) when this caller's signal aborts,
 * without cancelling the shared work others may be waiting for. The listener is always removed.
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  if (signal.aborted) return Promise.reject(new AbortedError(`${what} aborted`, { cause: signal.reason }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortedError(`${what} aborted`, { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
