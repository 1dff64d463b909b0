/**
 * The reference operator as shipped (compiled JS from scripts/layout-runtime.sh) against the same
 * operator run from source through tsx: time from process start to /readyz 200, and resident
 * memory once idle with N Databases (and the objects they own) in its cache.
 *
 *   OPERATOR_RUNTIME_ASSETS=... node --import tsx scripts/packaging/operator-memory.bench.ts [databases=1000] [samples=5]
 *   (Node 24: the same with the node from scripts/install-node24.sh)
 *   BENCH_EXTRA='--max-semi-space-size=2|--max-semi-space-size=2;MALLOC_ARENA_MAX=2' adds compiled runs with
 *   those flags / variables; BENCH_NO_TSX=1 leaves out the run from source.
 *   BENCH_LAYOUTS='before=/tmp/old-layout' adds compiled runs from other folders laid out by
 *   scripts/layout-runtime.sh (e.g. from an older commit), measured right after the warm-up and
 *   before this tree's run, so a before/after pair shares one cluster, one load and one run;
 *   BENCH_ROUNDS=N repeats that pair N times, interleaved (idle RSS spreads by several MiB between
 *   identical runs); BENCH_FLAGS='--max-semi-space-size=2' runs those with flags, as the image does.
 *   BENCH_HEAP_SNAPSHOT=1 also takes a heap snapshot of each measured run once idle (after its RSS
 *   readings; a snapshot collects garbage first) and prints what the live heap holds.
 *
 * Idle means: every Database's status.observedGeneration equals its generation, the workqueue is
 * empty and no reconcile ran for 5 s. RSS is read from /proc/<pid>/status (VmRSS) once a second,
 * `samples` times; the median is printed beside min and max, and the process's CPU time from spawn
 * to idle beside it (the cost of a memory-saving flag). The load average is printed first.
 */
import { spawn } from 'node:child_process';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { KubeClient, type Kubeconfig } from '../../src/index.js';
import { TestEnv, eventually, freePort, readManifests } from '../../src/testing/index.js';
import { REPO, userEnv, withDist } from './dist.js';
import { formatHeapSummary, summarizeHeapSnapshot, type HeapSummary } from './heap-snapshot-summary.js';

const run = promisify(execFile);
const count = Number(process.argv[2] ?? 1000);
const samples = Number(process.argv[3] ?? 5);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** utime + stime of a process from /proc/<pid>/stat (fields 14 and 15, in clock ticks of 10 ms). */
async function processCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The process's resident memory by what backs it (/proc/<pid>/smaps): the node binary's pages,
 * other files (shared libraries, ICU data), malloc's main heap (`[heap]`), and anonymous mappings,
 * which hold V8's heap (the per-space figures above), thread arenas and stacks. File pages that
 * are clean (code, read-only data) are shared with every process running the same binary and
 * can be dropped by the kernel under pressure; the `clean` figure says how many of them are.
 */
async function rssByMapping(pid: number): Promise<string> {
  const totals = new Map<string, { rss: number; clean: number }>();
  let current = { rss: 0, clean: 0 };
  for (const line of (await readFile(`/proc/${pid}/smaps`, 'utf8')).split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const path = header[1] ?? '';
      const name =
        path === ''
          ? 'anonymous'
          : path.startsWith('[')
            ? path
            : path === process.execPath || path.endsWith('/bin/node')
              ? 'node binary'
              : 'other files';
      current = totals.get(name) ?? { rss: 0, clean: 0 };
      totals.set(name, current);
      continue;
    }
    const field = /^(Rss|Private_Clean|Shared_Clean):\s+(\d+) kB/.exec(line);
    if (field) current[field[1] === 'Rss' ? 'rss' : 'clean'] += Number(field[2]) / 1024;
  }
  return [...totals]
    .filter(([, t]) => t.rss >= 0.5)
    .sort((a, b) => b[1].rss - a[1].rss)
    .map(([name, t]) => `${name} ${t.rss.toFixed(1)}${t.clean >= 0.5 ? ` (clean ${t.clean.toFixed(1)})` : ''}`)
    .join(', ');
}

