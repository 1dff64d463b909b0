/**
 * Leader takeover with N Databases: how soon a new leader's controller works through every cached
 * key after `kill -9` of the old leader. Real replica processes of the reference operator
 * (examples/database-operator, run from source) against a TestEnv, with short lease timings.
 *
 * Each run: the cluster is settled (every Database's status.observedGeneration == generation and the
 * leader's workqueue empty); a standby runs with its caches synced (/readyz 200: caches sync on
 * every replica, controllers start only on the leader, and when they do, the cache replay queues
 * every cached key at low priority); the leader is killed with SIGKILL. On the new leader:
 * - Lease acquired: the Lease's spec.acquireTime (a MicroTime written by the new leader's clock, on
 *   this machine, so comparable with the bench's Date.now() at the kill);
 * - its "became leader" and the controller's "starting workers" log lines;
 * - its 1st and N-th finished reconcile: the controller's debug lines "reconcile succeeded" /
 *   "reconcile requested a requeue", in the order written, by their pino `time` (ISO, ms resolution,
 *   stamped in the process; the replicas run at LOG_LEVEL=debug for this). Polling /metrics
 *   (controller_runtime_reconcile_total) was tried first and is unusable for this: the busy new
 *   leader answers a scrape only after 0.6–1.5 s, so the counter jumped from 0 to N in one poll.
 * The rate is (N − 1) / (N-th − 1st). Runs alternate which replica is killed: the killed one is
 * started again as the new standby. Prints every run and the median.
 *
 * Takeover. A standby's caches are synced before it leads, so when it takes the Lease its
 * controller starts with every cached key already queued (at low priority, by the cache replay):
 * the first reconcile follows the workers' start by tens of milliseconds, with no list in between,
 * and the queue's adds are N plus a few (the owned objects' events). Figures, 2-core machine shared
 * with other work (noisy), Node 20, TestEnv 1.20, lease 4 s / renew 3 s / retry 1 s:
 *   500 Databases, 3 runs (load 5.4–5.7): kill → Lease acquired 3.98–4.04 s (median 3.99 s: the
 *   lease duration, as it must be after kill -9); acquired → workers started 16–32 ms; acquired →
 *   1st reconcile 43–213 ms (median 45 ms); acquired → 500th reconcile 465–979 ms (median 823 ms);
 *   533–1188 reconciles/s (a settled Database's reconcile writes nothing).
 *   10,000 Databases, 2 runs, the default timings (lease 15 s / renew 10 s / retry 2 s; load
 *   1.6–2.4): kill → Lease acquired 15.0 s; acquired → workers started 114 ms; acquired → 1st
 *   reconcile 123–124 ms; acquired → 10,000th reconcile 3.79 s and 4.12 s; 2,500–2,730 reconciles/s;
 *   queue adds 10,466–10,472.
 *     BENCH_LEASE_DURATION_MS=15000 BENCH_RENEW_DEADLINE_MS=10000 BENCH_RETRY_PERIOD_MS=2000 \
 *       OPERATOR_RUNTIME_ASSETS=... node --import tsx bench/leader-takeover.bench.ts 10000 2
 *   With the short timings two 10,000-Database runs (of an earlier version of this bench) failed
 *   right after the takeover: once a scrape of the new leader's /metrics was reset (ECONNRESET, then
 *   unhandled), once its counter showed 10,000 reconciles and the next scrape was refused
 *   (ECONNREFUSED: the process had gone). Its exit code was not recorded then (now it is printed);
 *   not explained (a missed 3 s renew deadline under load is one guess).
 * Beside bench/leader-failover.bench.ts (kill → the standby's leader-only work starts, default
 * 15 s lease): the takeover adds only the "acquired → workers started → N-th reconcile" part.
 *
 *   OPERATOR_RUNTIME_ASSETS=... node --import tsx bench/leader-takeover.bench.ts [databases=10000] [runs=3]
 *
 * The priority queue cannot be turned off in the reference operator without editing it (no env
 * variable for the controller's `priorityQueue` option), so there is no "queue off" comparison.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { KubeClient, type Kubeconfig } from '../src/index.js';
import { TestEnv, eventually, freePort, readManifests } from '../src/testing/index.js';
import { writeBenchJson } from './report/bench-output.js';

const count = Number(process.argv[2] ?? 10_000);
const runs = Number(process.argv[3] ?? 3);
if (!(count >= 1) || !(runs >= 1)) throw new Error('usage: leader-takeover.bench.ts [databases>=1] [runs>=1]');
// BENCH_LEASE_DURATION_MS / BENCH_RENEW_DEADLINE_MS / BENCH_RETRY_PERIOD_MS override the short timings.
const LEASE_DURATION_MS = Number(process.env.BENCH_LEASE_DURATION_MS || 4_000);
const RENEW_DEADLINE_MS = Number(process.env.BENCH_RENEW_DEADLINE_MS || 3_000);
const RETRY_PERIOD_MS = Number(process.env.BENCH_RETRY_PERIOD_MS || 1_000);
const NAMESPACE = 'default';
const LEASE_NAME = 'database-operator';
const CONTROLLER = 'database';
const REPO = fileURLToPath(new URL('..', import.meta.url));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const load = (): string =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

/** Sum of a metric's samples whose labels contain every `labels` pair. */
function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .filter((l) => wanted.every((w) => l.includes(w)))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

