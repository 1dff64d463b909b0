/**
 * Fairness across groups of keys (issue 26): the workqueue with and without `fairnessKey`, side
 * by side in one run.
 *
 *   node --import tsx bench/fair-queue.bench.ts [bigKeys] [smallKeys] [rounds]
 *
 * 1. Starvation. One worker; cluster A's relist queues `bigKeys` keys (10,000), then cluster B
 *    queues `smallKeys` (10), all at LOW_PRIORITY (both are list adds, so priority cannot tell
 *    them apart and only the queue's order decides). Printed: the hand-out at which B's first and
 *    last key went out — counted on a fake clock with instant reconciles — and, on the real clock
 *    with a simulated 1 ms reconcile (`setTimeout(1)` each), the wall time from B's adds to B's
 *    last key done. Without fairness B waits for all of A's relist; with it, B's keys alternate
 *    with A's.
 * 2. Throughput: `add` of 100,000 keys then one worker's get → done until empty, with no
 *    fairnessKey and with one spread over 1, 10 and 1,000 groups, all at one priority and with
 *    every other key at LOW_PRIORITY (two levels: the aging check on every get); keys per second
 *    (wall) and per CPU-second of this process, median of `rounds` after one warm-up. Both queue
 *    shapes run in one process here, as in an operator with fleet and plain controllers, so the
 *    "no fairnessKey" rows are not the monomorphic figure of bench/workqueue.bench.ts.
 */
import { cpus, loadavg } from 'node:os';
import { FakeClock } from '../src/core/fake-clock.js';
import { LOW_PRIORITY, Workqueue, type WorkqueueOptions } from '../src/workqueue/workqueue.js';
import { writeBenchJson } from './report/bench-output.js';

const BIG = Number(process.argv[2] ?? 10_000);
const SMALL = Number(process.argv[3] ?? 10);
const ROUNDS = Number(process.argv[4] ?? 5);
const THROUGHPUT_KEYS = 100_000;
const RECONCILE_MS = 1;

const byCluster = (key: string): string => key.slice(0, key.indexOf('/'));
const LOW = { priority: LOW_PRIORITY } as const;

function fill(q: Workqueue): void {
  for (let i = 0; i < BIG; i++) q.add(`cluster-a/ns/obj-${i}`, LOW);
  for (let i = 0; i < SMALL; i++) q.add(`cluster-b/ns/obj-${i}`, LOW);
}

/** Hand-outs (1-based) at which B's first and last key went out, instant reconciles. */
async function handOuts(options: WorkqueueOptions): Promise<{ first: number; last: number }> {
  const q = new Workqueue({ clock: new FakeClock(0), ...options });
  fill(q);
  let first = 0;
  let seen = 0;
  for (let n = 1; ; n++) {
    const next = await q.get();
    if (next.shutdown) throw new Error('queue shut down');
    q.done(next.key);
    if (byCluster(next.key) !== 'cluster-b') continue;
    if (++seen === 1) first = n;
    if (seen === SMALL) return { first, last: n };
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Real clock, one worker, 1 ms per reconcile: ms from B's adds to B's first and last key done. */
async function wallTime(options: WorkqueueOptions): Promise<{ firstMs: number; lastMs: number; handOuts: number }> {
  const q = new Workqueue(options);
  for (let i = 0; i < BIG; i++) q.add(`cluster-a/ns/obj-${i}`, LOW);
  const t0 = performance.now();
  for (let i = 0; i < SMALL; i++) q.add(`cluster-b/ns/obj-${i}`, LOW);
  let firstMs = 0;
  let seen = 0;
  for (let n = 1; ; n++) {
    const next = await q.get();
    if (next.shutdown) throw new Error('queue shut down');
    await sleep(RECONCILE_MS);
    q.done(next.key);
    if (byCluster(next.key) !== 'cluster-b') continue;
    if (++seen === 1) firstMs = performance.now() - t0;
    if (seen === SMALL) {
      const lastMs = performance.now() - t0;
      await q.shutdown({ drainTimeoutMs: 0 });
      return { firstMs, lastMs, handOuts: n };
    }
  }
}

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function throughput(
  groups: number | undefined,
  mixed: boolean,
): Promise<{ perSecond: number; perCpuSecond: number }> {
  const keys = Array.from({ length: THROUGHPUT_KEYS }, (_, i) => `cluster-${i % (groups ?? 1)}/ns-${i % 100}/obj-${i}`);
  const q = new Workqueue(groups === undefined ? {} : { fairnessKey: byCluster });
  const c0 = cpuSeconds();
  const t0 = performance.now();
  if (mixed) for (let i = 0; i < keys.length; i++) q.add(keys[i]!, i % 2 ? LOW : undefined);
  else for (const key of keys) q.add(key);
  for (let n = 0; n < keys.length; n++) {
    const next = await q.get();
    if (!next.shutdown) q.done(next.key);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { perSecond: keys.length / seconds, perCpuSecond: keys.length / (cpuSeconds() - c0) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const k = (n: number): string => `${Math.round(n / 1000).toLocaleString('en-US')}k`;
const pad = (cells: string[], width = 16): string => cells.map((c) => c.padStart(width)).join('');
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  console.log(
    `fair-queue bench: A ${BIG.toLocaleString('en-US')} keys then B ${SMALL}, one worker; node ${process.version}, ${cpus().length} CPUs, load ${load()}`,
  );
  const variants: [string, WorkqueueOptions][] = [
    ['no fairnessKey', {}],
    ['fairnessKey', { fairnessKey: byCluster }],
  ];
  console.log('\n1. until B is served');
  console.log(pad(['queue', 'B first (#)', 'B last (#)', 'B first (ms)', 'B last (ms)'], 18));
  const starvation: Record<string, unknown>[] = [];
  for (const [name, options] of variants) {
    const counted = await handOuts(options);
    const timed = await wallTime(options);
    if (timed.handOuts !== counted.last) throw new Error('the real-clock run handed out in another order');
    starvation.push({ queue: name, ...counted, firstMs: timed.firstMs, lastMs: timed.lastMs });
    console.log(
      pad([name, String(counted.first), String(counted.last), timed.firstMs.toFixed(1), timed.lastMs.toFixed(1)], 18),
    );
  }

  console.log(`\n2. throughput: add ${k(THROUGHPUT_KEYS)} keys, then one worker get → done; median of ${ROUNDS}`);
  console.log(pad(['queue', 'groups', 'priorities', 'keys/s', 'keys/CPU-s']));
  const rates: Record<string, unknown>[] = [];
  for (const [groups, mixed] of [undefined, 1, 10, 1_000].flatMap((g) => [[g, false] as const, [g, true] as const])) {
    await throughput(groups, mixed); // warm-up
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await throughput(groups, mixed));
    const perSecond = median(rounds.map((f) => f.perSecond));
    const perCpuSecond = median(rounds.map((f) => f.perCpuSecond));
    rates.push({
      groups: groups ?? null,
      priorities: mixed ? 2 : 1,
      perSecond: rounds.map((f) => f.perSecond),
      perCpuSecond: rounds.map((f) => f.perCpuSecond),
    });
    console.log(
      pad([
        groups === undefined ? 'no fairnessKey' : 'fairnessKey',
        groups === undefined ? '-' : String(groups),
        mixed ? '0 and -100' : '0',
        k(perSecond),
        k(perCpuSecond),
      ]),
    );
  }
  console.log(`\nload after: ${load()}`);
  writeBenchJson({ bench: 'fair-queue', big: BIG, small: SMALL, rounds: ROUNDS, starvation, throughput: rates });
}

await main();
