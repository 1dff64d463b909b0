/**
 * The memory budget memory-footprint.test.ts holds the cache to, and its check. Heap bytes are
 * stable run to run (spread under 1.5%), so the heap limits sit ~3% above today's figures. RSS
 * depends on when V8 and the allocator hand pages back and spreads more (Node 20: 128-142 MiB
 * between identical runs, Node 24: 166-187 MiB), so its limit sits ~10% above the highest median
 * seen. No time is measured.
 *
 * Heap limits re-measured after the leaner store (merge of h-store, 2026-12-02: small 1125-1127 B,
 * large 2848-2857 B, idle heap 20.9 MiB on Node 20 and 25.1 MiB on Node 24, load ~20).
 * First measured on main (ab3c41d, 2026-12-02) on a shared 2-core machine, load average 8-30, 10 runs of
 * the test on each major (alone and at --test-concurrency=2 beside other test files), with
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --expose-gc --import tsx \
 *     src/cache/testing/memory-footprint.ts --print
 *
 * (and the same with Node 24's binary, `scripts/install-node24.sh | tail -n1`), which prints the
 * current figures beside these limits. After a change that moves a figure on purpose (a smaller
 * store), re-measure and set the limit a few percent above the new figure.
 */
import type { FootprintFigures } from './memory-figures.js';

export interface MemoryThresholds {
  /** Heap bytes per cached small Database-like object (~2.2 KB of JSON). Measured: 1125-1127 (Node 20 and 24; 1300-1317 before the leaner store). */
  readonly smallBytesPerObject: number;
  /** Heap bytes per cached large Database-like object (~4.1 KB of JSON). Measured: 2848-2857 (Node 20 and 24; 3029-3052 before). */
  readonly largeBytesPerObject: number;
  /** Heap used by an idle manager whose one controller caches 10,000 small objects. */
  readonly idleHeapUsedBytes: number;
  /** RSS of that idle manager. */
  readonly idleRssBytes: number;
  /** RSS of that idle manager after its idle heap compaction; only where V8 has it (Node 22+). */
  readonly idleCompactedRssBytes?: number;
  /** V8's committed heap right after that compaction (stable, unlike RSS). */
  readonly idleCompactedHeapCommittedBytes?: number;
}

const MiB = 1024 * 1024;

/** By Node major; a major not listed uses the highest listed one below it. */
export const MEMORY_THRESHOLDS: Readonly<Record<number, MemoryThresholds>> = {
  20: {
    smallBytesPerObject: 1160,
    largeBytesPerObject: 2940,
    // Measured: 20.9 MiB heap used; RSS medians 129-139 MiB. 21.5 MiB after the merges of
    // 2026-12-05 (tracing, which loads @opentelemetry/api when it is installed; history, plan mode,
    // dependents, typed apply), in a full fresh-clone run; not yet split by feature.
    idleHeapUsedBytes: 22.2 * MiB,
    idleRssBytes: 155 * MiB,
  },
  24: {
    smallBytesPerObject: 1160,
    largeBytesPerObject: 2940,
    // Measured: 25.1 MiB heap used; RSS medians 166-181 MiB. 26.2 MiB after the merges of
    // 2026-12-05 (see Node 20's), in a full fresh-clone run.
    idleHeapUsedBytes: 27.0 * MiB,
    idleRssBytes: 200 * MiB,
    // After the idle heap compaction (2026-12-03): RSS medians 95.0-98.0 MiB alone, 112.9 MiB in a
    // full test run beside other files (159-175 MiB before it); committed heap 25.8-26.1 MiB alone,
    // 26.3 MiB in a full run.
    idleCompactedRssBytes: 125 * MiB,
    idleCompactedHeapCommittedBytes: 28 * MiB,
  },
};

/**
 * How far the informer's estimate (object-size-estimate.ts) may stray from the real heap bytes per
 * object, as a fraction. Measured after the leaner store: -0.2% (small, the size its per-entry
 * constant was fitted on) and 0.0% (large) (docs/capacity.md has the first fit's figures). A change to the store's bookkeeping moves the real figure: refit
 * `STORE_ENTRY_OVERHEAD_BYTES` from the small figure.
 */
export const MAX_ESTIMATE_ERROR = 0.1;

export function thresholdsFor(nodeVersion: string): MemoryThresholds {
  const major = Number(/^v?(\d+)/.exec(nodeVersion)?.[1] ?? 0);
  const known = Object.keys(MEMORY_THRESHOLDS)
    .map(Number)
    .sort((a, b) => a - b);
  const use = known.filter((m) => m <= major).pop() ?? known[0]!;
  return MEMORY_THRESHOLDS[use]!;
}

