import type { BackoffOptions } from './backoff-options.js';
import { InvalidOptionError } from './errors.js';

/** What `ExponentialBackoff` needs: the shared {@link BackoffOptions} with the delays decided. */
export interface ExponentialBackoffOptions extends Omit<BackoffOptions, 'maxAttempts'> {
  /** First delay. */
  readonly initialMs: number;
  /** Cap on any delay. */
  readonly maxMs: number;
  /** Growth per failure. @defaultValue {@link DEFAULT_EXPONENTIAL_BACKOFF}.factor (2) */
  readonly factor?: number;
  /**
   * Jitter as a fraction of the delay: the delay is multiplied by a random value in
   * [1 - jitter, 1 + jitter] (then capped). `'full'` means uniform in [0, delay] (AWS "full jitter").
   * @defaultValue {@link DEFAULT_EXPONENTIAL_BACKOFF}.jitter (0: none)
   */
  readonly jitter?: number | 'full';
  /** Random source in [0, 1); injectable for tests. @defaultValue Math.random */
  readonly random?: () => number;
}

/** Doubling, no jitter. */
export const DEFAULT_EXPONENTIAL_BACKOFF = Object.freeze({ factor: 2, jitter: 0 } as const);

/**
 * Exponential backoff as a small stateful value: `next()` gives the next delay, `reset()` starts over.
 * Used by the watcher (800 ms → 30 s), the workqueue's per-item limiter and the HTTP retry loops.
 */
export class ExponentialBackoff {
  private failures = 0;
  private readonly factor: number;
  private readonly random: () => number;

  constructor(private readonly options: ExponentialBackoffOptions) {
    if (!(options.initialMs >= 0)) throw new InvalidOptionError('initialMs', 'must be >= 0');
    if (!(options.maxMs >= options.initialMs)) throw new InvalidOptionError('maxMs', 'must be >= initialMs');
    this.factor = options.factor ?? DEFAULT_EXPONENTIAL_BACKOFF.factor;
    if (!(this.factor >= 1)) throw new InvalidOptionError('factor', 'must be >= 1');
    this.random = options.random ?? Math.random;
  }

  /** Number of delays handed out since the last reset. */
  get attempts(): number {
    return this.failures;
  }

  /** The delay before the next attempt. */
  next(): number {
    const base = delayFor(this.failures, this.options.initialMs, this.options.maxMs, this.factor);
    this.failures++;
    const jitter = this.options.jitter ?? DEFAULT_EXPONENTIAL_BACKOFF.jitter;
    if (jitter === 'full') return Math.floor(this.random() * base);
    if (jitter === 0) return base;
    const scaled = base * (1 - jitter + 2 * jitter * this.random());
    return Math.min(this.options.maxMs, Math.max(0, Math.round(scaled)));
  }

  reset(): void {
    this.failures = 0;
  }
}

/** initial * factor^failures, capped at max, without overflowing to Infinity for large counts. */
export function delayFor(failures: number, initialMs: number, maxMs: number, factor = 2): number {
  if (failures <= 0) return Math.min(initialMs, maxMs);
  const exp = Math.log(maxMs / Math.max(initialMs, 1e-9)) / Math.log(factor);
  if (failures >= exp) return maxMs;
  return Math.min(maxMs, initialMs * Math.pow(factor, failures));
}
