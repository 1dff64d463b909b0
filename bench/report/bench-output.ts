/**
 * How a benchmark hands its figures to `run-report.ts`: when `BENCH_JSON_OUT` names a file, the
 * bench writes its raw per-round results there as JSON (its printed output stays as it was).
 */
import { writeFileSync } from 'node:fs';

export const BENCH_JSON_ENV = 'BENCH_JSON_OUT';

/** Writes `result` to the file `BENCH_JSON_OUT` names; does nothing without it. */
export function writeBenchJson(result: unknown): void {
  const file = process.env[BENCH_JSON_ENV];
  if (file) writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
}