const dir = await mkdtemp(join(tmpdir(), 'leader-takeover-bench-'));
const env = await TestEnv.start({
  controllerManager: false,
  crds: await readManifests(new URL('../examples/database-operator/config/crd.yaml', import.meta.url)),
});
const client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
const kubeconfigPath = join(dir, 'kubeconfig.yaml');
await writeFile(kubeconfigPath, stringify(env.kubeconfig), { mode: 0o600 });

interface Replica {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
  readonly logPath: string;
  /** Settles when the process exited and its output is in the log file. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  metrics(): Promise<string>;
}
const replicas = new Set<Replica>();
let started = 0;

async function startReplica(): Promise<Replica> {
  const name = `replica-${started++}`;
  const port = await freePort();
  const logPath = join(dir, `${name}.log`);
  const log = createWriteStream(logPath);
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECONFIG: kubeconfigPath,
    BACKUP_SERVICE_URL: 'http://127.0.0.1:9',
    METRICS_PORT: String(port),
    HEALTH_PORT: String(port),
    BIND_HOST: '127.0.0.1',
    // debug: each reconcile logs a line with its time (ms), the measure below.
    LOG_LEVEL: 'debug',
    LEADER_ELECTION_NAMESPACE: NAMESPACE,
    POD_NAME: name,
    LEASE_DURATION_MS: String(LEASE_DURATION_MS),
    RENEW_DEADLINE_MS: String(RENEW_DEADLINE_MS),
    RETRY_PERIOD_MS: String(RETRY_PERIOD_MS),
  };
  delete childEnv.NODE_OPTIONS;
  const child = spawn(
    process.execPath,
    ['--conditions=operator-runtime-source', '--import', 'tsx', 'examples/database-operator/src/main.ts'],
    { cwd: REPO, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      log.end(() => resolve({ code, signal }));
    }),
  );
  const replica: Replica = {
    name,
    port,
    child,
    logPath,
    exited,
    metrics: async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
  };
  replicas.add(replica);
  replica.child.once('exit', () => replicas.delete(replica));
  void exited.then(async ({ code, signal }) => {
    if (signal === 'SIGKILL') return; // the bench's kill -9
    const tail = (await readFile(logPath, 'utf8')).split('\n').filter((l) => !l.includes('"level":"debug"'));
    console.error(`${name} exited by itself: code ${code}, signal ${signal}; its last non-debug lines:`);
    console.error(tail.slice(-15).join('\n'));
  });
  await eventually(
    `${name} ready (caches synced)`,
    async () =>
      (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined,
    { timeoutMs: 600_000, intervalMs: 50 },
  );
  return replica;
}

async function kill(replica: Replica, signal: NodeJS.Signals): Promise<void> {
  if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill(signal);
  await replica.exited;
}

/** Every Database reconciled and the leader's queue empty twice in a row, a second apart. */
async function waitSettled(leader: Replica): Promise<void> {
  await eventually(
    'every Database reconciled',
    async () => {
      const { items } = await client.list<{
        metadata: { generation?: number };
        status?: { observedGeneration?: number };
      }>({ apiVersion: 'example.com/v1', kind: 'Database' }, { namespace: NAMESPACE });
      return items.length === count && items.every((d) => d.status?.observedGeneration === d.metadata.generation)
        ? true
        : undefined;
    },
    { timeoutMs: 1_800_000, intervalMs: 2_000 },
  );
  let emptyBefore = false;
  await eventually(
    "the leader's workqueue empty",
    async () => {
      const text = await leader.metrics().catch(() => undefined);
      const empty = text !== undefined && metricSum(text, 'workqueue_depth', { name: CONTROLLER }) === 0;
      const settled = empty && emptyBefore;
      emptyBefore = empty;
      return settled ? true : undefined;
    },
    { timeoutMs: 600_000, intervalMs: 1_000 },
  );
}

async function leaseHolder(): Promise<{ holder?: string; acquireMs?: number }> {
  const lease = await client.get<{ spec?: { holderIdentity?: string; acquireTime?: string } }>(
    { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' },
    LEASE_NAME,
    { namespace: NAMESPACE },
  );
  const at = lease.spec?.acquireTime;
  return { holder: lease.spec?.holderIdentity, acquireMs: at ? Date.parse(at) : undefined };
}

interface TakeoverResult {
  readonly killToAcquireMs: number;
  /** From the standby's own log lines (pino `time`, ms). */
  readonly acquireToBecameLeaderLogMs: number;
  readonly acquireToWorkersStartedMs: number;
  readonly acquireToFirstMs: number;
  readonly acquireToLastMs: number;
  readonly reconcilesPerSecond: number;
  /** workqueue_adds_total of the controller's queue once N reconciles ran. */
  readonly queueAdds: number;
}

interface LogLine {
  /** ISO 8601 with milliseconds (the runtime's pino `timestamp`). */
  readonly time?: string;
  readonly msg?: string;
  readonly controller?: string;
  readonly reconcileID?: string;
}

/** The replica's log lines so far (JSON lines; anything else is skipped). */
async function readLog(replica: Replica): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  for (const l of (await readFile(replica.logPath, 'utf8')).split('\n')) {
    if (!l.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(l) as LogLine);
    } catch {
      // a partly written last line
    }
  }
  return lines;
}

