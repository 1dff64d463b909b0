/**
 * In-process memory benchmark of the cache (no API server): heap per cached object, and the live
 * heap at every page of a 410 relist compared with steady state, for a relist where nothing changed
 * and one where every object changed (the worst case: both versions must coexist until the atomic
 * swap). The API-server half of issue 4's benchmark (sync time over HTTP, comparison with
 * @kubernetes/client-node's makeInformer) needs TestEnv and lives elsewhere.
 *
 *   node --expose-gc --import tsx src/cache/bench/relist-memory.bench.ts [objects]
 */
import { FakeClock } from '../../core/fake-clock.js';
import type { KubeObject } from '../../core/object-key.js';
import { SharedInformer } from '../informer.js';
import type { ListerListOptions, ListerListPage, ListerWatcher, ListerWatchEvent } from '../lister-watcher.js';
import { gone } from '../testing/fake-lister-watcher.js';
import { writeBenchJson } from '../../../bench/report/bench-output.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const N = Number(process.argv[2] ?? 50_000);
/** Each scenario is run this many times (`RELIST_ROUNDS`), so the report can show the spread. */
const ROUNDS = Number(process.env.RELIST_ROUNDS ?? 1);
const results: {
  label: string;
  round: number;
  syncMs: number;
  steadyBytes: number;
  peakBytes: number;
  afterBytes: number;
}[] = [];

function live(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

type Widget = KubeObject & { spec?: { size: number; color: string } };

function widget(i: number): Widget {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: {
      name: `widget-${i}`,
      namespace: `ns-${i % 20}`,
      uid: `0000-${i}`,
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { app: 'bench', shard: String(i % 7) },
      managedFields: [
        {
          manager: 'bench',
          operation: 'Apply',
          apiVersion: 'example.com/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:size': {}, 'f:color': {} } },
        },
      ],
    },
    spec: { size: i % 100, color: i % 2 ? 'red' : 'blue' },
  };
}

/**
 * A source that keeps nothing: pages are generated on demand from (index, version), so the live
 * heap measures the cache alone. `breakWatch()` makes the open watch fail with 410.
 */
class SyntheticSource implements ListerWatcher<Widget> {
  version = 1;
  samples: number[] = [];
  sampling = false;
  private fail: ((err: unknown) => void) | undefined;
  watches = 0;

  list(opts: ListerListOptions): Promise<ListerListPage<Widget>> {
    if (this.sampling) this.samples.push(live());
    const offset = opts.continue ? Number(opts.continue) : 0;
    const end = opts.resourceVersion === '0' || !opts.limit ? N : Math.min(N, offset + opts.limit);
    const items: Widget[] = [];
    for (let i = offset; i < end; i++) {
      const w = JSON.parse(JSON.stringify(widget(i))) as Widget; // as the client decodes it
      w.metadata!.resourceVersion = `${this.version}-${i}`;
      if (this.version > 1) w.spec = { size: -1, color: 'green' };
      items.push(w);
    }
    return Promise.resolve({
      items,
      resourceVersion: String(this.version),
      ...(end < N ? { continue: String(end) } : {}),
    });
  }

  watch(): AsyncIterable<ListerWatchEvent<Widget>> {
    if (this.sampling) this.samples.push(live());
    this.watches++;
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<ListerWatchEvent<Widget>>>((_, reject) => (this.fail = reject)),
        return: () => Promise.resolve({ done: true as const, value: undefined }),
      }),
    };
  }

  breakWatch(): void {
    this.fail?.(gone());
  }
}

async function scenario(
  label: string,
  changeAll: boolean,
  relistMode: 'atomic' | 'incremental' = 'atomic',
  round = 1,
): Promise<void> {
  const clock = new FakeClock(0);
  const source = new SyntheticSource();
  const baseline = live();
  const informer = new SharedInformer(source, { clock, random: () => 0, relistMode });
  const ac = new AbortController();
  const t0 = performance.now();
  const run = informer.start(ac.signal);
  await informer.waitForSync(ac.signal);
  const syncMs = performance.now() - t0;
  await clock.advance(0);
  const steady = live() - baseline;

  if (changeAll) source.version++;
  source.sampling = true;
  source.breakWatch();
  while (source.watches < 2) await clock.advance(0);
  source.sampling = false;
  const peak = Math.max(...source.samples) - baseline;
  const after = live() - baseline;
  ac.abort();
  await run;
  results.push({ label: label.trim(), round, syncMs, steadyBytes: steady, peakBytes: peak, afterBytes: after });
  console.log(
    `${label}: ${N} objects, sync ${syncMs.toFixed(0)} ms in-process, steady ${(steady / 1e6).toFixed(1)} MB (${Math.round(steady / N)} B/object), ` +
      `relist peak ${(peak / 1e6).toFixed(1)} MB = ${(peak / steady).toFixed(2)}× steady, after ${(after / steady).toFixed(2)}×`,
  );
}

for (let round = 1; round <= ROUNDS; round++) {
  await scenario('relist, nothing changed   ', false, 'atomic', round);
  await scenario('relist, everything changed', true, 'atomic', round);
  await scenario('relist, everything changed, incremental', true, 'incremental', round);
}
writeBenchJson({ bench: 'relist-memory', objects: N, rounds: ROUNDS, results });
