/**
 * What the operator console costs: RSS and CPU of a manager process with the console off, on with
 * nobody looking, and on with one browser tab open (a poll of /api/state every second, as the page
 * does), at idle and at 100 reconciles/s — side by side in one run, interleaved round by round.
 *
 *   node --import tsx bench/console.bench.ts [rounds] [measureSeconds] [warmupSeconds]
 *
 * Every measurement is a fresh child process: a Manager on an in-memory client with one controller
 * (4 workers) whose reconcile returns at once, 1 in 10 with a TerminalError (so the failing-keys
 * and error paths run). The driver enqueues 10 keys every 100 ms from a pool of 1,000. The child
 * measures its own CPU (user + system, over the measurement window, after the warm-up) and samples
 * RSS and heapUsed once a second (median reported). The poller runs in this parent process, so its
 * cost is not counted; the child's serving of the polls is. Prints min / median / max over rounds
 * and the median differences against "off". Other processes on the machine add noise: the load
 * average is printed at start and end.
 *
 * Whole-process differences this small drown in that noise, so a first step (also a fresh child,
 * with --expose-gc) times the console's own operations instead: recording one reconcile, one
 * snapshot + JSON (one poll), and the heap a full console retains.
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { writeBenchJson } from './report/bench-output.js';

type Variant = 'off' | 'on' | 'on+viewer';
const VARIANTS: readonly Variant[] = ['off', 'on', 'on+viewer'];
const RATES = [0, 100] as const;
const POOL = 1_000;
const POLL_MS = 1_000;

interface Sample {
  variant: Variant;
  ratePerSec: number;
  round: number;
  cpuPercent: number;
  rssMiB: number;
  heapUsedMiB: number;
  reconcilesPerSec: number;
  polls: number;
}

if (process.argv[2] === '--micro') await micro();
else if (process.argv[2] === '--child')
  await child(process.argv[3] as Variant, Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6]));
else await parent(Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 20), Number(process.argv[4] ?? 5));

async function parent(rounds: number, measureSeconds: number, warmupSeconds: number): Promise<void> {
  const load0 = loadavg();
  console.log(
    `console bench: ${rounds} round(s), ${warmupSeconds} s warm-up + ${measureSeconds} s measured per process; ${cpus().length} CPUs, load average ${load0.map((l) => l.toFixed(2)).join(' ')}, node ${process.version}`,
  );
  await runMicro();
  const samples: Sample[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const ratePerSec of RATES) {
      for (const variant of VARIANTS) {
        const s = await measure(variant, ratePerSec, round, measureSeconds, warmupSeconds);
        samples.push(s);
        console.log(
          `  round ${round} ${`${ratePerSec}/s`.padStart(5)} ${variant.padEnd(9)} cpu ${s.cpuPercent.toFixed(2).padStart(6)} %  rss ${s.rssMiB.toFixed(1).padStart(6)} MiB  heap ${s.heapUsedMiB.toFixed(1).padStart(5)} MiB  reconciles ${s.reconcilesPerSec.toFixed(1)}/s  polls ${s.polls}`,
        );
      }
    }
  }
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const stat = (xs: number[], digits: number): string =>
    `${Math.min(...xs).toFixed(digits)} / ${median(xs).toFixed(digits)} / ${Math.max(...xs).toFixed(digits)}`;
  console.log('\nmin / median / max over rounds');
  console.log(
    `${'load'.padEnd(7)}${'console'.padEnd(11)}${'CPU %'.padEnd(24)}${'RSS MiB'.padEnd(24)}${'heapUsed MiB'.padEnd(22)}reconciles/s`,
  );
  const summary: Record<string, unknown>[] = [];
  for (const ratePerSec of RATES) {
    const off = samples.filter((s) => s.ratePerSec === ratePerSec && s.variant === 'off');
    for (const variant of VARIANTS) {
      const group = samples.filter((s) => s.ratePerSec === ratePerSec && s.variant === variant);
      console.log(
        `${`${ratePerSec}/s`.padEnd(7)}${variant.padEnd(11)}${stat(
          group.map((s) => s.cpuPercent),
          2,
        ).padEnd(24)}${stat(
          group.map((s) => s.rssMiB),
          1,
        ).padEnd(24)}${stat(
          group.map((s) => s.heapUsedMiB),
          1,
        ).padEnd(22)}${median(group.map((s) => s.reconcilesPerSec)).toFixed(1)}`,
      );
      summary.push({
        ratePerSec,
        variant,
        cpuPercentMedian: median(group.map((s) => s.cpuPercent)),
        rssMiBMedian: median(group.map((s) => s.rssMiB)),
        addedCpuPercent: median(group.map((s) => s.cpuPercent)) - median(off.map((s) => s.cpuPercent)),
        addedRssMiB: median(group.map((s) => s.rssMiB)) - median(off.map((s) => s.rssMiB)),
      });
    }
  }
  console.log('\nadded by the console (median minus median of "off"):');
  for (const s of summary.filter((x) => x.variant !== 'off')) {
    console.log(
      `  ${`${String(s.ratePerSec)}/s`.padEnd(6)} ${String(s.variant).padEnd(9)} CPU ${(s.addedCpuPercent as number) >= 0 ? '+' : ''}${(s.addedCpuPercent as number).toFixed(2)} percentage points, RSS ${(s.addedRssMiB as number) >= 0 ? '+' : ''}${(s.addedRssMiB as number).toFixed(1)} MiB`,
    );
  }
  console.log(
    `load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  writeBenchJson({
    bench: 'console',
    rounds,
    measureSeconds,
    warmupSeconds,
    cpus: cpus().length,
    loadavgStart: load0,
    loadavgEnd: loadavg(),
    samples,
    summary,
  });
}

function runMicro(): Promise<void> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--micro'],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    proc.on('error', reject);
    proc.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`micro step exited ${code}`))));
  });
}

/** Runs one child; with a viewer, polls its console like the page does. */
function measure(
  variant: Variant,
  ratePerSec: number,
  round: number,
  measureSeconds: number,
  warmupSeconds: number,
): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--child',
        variant,
        String(ratePerSec),
        String(measureSeconds),
        String(warmupSeconds),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    let poller: NodeJS.Timeout | undefined;
    let polls = 0;
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => {
      out += chunk;
      const url = /^console (\S+)$/m.exec(out)?.[1];
      if (url && variant === 'on+viewer' && !poller) {
        poller = setInterval(() => {
          fetch(`${url}api/state`)
            .then((r) => r.text())
            .then(
              () => polls++,
              () => undefined,
            );
        }, POLL_MS);
      }
    });
    proc.on('error', reject);
    proc.on('exit', (code) => {
      if (poller) clearInterval(poller);
      const line = /^result (.+)$/m.exec(out)?.[1];
      if (code !== 0 || !line) return reject(new Error(`child ${variant} ${ratePerSec}/s exited ${code}: ${out}`));
      resolve({
        ...(JSON.parse(line) as Omit<Sample, 'variant' | 'ratePerSec' | 'round' | 'polls'>),
        variant,
        ratePerSec,
        round,
        polls,
      });
    });
  });
}

