/**
 * Workqueue throughput: add / get / done on 100k distinct keys with 1 and 8 concurrent async
 * workers, with and without metrics. Goal: ≥ 500k items/s.
 *
 *   node --import tsx bench/workqueue.bench.ts [keys] [rounds]
 *
 * Two shapes per configuration:
 * - "batch": all keys are added, then the workers drain the queue (add and get/done timed apart);
 * - "stream": a producer adds keys in chunks while the workers are already waiting, which takes
 *   the hand-off path (a key goes straight to a blocked `get`).
 * Each figure is the median of `rounds` runs after one warm-up run. Wall-clock rates suffer when
 * other processes share the CPU (the load average is printed for that reason), so the items per
 * CPU-second of this process (user + system, GC threads included, so conservative) are printed too;
 * the queue runs on one thread, so on an idle machine both agree. The goal is checked against the
 * CPU-time rate.
 *
 * Each configuration runs with the priority queue (the default: "prio") and with
 * `priorityQueue: false` ("fifo"), side by side: all keys at the default priority, so "prio" pays
 * for its bookkeeping and gains nothing. A "mixed" shape adds every other key at LOW_PRIORITY (two
 * levels, the aging check on every get).
 *
 * The anchor, measured in the same run: a plain deduplicating FIFO (array + Set, hand-off to a
 * waiting `get`, nothing else: no processing set, no dirty re-add, no metrics). What the queue pays
 * for its guarantees is the distance between the two.
 */
import { cpus, loadavg } from 'node:os';
import { createMetricsRegistry } from '../src/metrics/create-metrics-registry.js';
import { LOW_PRIORITY, Workqueue, type AddOptions, type GetResult } from '../src/workqueue/workqueue.js';
import { writeBenchJson } from './report/bench-output.js';

const KEYS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const GOAL_PER_SECOND = 500_000;

const LOW: AddOptions = { priority: LOW_PRIORITY };
const keys = Array.from({ length: KEYS }, (_, i) => `namespace-${i % 100}/object-${i}`);

interface Figures {
  addPerSecond: number;
  processPerSecond: number;
  totalPerSecond: number;
  perCpuSecond: number;
}

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** What the workers use of a queue: ours and the anchor. */
interface BenchQueue {
  add(key: string, options?: AddOptions): void;
  get(): Promise<GetResult>;
  done(key: string): void;
  shutdown(options: { drainTimeoutMs: number }): Promise<unknown>;
}

/** The anchor: the least a deduplicating async FIFO does. */
class PlainFifo implements BenchQueue {
  private readonly items: string[] = [];
  private head = 0;
  private readonly queued = new Set<string>();
  private readonly waiting: ((r: GetResult) => void)[] = [];
  private closed = false;

  add(key: string): void {
    if (this.closed || this.queued.has(key)) return;
    const waiter = this.waiting.shift();
    if (waiter) return waiter({ shutdown: false, key });
    this.queued.add(key);
    this.items.push(key);
  }

  get(): Promise<GetResult> {
    if (this.head < this.items.length) {
      const key = this.items[this.head++]!;
      this.queued.delete(key);
      return Promise.resolve({ shutdown: false, key });
    }
    if (this.closed) return Promise.resolve({ shutdown: true });
    return new Promise((r) => this.waiting.push(r));
  }

  done(): void {}

  shutdown(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w({ shutdown: true });
    return Promise.resolve();
  }
}

type Variant = 'off' | 'on' | 'fifo-off' | 'fifo-on' | 'anchor';

function newQueue(variant: Variant): BenchQueue {
  if (variant === 'anchor') return new PlainFifo();
  const priorityQueue = !variant.startsWith('fifo');
  return variant.endsWith('on')
    ? new Workqueue({ name: 'bench', registry: createMetricsRegistry(), priorityQueue })
    : new Workqueue({ priorityQueue });
}

/** Workers loop get → done until `total` keys are done, then shut the queue down. */
function startWorkers(queue: BenchQueue, workers: number, total: number): Promise<void> {
  let done = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const next = await queue.get();
      if (next.shutdown) return;
      queue.done(next.key);
      if (++done === total) await queue.shutdown({ drainTimeoutMs: 0 });
    }
  };
  return Promise.all(Array.from({ length: workers }, worker)).then(() => undefined);
}

