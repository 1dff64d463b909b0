/**
 * Runs memory-footprint.ts in child processes started with `--expose-gc` (a test runner has no
 * gc()), and reduces repeated runs to one stable figure each: the heap run already keeps the
 * smallest of its rounds; the idle manager runs three times, in parallel, and the median is kept.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { omitUndefined } from '../../core/omit-undefined.js';
import type { FootprintFigures, HeapFigures, IdleFigures } from './memory-figures.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./memory-footprint.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** Idle-manager processes per measurement; their median is reported. */
const IDLE_RUNS = 3;

async function child<F>(node: string, mode: 'heap' | 'idle'): Promise<F> {
  const { stdout } = await run(node, ['--expose-gc', '--import', 'tsx', SCRIPT, mode], {
    cwd: REPO,
    maxBuffer: 1 << 20,
    timeout: 120_000,
  });
  const line = stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as F;
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

/** Measures with `node` (default: this process's binary). */
export async function measureFootprint(node: string = process.execPath): Promise<FootprintFigures> {
  const [heap, idle] = await Promise.all([
    child<HeapFigures>(node, 'heap'),
    Promise.all(Array.from({ length: IDLE_RUNS }, () => child<IdleFigures>(node, 'idle'))),
  ]);
  // Figures only some Nodes measure (the compacted ones, V8 12+): their median where measured.
  const medianWhereMeasured = (pick: (run: IdleFigures) => number | undefined): number | undefined => {
    const values = idle.map(pick).filter((v) => v !== undefined);
    return values.length > 0 ? median(values) : undefined;
  };
  return {
    node: heap.node,
    heap,
    idle: {
      heapUsedBytes: median(idle.map((r) => r.heapUsedBytes)),
      rssBytes: median(idle.map((r) => r.rssBytes)),
      ...omitUndefined({
        compactedRssBytes: medianWhereMeasured((r) => r.compactedRssBytes),
        compactedHeapCommittedBytes: medianWhereMeasured((r) => r.compactedHeapCommittedBytes),
      }),
      runs: idle,
    },
  };
}