interface Figure {
  readonly name: string;
  readonly value: number;
  readonly limit: number;
  readonly unit: 'B' | 'MiB';
}

/**
 * A MiB figure held only on the Nodes whose thresholds set its limit (the compacted ones: V8 12+).
 * Missing where the limit is set means the compaction did not run, which counts as over.
 */
function limitedWhereSet(name: string, value: number | undefined, limit: number | undefined): Figure[] {
  return limit === undefined ? [] : [{ name, value: value ?? Number.POSITIVE_INFINITY, limit, unit: 'MiB' }];
}

function figures(f: FootprintFigures): Figure[] {
  const t = thresholdsFor(f.node);
  return [
    {
      name: 'heap bytes per small object',
      value: f.heap.bytesPerObject.small,
      limit: t.smallBytesPerObject,
      unit: 'B',
    },
    {
      name: 'heap bytes per large object',
      value: f.heap.bytesPerObject.large,
      limit: t.largeBytesPerObject,
      unit: 'B',
    },
    { name: 'idle manager heap used', value: f.idle.heapUsedBytes, limit: t.idleHeapUsedBytes, unit: 'MiB' },
    { name: 'idle manager RSS', value: f.idle.rssBytes, limit: t.idleRssBytes, unit: 'MiB' },
    ...limitedWhereSet('idle manager RSS, compacted', f.idle.compactedRssBytes, t.idleCompactedRssBytes),
    ...limitedWhereSet(
      'idle heap committed, compacted',
      f.idle.compactedHeapCommittedBytes,
      t.idleCompactedHeapCommittedBytes,
    ),
  ];
}

const show = (n: number, unit: Figure['unit']): string => (unit === 'MiB' ? `${(n / MiB).toFixed(1)} MiB` : `${n} B`);

/** The estimate's error per size, as a fraction of the real figure. */
export function estimateErrors(f: FootprintFigures): Record<'small' | 'large', number | undefined> {
  const err = (size: 'small' | 'large'): number | undefined => {
    const estimate = f.heap.estimatedBytesPerObject[size];
    return estimate === undefined ? undefined : estimate / f.heap.bytesPerObject[size] - 1;
  };
  return { small: err('small'), large: err('large') };
}

/** One message per figure over its limit (each names the figure, its value and the limit). */
export function overBudget(f: FootprintFigures): string[] {
  const out = figures(f)
    .filter((x) => x.value > x.limit)
    .map(
      (x) =>
        `${x.name} on Node ${f.node} is ${show(x.value, x.unit)}, over its threshold of ${show(x.limit, x.unit)} (src/cache/testing/memory-thresholds.ts)`,
    );
  for (const [size, error] of Object.entries(estimateErrors(f))) {
    if (error === undefined || Math.abs(error) > MAX_ESTIMATE_ERROR)
      out.push(
        `the informer's estimate for ${size} objects is ${f.heap.estimatedBytesPerObject[size as 'small' | 'large'] ?? 'missing'} B against ${f.heap.bytesPerObject[size as 'small' | 'large']} B measured (error ${error === undefined ? 'n/a' : `${(error * 100).toFixed(1)}%`}, allowed ±${MAX_ESTIMATE_ERROR * 100}%): refit STORE_ENTRY_OVERHEAD_BYTES in src/cache/object-size-estimate.ts`,
      );
  }
  return out;
}

/** A table of the current figures beside their limits. */
export function formatFootprint(f: FootprintFigures): string {
  const rows = figures(f).map(
    (x) =>
      `${x.name.padEnd(30)} ${show(x.value, x.unit).padStart(12)}   limit ${show(x.limit, x.unit).padStart(12)}   ${((x.value / x.limit - 1) * 100).toFixed(1).padStart(6)}%`,
  );
  const errors = estimateErrors(f);
  const est = (size: 'small' | 'large'): string =>
    `estimate, ${size} objects`.padEnd(30) +
    ` ${`${f.heap.estimatedBytesPerObject[size] ?? '–'} B`.padStart(12)}   error ${errors[size] === undefined ? 'n/a' : `${(errors[size] * 100).toFixed(1)}%`}`;
  return [
    `node ${f.node}`,
    ...rows,
    est('small'),
    est('large'),
    `heap rounds (B/object): small ${f.heap.rounds.small.join(', ')}; large ${f.heap.rounds.large.join(', ')}`,
    `idle runs: ${f.idle.runs.map((r) => `${(r.heapUsedBytes / MiB).toFixed(1)} MiB heap / ${(r.rssBytes / MiB).toFixed(1)} MiB RSS`).join('; ')}`,
  ].join('\n');
}
