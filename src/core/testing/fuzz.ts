import assert from 'node:assert/strict';
import path from 'node:path';
import fc from 'fast-check';
import { omitUndefined } from '../omit-undefined.js';

/** One seed per process: `FUZZ_SEED=<n>` replays a run, otherwise it changes with every run. */
export const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;

/** Time per property: `FUZZ_TIME_MS`, else the suite's own default. */
export function fuzzTimeMs(defaultMs: number): number {
  return Number(process.env.FUZZ_TIME_MS ?? defaultMs);
}

export interface CheckPropertyOptions {
  /** How long the property runs. */
  readonly timeMs: number;
  /** One run taking longer than this is a hang (a failure); none when omitted. */
  readonly runTimeoutMs?: number;
  /** The test file (`import.meta.filename`), named in the replay command printed on failure. */
  readonly file: string;
}

/**
 * Runs `property` seeded with FUZZ_SEED for `timeMs`; on failure prints the replay command and
 * throws fast-check's report (the shrunk counterexample). Asserts that at least one run happened.
 */
export async function checkProperty(
  name: string,
  property: fc.IRawProperty<unknown[]>,
  options: CheckPropertyOptions,
): Promise<void> {
  const details = await fc.check(property, {
    seed: FUZZ_SEED,
    numRuns: 1_000_000,
    interruptAfterTimeLimit: options.timeMs,
    ...omitUndefined({ timeout: options.runTimeoutMs }),
  });
  if (details.failed) {
    console.log(
      `# ${name}: failed with FUZZ_SEED=${FUZZ_SEED} (replay: FUZZ_SEED=${FUZZ_SEED} node --import tsx --test ${path.relative(process.cwd(), options.file)})`,
    );
    throw new Error(fc.defaultReportMessage(details) ?? 'property failed');
  }
  console.log(`# ${name}: ${details.numRuns} runs in ${options.timeMs} ms, seed ${FUZZ_SEED}`);
  assert.ok(details.numRuns > 0);
}