/** Signals the process to write a heap snapshot into `cwd`, waits until it is complete, summarizes and deletes it. */
async function heapSnapshot(pid: number, cwd: string): Promise<HeapSummary> {
  const mine = (f: string) => f.endsWith('.heapsnapshot') && f.includes(`.${pid}.`);
  process.kill(pid, 'SIGUSR2');
  let last = -1;
  for (;;) {
    await sleep(1000);
    const file = (await readdir(cwd)).find(mine);
    if (!file) continue;
    const size = (await stat(join(cwd, file))).size;
    if (size > 0 && size === last) {
      const summary = summarizeHeapSnapshot(await readFile(join(cwd, file), 'utf8'));
      await rm(join(cwd, file));
      return summary;
    }
    last = size;
  }
}

const dir = await mkdtemp(join(tmpdir(), 'operator-memory-'));
const app = join(dir, 'app');
await withDist(() => run(join(REPO, 'scripts/layout-runtime.sh'), [app], { env: userEnv(), maxBuffer: 64 << 20 }));
const env = await TestEnv.start({
  crds: await readManifests(new URL('../../examples/database-operator/config/crd.yaml', import.meta.url)),
});
const client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
const kubeconfigPath = join(dir, 'kubeconfig.yaml');
await writeFile(kubeconfigPath, stringify(env.kubeconfig), { mode: 0o600 });
await chmod(dir, 0o700);

