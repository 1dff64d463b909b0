import { OperatorRuntimeError } from '../../core/errors.js';

/** @defaultValue 30_000 */
export const DEFAULT_EVENTUALLY_TIMEOUT_MS = 30_000;
/** @defaultValue 150 */
export const DEFAULT_EVENTUALLY_INTERVAL_MS = 150;

export interface EventuallyOptions {
  /** @defaultValue {@link DEFAULT_EVENTUALLY_TIMEOUT_MS} */
  readonly timeoutMs?: number;
  /** @defaultValue {@link DEFAULT_EVENTUALLY_INTERVAL_MS} */
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
export async function eventually<T>(
  what: string,
  check: () => Promise<T | false | undefined | null> | T | false | undefined | null,
  options: EventuallyOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_EVENTUALLY_TIMEOUT_MS;
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
    await new Promise((r) => setTimeout(r, options.intervalMs ?? DEFAULT_EVENTUALLY_INTERVAL_MS));
  }
}
