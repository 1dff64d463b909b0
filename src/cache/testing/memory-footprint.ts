/**
 * Measures the cache's memory deterministically, in a process of its own started with
 * `--expose-gc` (memory-footprint.test.ts runs it and compares the figures with
 * memory-thresholds.ts). Heap bytes after a full gc() are stable run to run; times are not, so
 * nothing here is timed.
 *
 *   heap: heap bytes per cached object, for Database-like objects (small and large) served as
 *         JSON text, decoded by the client's parser and stored by a real SharedInformer through
 *         clientListerWatcher (the informer's path from a list response to the store); also the
 *         informer's own estimate of that figure (object-size-estimate.ts), for its error.
 *   idle: heap used and RSS of an idle Manager with one controller whose cache holds the objects,
 *         after every object has been reconciled once; on V8 12+ also its RSS and committed heap
 *         after the idle heap compaction the manager runs once quiet (src/manager/heap-compactor.ts).
 *
 * `heap [objects]` and `idle [objects]` print one JSON line (default 10,000 objects). To print the current figures next to the thresholds
 * (memory-thresholds.ts):
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --expose-gc --import tsx \
 *     src/cache/testing/memory-footprint.ts --print
 */
import type { Client } from '../../client/contracts.js';
import { Manager } from '../../manager/manager.js';
import { MEMORY_REDUCING_GC_SUPPORTED, collectGarbageAndShrinkHeap } from '../../core/memory-reducing-gc.js';
import { clientListerWatcher } from '../client-lister-watcher.js';
import { SharedInformer } from '../informer.js';
import { DATABASE_LIKE, wireClient, type DatabaseLikeSize } from './database-like.js';
import type { HeapFigures, IdleFigures } from './memory-figures.js';

const gc = (globalThis as { gc?: () => void }).gc;

/** Objects in the measured cache (the thresholds are for this count; a second argument overrides it, for projections). */
export const FOOTPRINT_OBJECTS = 10_000;
const OBJECTS = Number(process.argv[3] ?? FOOTPRINT_OBJECTS);
/** Measurements per size in one heap run; the smallest is kept (late lazy allocations only add). */
const HEAP_ROUNDS = 2;

function live(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

async function syncedInformer(client: Client, size: DatabaseLikeSize) {
  const lw = clientListerWatcher(client, { ...DATABASE_LIKE });
  const informer = new SharedInformer(lw, { name: `databases-${size}` });
  const stop = new AbortController();
  const running = informer.start(stop.signal);
  await informer.waitForSync(stop.signal);
  return {
    informer,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

/** One measurement, in a function of its own so nothing of it is reachable once it returns. */
async function heapRound(
  client: Client,
  size: DatabaseLikeSize,
): Promise<{ bytes: number; estimate: number | undefined }> {
  await new Promise((resolve) => setImmediate(resolve)); // the previous round's frames are gone
  const baseline = live();
  const run = await syncedInformer(client, size);
  const after = live();
  const estimate = run.informer.health().estimatedBytesPerObject;
  await run.stop();
  return { bytes: (after - baseline) / OBJECTS, estimate };
}

async function heapPerObject(
  size: DatabaseLikeSize,
): Promise<{ bytes: number; rounds: number[]; estimate: number | undefined }> {
  // Warm up: the pages' JSON text, code, inline caches and hidden classes of this path all exist
  // before the baseline, so a round's growth is the decoded objects in the store and nothing else.
  const client = wireClient({ objects: OBJECTS, size, keepPages: true });
  await (await syncedInformer(client, size)).stop();
  const rounds: number[] = [];
  let estimate: number | undefined;
  for (let round = 0; round < HEAP_ROUNDS; round++) {
    const r = await heapRound(client, size);
    rounds.push(Math.round(r.bytes));
    estimate = r.estimate;
  }
  return { bytes: Math.min(...rounds), rounds, estimate };
}

async function measureHeap(): Promise<HeapFigures> {
  const small = await heapPerObject('small');
  const large = await heapPerObject('large');
  return {
    mode: 'heap',
    node: process.version,
    bytesPerObject: { small: small.bytes, large: large.bytes },
    rounds: { small: small.rounds, large: large.rounds },
    estimatedBytesPerObject: { small: small.estimate, large: large.estimate },
  };
}

async function measureIdleManager(): Promise<IdleFigures> {
  // The compaction is measured below, at a known point, not whenever its quiet period ends.
  const manager = new Manager({
    client: wireClient({ objects: OBJECTS }),
    metricsPort: 0,
    healthPort: 0,
    heapCompaction: false,
  });
  let reconciled = 0;
  let allReconciled!: () => void;
  const done = new Promise<void>((resolve) => (allReconciled = resolve));
  manager
    .controller('databases')
    .for(DATABASE_LIKE)
    .complete(() => {
      if (++reconciled === OBJECTS) allReconciled();
      return Promise.resolve();
    });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  if (OBJECTS === 0) while (!manager.informers.hasSynced()) await new Promise((resolve) => setTimeout(resolve, 10));
  else await done;
  // Idle: let the last reconciles' bookkeeping settle before measuring.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const heapUsedBytes = live();
  const rssBytes = process.memoryUsage().rss;
  let compacted: { compactedRssBytes: number; compactedHeapCommittedBytes: number } | undefined;
  if (MEMORY_REDUCING_GC_SUPPORTED) {
    collectGarbageAndShrinkHeap();
    const { rss, heapTotal } = process.memoryUsage();
    compacted = { compactedRssBytes: rss, compactedHeapCommittedBytes: heapTotal };
  }
  stop.abort();
  await running;
  return {
    mode: 'idle',
    node: process.version,
    objects: OBJECTS,
    heapUsedBytes,
    rssBytes,
    ...compacted,
  };
}

async function main(): Promise<void> {
  if (!gc) {
    process.stderr.write('memory-footprint: run with node --expose-gc\n');
    process.exitCode = 2;
    return;
  }
  const args = process.argv.slice(2);
  if (args.includes('--print')) {
    // Fresh processes, as the test runs them: an idle manager measured after the heap rounds
    // would carry their history in its RSS.
    const { measureFootprint } = await import('./memory-footprint-runner.js');
    const { formatFootprint } = await import('./memory-thresholds.js');
    process.stdout.write(`${formatFootprint(await measureFootprint())}\n`);
    return;
  }
  const mode = args[0];
  const figures = mode === 'heap' ? await measureHeap() : mode === 'idle' ? await measureIdleManager() : undefined;
  if (!figures) {
    process.stderr.write('usage: memory-footprint.ts heap|idle [objects] | --print\n');
    process.exitCode = 2;
    return;
  }
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

await main();