try {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, j) =>
        client.create({
          apiVersion: 'example.com/v1',
          kind: 'Database',
          metadata: { name: `db-${i + j}`, namespace: 'default' },
          spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
        }),
      ),
    );
  }

  // A first, unreported run creates every Database's owned objects, so both measured runs start
  // from the same settled cluster and only differ in how the operator is run.
  const compiled = { name: 'compiled JS (node dist/main.js)', cwd: app, args: ['dist/main.js'] };
  const variants: { name: string; cwd: string; args: string[]; env?: Record<string, string> }[] = [
    // BENCH_WARMUP_FLAGS='--max-semi-space-size=2' runs the warm-up with flags: its CPU time (creating
    // 4,000 objects, 2,000 reconciles) is the heavier measure of what a GC flag costs.
    {
      ...compiled,
      name: `warm-up (creates the owned objects; RSS not a figure)${process.env.BENCH_WARMUP_FLAGS ? ` with ${process.env.BENCH_WARMUP_FLAGS}` : ''}`,
      args: [...(process.env.BENCH_WARMUP_FLAGS ?? '').split(' ').filter(Boolean), ...compiled.args],
    },
    ...Array.from({ length: Number(process.env.BENCH_ROUNDS ?? 1) }, (_, round) => {
      const flags = (process.env.BENCH_FLAGS ?? '').split(' ').filter(Boolean);
      const suffix = `${flags.length > 0 ? ` with ${flags.join(' ')}` : ''}${round > 0 ? `, round ${round + 1}` : ''}`;
      return [
        ...(process.env.BENCH_LAYOUTS ?? '')
          .split('|')
          .filter(Boolean)
          .map((layout) => {
            const [name, cwd] = layout.split('=') as [string, string];
            return { name: `${name}: compiled JS from ${cwd}${suffix}`, cwd, args: [...flags, 'dist/main.js'] };
          }),
        { ...compiled, name: `${compiled.name}${suffix}`, args: [...flags, ...compiled.args] },
      ];
    }).flat(),
    // BENCH_NO_TSX=1 leaves out the run from source (flag comparisons need only the compiled one).
    ...(process.env.BENCH_NO_TSX === '1'
      ? []
      : [
          {
            name: 'tsx from source',
            cwd: REPO,
            args: ['--conditions=operator-runtime-source', '--import', 'tsx', 'examples/database-operator/src/main.ts'],
          },
        ]),
  ];
  // Extra compiled runs with other V8 flags / environment, e.g. BENCH_EXTRA='--max-semi-space-size=1;MALLOC_ARENA_MAX=2'
  for (const extra of (process.env.BENCH_EXTRA ?? '').split('|').filter(Boolean)) {
    const parts = extra.split(';');
    const flags = parts.filter((p) => p.startsWith('--'));
    const vars = Object.fromEntries(
      parts.filter((p) => !p.startsWith('--')).map((p) => p.split('=') as [string, string]),
    );
    variants.push({ name: `compiled JS with ${extra}`, cwd: app, args: [...flags, 'dist/main.js'], env: vars });
  }
  console.log(
    `node ${process.versions.node}, ${count} Databases, load ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  for (const variant of variants) {
    const port = await freePort();
    const started = performance.now();
    const snapshot = process.env.BENCH_HEAP_SNAPSHOT === '1' && !variant.name.startsWith('warm-up');
    const child = spawn(process.execPath, [...(snapshot ? ['--heapsnapshot-signal=SIGUSR2'] : []), ...variant.args], {
      cwd: variant.cwd,
      env: userEnv({
        ...variant.env,
        KUBECONFIG: kubeconfigPath,
        BACKUP_SERVICE_URL: 'http://127.0.0.1:9',
        METRICS_PORT: String(port),
        HEALTH_PORT: String(port),
        BIND_HOST: '127.0.0.1',
        LOG_LEVEL: 'error',
      }),
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const sum = (text: string, name: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    await eventually(
      'ready',
      async () =>
        (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined,
      { timeoutMs: 120_000, intervalMs: 20 },
    );
    const readyMs = performance.now() - started;
    await eventually(
      'every Database reconciled',
      async () => {
        const { items } = await client.list<{
          metadata: { generation?: number };
          status?: { observedGeneration?: number };
        }>({ apiVersion: 'example.com/v1', kind: 'Database' }, { namespace: 'default' });
        return items.length === count && items.every((d) => d.status?.observedGeneration === d.metadata.generation)
          ? true
          : undefined;
      },
      { timeoutMs: 600_000, intervalMs: 1000 },
    );
    let last = -1;
    await eventually(
      'idle for 5 s',
      async () => {
        const text = await metrics();
        const reconciles = sum(text, 'controller_runtime_reconcile_total');
        const idle = sum(text, 'workqueue_depth') === 0 && reconciles === last;
        last = reconciles;
        return idle ? true : undefined;
      },
      { timeoutMs: 600_000, intervalMs: 5000 },
    );
    // CPU the process spent from spawn to idle (start-up, initial lists, every reconcile): what a
    // V8 flag that trades memory for garbage-collection work costs.
    const cpuMs = await processCpuMs(child.pid!);
    const rss: number[] = [];
    for (let i = 0; i < samples; i++) {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      rss.push(Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024);
      await sleep(1000);
    }
    // V8's memory reducer shrinks the heap some seconds into an idle period (Node 20): say when the
    // readings reached their low, so a longer `samples` shows the settled figure and its delay.
    const low = Math.min(...rss);
    const settledAfterS = rss.findIndex((r) => r <= low + 1);
    rss.sort((a, b) => a - b);
    const text = await metrics();
    const mib = (name: string) => (sum(text, name) / 2 ** 20).toFixed(1);
    console.log(
      `${variant.name}: ready ${Math.round(readyMs)} ms after spawn; idle RSS median ${rss[rss.length >> 1]!.toFixed(1)} MiB (min ${rss[0]!.toFixed(1)}, max ${rss.at(-1)!.toFixed(1)}, within 1 MiB of min from reading ${settledAfterS + 1}); heap used ${mib('nodejs_heap_size_used_bytes')} MiB of ${mib('nodejs_heap_size_total_bytes')} MiB; reconciles ${last}; CPU until idle ${(cpuMs / 1000).toFixed(1)} s (user+system)`,
    );
    // Where the heap's pages are (prom-client's per-space gauges): the young generation (new_space)
    // is sized by V8 for throughput and dominates the idle RSS beyond the imports and the cache.
    const spaces = text
      .split('\n')
      .filter((l) => l.startsWith('nodejs_heap_space_size_total_bytes{'))
      .map((l) => ({ space: /space="([^"]+)"/.exec(l)?.[1] ?? '?', bytes: Number(l.slice(l.lastIndexOf(' ') + 1)) }))
      .filter((x) => x.bytes >= 2 ** 19)
      .map((x) => `${x.space} ${(x.bytes / 2 ** 20).toFixed(1)}`);
    console.log(`  heap spaces (MiB committed): ${spaces.join(', ')}`);
    // The manager's idle heap compaction (src/manager/heap-compactor.ts): how often it ran and how
    // long it blocked the event loop, the CPU it costs.
    const compactions = sum(text, 'heap_compactions_total');
    const compactionMs = sum(text, 'heap_compaction_duration_seconds_sum') * 1000;
    console.log(
      `  idle heap compactions: ${compactions}${compactions > 0 ? `, ${(compactionMs / compactions).toFixed(0)} ms each` : ''}`,
    );
    console.log(`  RSS by mapping (MiB): ${await rssByMapping(child.pid!)}`);
    if (snapshot) console.log(`  ${formatHeapSummary(await heapSnapshot(child.pid!, variant.cwd), 12)}`);
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
} finally {
  await client.close();
  await env.stop();
  await rm(dir, { recursive: true, force: true });
}