async function child(
  variant: Variant,
  ratePerSec: number,
  measureSeconds: number,
  warmupSeconds: number,
): Promise<void> {
  const { Manager, TerminalError } = await import('../src/index.js');
  const { FakeClient } = await import('../src/testing/fake-client/index.js');
  const client = new FakeClient();
  const manager = new Manager({
    client,
    metricsPort: 0,
    healthPort: 0,
    ...(variant === 'off' ? {} : { console: { port: 0 } }),
  });
  let reconciles = 0;
  const controller = manager
    .controller('bench')
    .for({ apiVersion: 'v1', kind: 'ConfigMap' })
    .withOptions({ maxConcurrentReconciles: 4 })
    .complete(async (req) => {
      reconciles++;
      if (req.name.endsWith('0')) throw new TerminalError(`unsupported version for ${req.name} (token=not-a-real-one)`);
    });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  while (variant !== 'off' && !manager.endpoints.consoleUrl) await new Promise((r) => setTimeout(r, 10));
  if (manager.endpoints.consoleUrl) console.log(`console ${manager.endpoints.consoleUrl}`);

  let next = 0;
  const perTick = ratePerSec / 10;
  const driver =
    perTick > 0
      ? setInterval(() => {
          for (let i = 0; i < perTick; i++) controller.enqueue({ namespace: 'bench', name: `object-${next++ % POOL}` });
        }, 100)
      : undefined;

  await new Promise((r) => setTimeout(r, warmupSeconds * 1000));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const reconciles0 = reconciles;
  const rss: number[] = [];
  const heap: number[] = [];
  for (let s = 0; s < measureSeconds; s++) {
    await new Promise((r) => setTimeout(r, 1000));
    const m = process.memoryUsage();
    rss.push(m.rss);
    heap.push(m.heapUsed);
  }
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - t0) / 1000;
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `result ${JSON.stringify({ cpuPercent: ((cpu.user + cpu.system) / 1e6 / seconds) * 100, rssMiB: med(rss) / 2 ** 20, heapUsedMiB: med(heap) / 2 ** 20, reconcilesPerSec: (reconciles - reconciles0) / seconds })}`,
  );
  if (driver) clearInterval(driver);
  stop.abort();
  await running;
  process.exit(0);
}

