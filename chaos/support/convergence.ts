/** Waiting for a workload to converge after heal, measured from a given instant. */

export interface WaitForConvergenceOptions<T> {
  /** Current objects; a rejected read counts as "not yet" (the control plane may still recover). */
  readonly list: () => Promise<readonly T[]>;
  /** Whether the whole list is converged (count, every status current, …). */
  readonly converged: (items: readonly T[]) => boolean;
  /** Start of the measurement (the heal), as `Date.now()`. */
  readonly sinceMs: number;
  /** Gives up this long after `sinceMs`. */
  readonly boundMs: number;
  /** @defaultValue 200 */
  readonly pollMs?: number;
}

/** Milliseconds from `sinceMs` until `converged` held, or null when it did not within the bound. */
export async function waitForConvergence<T>(options: WaitForConvergenceOptions<T>): Promise<number | null> {
  while (Date.now() - options.sinceMs < options.boundMs) {
    const items = await options.list().catch(() => undefined);
    if (items && options.converged(items)) return Date.now() - options.sinceMs;
    await new Promise((r) => setTimeout(r, options.pollMs ?? 200));
  }
  return null;
}

/** Every object's `status.observedGeneration` equals its `metadata.generation`. */
export function statusCurrent(
  items: readonly { metadata: { generation?: number }; status?: { observedGeneration?: number } }[],
): boolean {
  return items.every((o) => o.status?.observedGeneration === o.metadata.generation);
}
