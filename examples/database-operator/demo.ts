/**
 * The demo: a local control plane (etcd, kube-apiserver, kube-controller-manager, simulated pods),
 * the backup service, and two replicas of the Database operator (separate processes, leader
 * election on). Applies sample Databases, shows them converge live, scales one, deletes one
 * (backup first), prints a metrics summary, and keeps running until Ctrl-C.
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx examples/database-operator/demo.ts [--once]
 *   (or scripts/demo.sh; the condition resolves 'operator-runtime' to src/ here and in the replicas)
 *
 * `--once` runs the same story unattended and exits 0 only if every step converged.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TestEnv, freePort, kubectl, readManifests } from 'operator-runtime/testing';
import { BackupService } from './testing/backup-service.js';
import type { Database } from './src/database.js';

const once = process.argv.includes('--once');
const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));
const OPERATOR_NS = 'database-operator-system';
const STEP_TIMEOUT_MS = Number(process.env.DEMO_STEP_TIMEOUT_MS ?? 90_000);
const isTty = process.stdout.isTTY === true && !once;

function say(line: string): void {
  console.log(`\n▶ ${line}`);
}

const started = performance.now();
const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(1)}s`;

say('starting the local control plane (etcd, kube-apiserver, kube-controller-manager, simulated kubelet)');
const env = await TestEnv.start({
  crds: await readManifests(new URL('./config/crd.yaml', import.meta.url)),
  controllerManager: true,
  simulatePods: { readyDelayMs: 1500 },
});
const backups = new BackupService({ backupDurationMs: 3000 });
await backups.start();
const replicas: { name: string; child: ChildProcess; metricsPort: number; consolePort: number }[] = [];
let exitCode = 0;

async function shutdown(): Promise<void> {
  for (const r of replicas) r.child.kill('SIGTERM');
  await Promise.all(
    replicas.map(
      (r) =>
        new Promise<void>((resolve) => (r.child.exitCode !== null ? resolve() : r.child.once('exit', () => resolve()))),
    ),
  );
  await backups.stop();
  await env.stop();
}
process.once('SIGINT', () => void shutdown().then(() => process.exit(exitCode)));
process.once('SIGTERM', () => void shutdown().then(() => process.exit(exitCode)));

const k = (...args: string[]): Promise<string> => kubectl(env.kubeconfigPath, args);

async function databases(): Promise<Database[]> {
  return (JSON.parse(await k('get', 'databases', '-n', 'default', '-o', 'json')) as { items: Database[] }).items;
}

async function leader(): Promise<string> {
  try {
    return (
      (await k('get', 'lease', 'database-operator', '-n', OPERATOR_NS, '-o', 'jsonpath={.spec.holderIdentity}')) ||
      '(none)'
    );
  } catch {
    return '(no lease yet)';
  }
}

function table(dbs: Database[], leaderName: string): string {
  const rows = dbs.map((d) => {
    const conds = (d.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).join(',');
    return [
      d.metadata.name,
      d.spec.engine,
      String(d.spec.replicas),
      String(d.status?.readyReplicas ?? 0),
      d.status?.phase ?? '-',
      d.metadata.deletionTimestamp ? 'deleting' : '',
      conds,
    ];
  });
  const header = ['NAME', 'ENGINE', 'REPLICAS', 'READY', 'PHASE', '', 'CONDITIONS'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]): string => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [`leader: ${leaderName}   (t=${elapsed()})`, fmt(header), ...rows.map(fmt)].join('\n');
}

/** Shows the table until `done(dbs)` holds; redraws in place on a terminal, prints changes otherwise. */
async function watchUntil(what: string, done: (dbs: Database[]) => boolean): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  let last = '';
  for (;;) {
    const dbs = await databases();
    const text = table(dbs, await leader());
    const body = text.split('\n').slice(1).join('\n');
    if (isTty) process.stdout.write(`\x1b[s${text}\n\x1b[u`);
    else if (body !== last) console.log(text);
    last = body;
    if (done(dbs)) {
      if (isTty) process.stdout.write(`${text}\n`);
      console.log(`✔ ${what} (${elapsed()})`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

const allReady = (dbs: Database[]): boolean =>
  dbs.length > 0 &&
  dbs.every(
    (d) =>
      d.status?.phase === 'Ready' &&
      d.status.observedGeneration === d.metadata.generation &&
      d.status.readyReplicas === d.spec.replicas,
  );

async function startReplica(name: string): Promise<void> {
  const metricsPort = await freePort();
  const consolePort = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', here('./src/main.ts')], {
    env: {
      ...process.env,
      KUBECONFIG: env.kubeconfigPath,
      BACKUP_SERVICE_URL: backups.url,
      LEADER_ELECTION_NAMESPACE: OPERATOR_NS,
      POD_NAME: name,
      METRICS_PORT: String(metricsPort),
      CONSOLE_PORT: String(consolePort),
      HEALTH_PORT: String(metricsPort),
      BIND_HOST: '127.0.0.1',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  replicas.push({ name, child, metricsPort, consolePort });
}

/** Each replica serves its own console; the leader's shows the reconciles. */
function consoleUrls(): string {
  return `operator console (open in a browser): ${replicas.map((r) => `${r.name} http://127.0.0.1:${r.consolePort}/`).join('  ')}`;
}

async function metricsSummary(): Promise<string> {
  const lines: string[] = [];
  for (const r of replicas) {
    try {
      const text = await (await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`)).text();
      const sum = (re: RegExp): number => [...text.matchAll(re)].reduce((s, m) => s + Number(m[1]), 0);
      const reconciles = sum(/^controller_runtime_reconcile_total\{[^}]*\} (\S+)$/gm);
      const errors = sum(/^controller_runtime_reconcile_errors_total\{[^}]*\} (\S+)$/gm);
      const writes = sum(/^rest_client_requests_total\{[^}]*method="(?:POST|PUT|PATCH|DELETE)"[^}]*\} (\S+)$/gm);
      const reads = sum(/^rest_client_requests_total\{[^}]*method="GET"[^}]*\} (\S+)$/gm);
      const isLeader = /^leader_election_master_status\{[^}]*\} 1$/m.test(text);
      const rss = /^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1];
      lines.push(
        `${r.name}${isLeader ? ' (leader)' : ' (standby)'}: reconciles ${reconciles}, reconcile errors ${errors}, API writes ${writes}, API reads ${reads}, RSS ${rss ? (Number(rss) / 2 ** 20).toFixed(0) : '?'} MiB`,
      );
    } catch (err) {
      lines.push(`${r.name}: metrics unavailable (${String(err)})`);
    }
  }
  const b = backups.backups();
  lines.push(`backup service: ${b.length} backup(s), ${b.filter((x) => x.state === 'completed').length} completed`);
  return lines.join('\n');
}

try {
  console.log(`control plane ready at ${env.server} (${elapsed()}); backup service at ${backups.url}`);
  await k('create', 'namespace', OPERATOR_NS);
  say('starting two operator replicas (leader election on Lease database-operator)');
  await startReplica('replica-a');
  await startReplica('replica-b');

  console.log(consoleUrls());

  say('applying sample Databases');
  console.log(await k('apply', '-f', here('./config/samples.yaml')));
  await watchUntil('every Database is Ready', allReady);

  say('scaling "sessions" from 1 to 3 replicas');
  await k('patch', 'database', 'sessions', '-n', 'default', '--type=merge', '-p', '{"spec":{"replicas":3}}');
  await watchUntil(
    'sessions has 3 ready replicas',
    (dbs) => allReady(dbs) && dbs.find((d) => d.metadata.name === 'sessions')?.status?.readyReplicas === 3,
  );

  say('deleting "analytics": the operator backs it up first, then releases its finalizer');
  await k('delete', 'database', 'analytics', '-n', 'default', '--wait=false');
  await watchUntil('analytics is gone after its backup', (dbs) => !dbs.some((d) => d.metadata.name === 'analytics'));
  const analyticsBackups = backups.backups().filter((b) => b.database === 'default/analytics');
  if (analyticsBackups.length !== 1 || analyticsBackups[0]!.state !== 'completed')
    throw new Error(`expected one completed backup of analytics, got ${JSON.stringify(analyticsBackups)}`);

  say('metrics summary');
  console.log(await metricsSummary());
  console.log(
    `\nevents:\n${await k('get', 'events', '-n', 'default', '--field-selector', 'involvedObject.kind=Database', '--sort-by=.lastTimestamp')}`,
  );
  console.log(`✔ demo converged in ${elapsed()}`);
} catch (err) {
  exitCode = 1;
  console.error(`✘ ${err instanceof Error ? err.message : String(err)}`);
}

if (once) {
  await shutdown();
  process.exit(exitCode);
} else {
  console.log(
    `\nThe cluster keeps running. Try:\n  export KUBECONFIG=${env.kubeconfigPath}\n  kubectl get databases -w\n${consoleUrls()}\nCtrl-C stops everything.`,
  );
  await new Promise(() => {}); // until a signal
}
