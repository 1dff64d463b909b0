import { InvalidOptionError } from './errors.js';

/**
 * The one shape for every option that configures a backoff (watcher, workqueue per-item limiter,
 * API transport retries, retryOnConflict, the resilient HTTP client): `backoff: { initialMs, maxMs }`.
 * Every field is optional; each component documents its own `DEFAULT_*_BACKOFF`, and a field left
 * out keeps that default.
 */
export interface BackoffOptions {
  /** Delay before the first retry (before jitter). */
  readonly initialMs?: number;
  /** Cap on one delay. */
  readonly maxMs?: number;
  /** Growth of the delay per retry (>= 1). */
  readonly factor?: number;
  /**
   * A fraction of the delay drawn at random (each component says in which direction), or `'full'`:
   * uniform in [0, delay] (AWS "full jitter").
   */
  readonly jitter?: number | 'full';
  /** Attempts in all, the first one included (so 1 means no retry). Not used where retrying never stops (the watcher). */
  readonly maxAttempts?: number;
}

/** A backoff with every field decided: what components hold after merging options over their default. */
export type ResolvedBackoff = Required<BackoffOptions>;

/**
 * Merges `given` over `defaults` (a field given as `undefined` keeps its default) and validates
 * the result once, naming the offending option as `backoff.<field>`.
 */
export function resolveBackoff(defaults: ResolvedBackoff, given: BackoffOptions | undefined): ResolvedBackoff {
  const pick = <K extends keyof BackoffOptions>(k: K): ResolvedBackoff[K] =>
    (given?.[k] ?? defaults[k]) as ResolvedBackoff[K];
  const resolved: ResolvedBackoff = {
    initialMs: pick('initialMs'),
    maxMs: pick('maxMs'),
    factor: pick('factor'),
    jitter: pick('jitter'),
    maxAttempts: pick('maxAttempts'),
  };
  if (!(resolved.initialMs >= 0)) throw new InvalidOptionError('backoff.initialMs', 'must be >= 0');
  if (!(resolved.maxMs >= resolved.initialMs))
    throw new InvalidOptionError('backoff.maxMs', 'must be >= backoff.initialMs');
  if (!(resolved.factor >= 1)) throw new InvalidOptionError('backoff.factor', 'must be >= 1');
  if (resolved.jitter !== 'full' && !(resolved.jitter >= 0))
    throw new InvalidOptionError('backoff.jitter', "must be >= 0 or 'full'");
  const n = resolved.maxAttempts;
  if (!(n === Infinity || (Number.isInteger(n) && n >= 1)))
    throw new InvalidOptionError('backoff.maxAttempts', 'must be an integer >= 1 (or Infinity)');
  return resolved;
}