const RECONCILE_DONE = new Set(['reconcile succeeded', 'reconcile requested a requeue']);

/** Kills `leader` with SIGKILL and watches `standby` take over and reconcile `count` keys. */
async function takeover(leader: Replica, standby: Replica): Promise<TakeoverResult> {
  const key = { controller: CONTROLLER };
  const base = metricSum(await standby.metrics(), 'controller_runtime_reconcile_total', key);
  if (base !== 0) throw new Error(`the standby ${standby.name} reconciled ${base} times before leading`);
  const killedAt = Date.now();
  await kill(leader, 'SIGKILL');
  await eventually(
    `${standby.name} reconciled ${count} times`,
    async () => {
      if (standby.child.exitCode !== null || standby.child.signalCode !== null) {
        throw new Error(`${standby.name} exited while taking over`);
      }
      // A scrape of the busy new leader may fail (a reset connection): poll again.
      return metricSum(await standby.metrics().catch(() => ''), 'controller_runtime_reconcile_total', key) >= count
        ? true
        : undefined;
    },
    { timeoutMs: LEASE_DURATION_MS + 1_800_000, intervalMs: 200 },
  );
  const queueAdds = metricSum(await standby.metrics(), 'workqueue_adds_total', { name: CONTROLLER });
  const { holder, acquireMs } = await leaseHolder();
  if (holder !== standby.name || acquireMs === undefined) {
    throw new Error(`the Lease is held by ${holder ?? 'nobody'}, not ${standby.name}`);
  }
  // The log lags the counter (10,000 reconciles write ~50,000 debug lines through a pipe): wait for it.
  const isDone = (l: LogLine): boolean => l.controller === CONTROLLER && RECONCILE_DONE.has(l.msg ?? '');
  const log = await eventually(
    `${standby.name}'s log to show ${count} reconciles`,
    async () => {
      const lines = await readLog(standby);
      return lines.filter(isDone).length >= count ? lines : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 1_000 },
  );
  const at = (msg: string, controller?: string): number => {
    const line = log.find((l) => l.msg === msg && (controller === undefined || l.controller === controller));
    if (line?.time === undefined) throw new Error(`${standby.name} logged no "${msg}"`);
    return Date.parse(line.time);
  };
  const done = log.filter(isDone);
  const first = done[0]?.time === undefined ? undefined : Date.parse(done[0].time);
  const lastLine = done[count - 1];
  const last = lastLine?.time === undefined ? undefined : Date.parse(lastLine.time);
  if (first === undefined || last === undefined) {
    throw new Error(`${standby.name} logged ${done.length} successful reconciles, fewer than ${count}`);
  }
  return {
    killToAcquireMs: acquireMs - killedAt,
    acquireToBecameLeaderLogMs: at('became leader') - acquireMs,
    acquireToWorkersStartedMs: at('starting workers', CONTROLLER) - acquireMs,
    acquireToFirstMs: first - acquireMs,
    acquireToLastMs: last - acquireMs,
    reconcilesPerSecond: ((count - 1) * 1000) / Math.max(1, last - first),
    queueAdds,
  };
}