/** Per-operation costs of the console's data structures, measured in one process with --expose-gc. */
async function micro(): Promise<void> {
  const { ConsoleState } = await import('../src/console/console-state.js');
  const { realClock } = await import('../src/core/clock.js');
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const message = `unsupported version 99: ${'x'.repeat(400)} token=not-a-real-one`;
  const queue = { length: 0, processingCount: 0, waitingCount: 0, backoffKeys: () => ({ total: 0, keys: [] }) };
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const state = new ConsoleState({ clock: realClock });
  const view = state.trackController('bench');
  view.attach(queue, 4);
  // Worst case for memory: every slot of the window used, 1,000 distinct failing keys with long messages.
  const N = 200_000;
  const error = new Error(message); // made once: what the reconciler pays to throw is not the console's
  const time = (failing: boolean): number => {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      view.reconciled({
        key: `bench/object-${i % 10_000}`,
        reconcileID: 'id',
        startedAtMs: Date.now(),
        durationMs: (i % 100) + 0.5,
        outcome: failing ? 'terminal_error' : 'success',
        ...(failing ? { error } : {}),
      });
    }
    return ((performance.now() - t0) * 1e6) / N;
  };
  const successNs = time(false);
  const failingNs = time(true);
  const recordNs = 0.9 * successNs + 0.1 * failingNs;
  for (let i = 0; i < 100; i++)
    state.recordEvent({
      atMs: Date.now(),
      type: 'Warning',
      reason: `R${i}`,
      message,
      involvedObject: { kind: 'Database', namespace: 'bench', name: `object-${i}` },
    });
  gc();
  const retainedKiB = (process.memoryUsage().heapUsed - heap0) / 1024;
  const M = 200;
  let bytes = 0;
  const t1 = performance.now();
  for (let i = 0; i < M; i++) bytes = JSON.stringify(state.snapshot()).length;
  const snapshotMs = (performance.now() - t1) / M;
  console.log(
    `record: ${successNs.toFixed(0)} ns per successful reconcile, ${failingNs.toFixed(0)} ns per failing one (redacting a ${message.length}-char message); 1 in 10 failing at 100/s: ${((recordNs * 100) / 1e7).toFixed(4)} % of one core`,
  );
  console.log(
    `snapshot + JSON: ${snapshotMs.toFixed(2)} ms, ${(bytes / 1024).toFixed(0)} KiB per poll (1 controller, 100 failing keys shown, 50 recent, 100 Events)`,
  );
  console.log(
    `retained by a full console (1 controller: 1,000 failing keys with ${message.length}-char messages, 50 recent, 100 Events): ${retainedKiB.toFixed(0)} KiB`,
  );
}
