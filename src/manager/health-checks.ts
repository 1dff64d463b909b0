/** A named check for /healthz or /readyz: resolves true (or void) when fine; false or a throw fails it. */
export type HealthCheck = () => boolean | void | Promise<boolean | void>;

export interface CheckResult {
  readonly ok: boolean;
  /** controller-runtime's verbose format: `[+]name ok` / `[-]name failed: reason`, one per line. */
  readonly body: string;
}

/** Runs every check (all of them, so the body lists each) and reports whether all passed. */
export async function runChecks(checks: ReadonlyMap<string, HealthCheck>): Promise<CheckResult> {
  const lines: string[] = [];
  let ok = true;
  for (const [name, check] of checks) {
    try {
      const result = await check();
      if (result === false) {
        ok = false;
        lines.push(`[-]${name} failed`);
      } else {
        lines.push(`[+]${name} ok`);
      }
    } catch (err) {
      ok = false;
      lines.push(`[-]${name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  lines.push(ok ? 'check passed' : 'check failed');
  return { ok, body: `${lines.join('\n')}\n` };
}
