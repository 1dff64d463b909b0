import { OperatorRuntimeError } from '../core/errors.js';

export interface EventuallyOptions {
  /** @defaultValue 30,000 ms */
  readonly timeoutMs?: number;
  /** @defaultValue 150 ms */
  readonly intervalMs?: number;
}

export class EventuallyTimeoutError extends OperatorRuntimeError {
  declare readonly code: 'ERR_EVENTUALLY_TIMEOUT';
  constructor(what: string, timeoutMs: number, cause: unknown) {
    const last = cause instanceof Error ? ` (last error: ${cause.message})` : '';
    super('ERR_EVENTUALLY_TIMEOUT', `timed out after ${timeoutMs} ms waiting for ${what}${last}`, { cause });
  }
}

/**
 * Polls `check` until it returns a value that is not `false`, `undefined` or `null`, and returns
 * that value (Gomega's Eventually). A throw counts as "not yet" — the control plane may be
 * recovering — and the last one is the timeout error's cause. For integration tests, where the
 * real world converges on its own time; unit tests use the fake clock instead.
 */
export async function eventually<T>(what: string, check: () => Promise<T | false | undefined | null> | T | false | undefined | null, options: EventuallyOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false && value !== undefined && value !== null) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new EventuallyTimeoutError(what, timeoutMs, lastError);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 150));
  }
}