async function batch(workers: number, variant: Variant, mixed = false): Promise<Figures> {
  const queue = newQueue(variant);
  const c0 = cpuSeconds();
  const t0 = performance.now();
  if (mixed) for (let i = 0; i < keys.length; i++) queue.add(keys[i]!, i % 2 ? LOW : undefined);
  else for (const key of keys) queue.add(key);
  const t1 = performance.now();
  await startWorkers(queue, workers, keys.length);
  const t2 = performance.now();
  return {
    addPerSecond: keys.length / ((t1 - t0) / 1000),
    processPerSecond: keys.length / ((t2 - t1) / 1000),
    totalPerSecond: keys.length / ((t2 - t0) / 1000),
    perCpuSecond: keys.length / (cpuSeconds() - c0),
  };
}

async function stream(workers: number, variant: Variant): Promise<Figures> {
  const queue = newQueue(variant);
  const c0 = cpuSeconds();
  const t0 = performance.now();
  const running = startWorkers(queue, workers, keys.length);
  const chunk = 256;
  for (let i = 0; i < keys.length; i += chunk) {
    for (let j = i; j < Math.min(i + chunk, keys.length); j++) queue.add(keys[j]!);
    // Yield so workers run between chunks, as they would between watch events.
    await Promise.resolve();
  }
  await running;
  const total = keys.length / ((performance.now() - t0) / 1000);
  return {
    addPerSecond: NaN,
    processPerSecond: NaN,
    totalPerSecond: total,
    perCpuSecond: keys.length / (cpuSeconds() - c0),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const fmt = (n: number): string => (Number.isNaN(n) ? '-' : `${Math.round(n / 1000).toLocaleString('en-US')}k`);

async function main(): Promise<void> {
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `workqueue bench: ${KEYS.toLocaleString('en-US')} keys, median of ${ROUNDS} rounds, node ${process.version}, ${cpus().length} CPUs, load ${load}`,
  );
  console.log(
    ['shape', 'workers', 'queue', 'metrics', 'add/s', 'get+done/s', 'items/s', 'items/CPU-s', 'goal']
      .map((h) => h.padStart(14))
      .join(''),
  );
  let failures = 0;
  const configs: {
    shape: string;
    workers: number;
    queue: string;
    metrics: boolean;
    anchor: boolean;
    totalPerSecond: number[];
    perCpuSecond: number[];
  }[] = [];
  for (const shape of ['batch', 'stream', 'mixed'] as const) {
    for (const workers of [1, 8]) {
      const variants =
        shape === 'mixed' ? (['off', 'on'] as const) : (['fifo-off', 'off', 'fifo-on', 'on', 'anchor'] as const);
      for (const variant of variants) {
        const run =
          shape === 'batch' ? batch : shape === 'mixed' ? (w: number, v: Variant) => batch(w, v, true) : stream;
        await run(workers, variant); // warm-up
        const rounds: Figures[] = [];
        for (let r = 0; r < ROUNDS; r++) rounds.push(await run(workers, variant));
        const total = median(rounds.map((f) => f.totalPerSecond));
        const perCpu = median(rounds.map((f) => f.perCpuSecond));
        const anchor = variant === 'anchor';
        const ok = anchor || perCpu >= GOAL_PER_SECOND;
        configs.push({
          shape,
          workers,
          queue: variant === 'anchor' ? 'anchor' : variant.startsWith('fifo') ? 'fifo' : 'prio',
          metrics: variant.endsWith('on'),
          anchor,
          totalPerSecond: rounds.map((f) => f.totalPerSecond),
          perCpuSecond: rounds.map((f) => f.perCpuSecond),
        });
        if (!ok) failures++;
        console.log(
          [
            shape,
            String(workers),
            anchor ? 'anchor' : variant.startsWith('fifo') ? 'fifo' : 'prio',
            anchor ? '-' : variant.endsWith('on') ? 'on' : 'off',
            fmt(median(rounds.map((f) => f.addPerSecond))),
            fmt(median(rounds.map((f) => f.processPerSecond))),
            fmt(total),
            fmt(perCpu),
            anchor ? 'anchor' : ok ? 'ok' : 'BELOW',
          ]
            .map((c) => c.padStart(14))
            .join(''),
        );
      }
    }
  }
  writeBenchJson({ bench: 'workqueue', keys: KEYS, rounds: ROUNDS, goalPerSecond: GOAL_PER_SECOND, configs });
  console.log(
    `load after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    failures === 0
      ? `all configurations ≥ ${fmt(GOAL_PER_SECOND)} items/s`
      : `${failures} configuration(s) below ${fmt(GOAL_PER_SECOND)} items/s`,
  );
}

await main();
