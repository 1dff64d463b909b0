import { AbortedError } from './errors.js';
import type { Clock } from './clock.js';

/** Throws `AbortedError` if the signal is already aborted (an aborted signal is always honoured). */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError('operation aborted', { cause: signal.reason });
}

/**
 * Waits `ms` on `clock`, rejecting with `AbortedError` when `signal` aborts. The abort listener is
 * always removed, so a long-lived signal does not accumulate listeners. The timer keeps the process
 * alive: something is awaiting it.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError('sleep aborted', { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(new AbortedError('sleep aborted', { cause: signal?.reason }));
    };
    const timer = clock.setTimer(
      ms,
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      { keepAlive: true },
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when the signal aborts (immediately if it already has). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * A child AbortController that aborts when any parent aborts. `dispose()` removes the listeners it
 * put on the parents; call it when the child's work is done.
 */
export function linkedAbortController(...parents: (AbortSignal | undefined)[]): {
  controller: AbortController;
  dispose: () => void;
} {
  const controller = new AbortController();
  const cleanups: (() => void)[] = [];
  for (const parent of parents) {
    if (!parent) continue;
    if (parent.aborted) {
      controller.abort(parent.reason);
      break;
    }
    const onAbort = (): void => controller.abort(parent.reason);
    parent.addEventListener('abort', onAbort, { once: true });
    cleanups.push(() => parent.removeEventListener('abort', onAbort));
  }
  return { controller, dispose: () => cleanups.forEach((c) => c()) };
}