let ok = false;
try {
  console.log(
    `leader takeover: ${count} Databases, ${runs} runs; leaseDuration ${LEASE_DURATION_MS} ms, renewDeadline ${RENEW_DEADLINE_MS} ms, retryPeriod ${RETRY_PERIOD_MS} ms; node ${process.versions.node}; load ${load()}`,
  );
  const createdAt = Date.now();
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, j) =>
        client.create({
          apiVersion: 'example.com/v1',
          kind: 'Database',
          metadata: { name: `db-${i + j}`, namespace: NAMESPACE },
          spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
        }),
      ),
    );
  }
  let leader = await startReplica();
  await waitSettled(leader);
  console.log(
    `  created ${count} Databases and settled the cluster in ${((Date.now() - createdAt) / 1000).toFixed(1)} s`,
  );
  const results: TakeoverResult[] = [];
  for (let run = 0; run < runs; run++) {
    const standby = await startReplica();
    const r = await takeover(leader, standby);
    results.push(r);
    console.log(
      `  run ${run + 1} (killed the leader, ${standby.name} took over): kill → Lease acquired ${r.killToAcquireMs} ms; acquired → "became leader" ${r.acquireToBecameLeaderLogMs} ms → workers started ${r.acquireToWorkersStartedMs} ms → 1st reconcile ${r.acquireToFirstMs} ms → ${count}th reconcile ${r.acquireToLastMs} ms; ${r.reconcilesPerSecond.toFixed(0)} reconciles/s; queue adds ${r.queueAdds}; load ${load()}`,
    );
    leader = standby;
    if (run + 1 < runs) await waitSettled(leader);
  }
  const med = (f: (r: TakeoverResult) => number): number => median(results.map(f));
  console.log(
    `median over ${runs} runs: kill → Lease acquired ${med((r) => r.killToAcquireMs)} ms; acquired → workers started ${med((r) => r.acquireToWorkersStartedMs)} ms; acquired → 1st reconcile ${med((r) => r.acquireToFirstMs)} ms; acquired → ${count}th reconcile ${med((r) => r.acquireToLastMs)} ms; ${med((r) => r.reconcilesPerSecond).toFixed(0)} reconciles/s; load ${load()}`,
  );
  writeBenchJson({
    bench: 'leader-takeover',
    databases: count,
    leaseDurationMs: LEASE_DURATION_MS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryPeriodMs: RETRY_PERIOD_MS,
    runs: results,
  });
  ok = true;
} finally {
  for (const r of [...replicas]) await kill(r, 'SIGKILL');
  await sleep(1_000); // a replica that exited by itself has its log tail printed
  await client.close();
  await env.stop();
  // The replicas' logs stay when a run failed.
  if (ok) await rm(dir, { recursive: true, force: true });
  else console.error(`replica logs kept in ${dir}`);
}
