/**
 * The sharding bed: a TestEnv, the backup service, and N replicas of the reference Database operator
 * as real processes (src/main.ts under tsx), each reaching kube-apiserver through its own
 * partitionable link and appending its reconcile records to its own file. Replicas are added, killed,
 * stopped, partitioned and healed by name; `records()` merges every replica's records.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify as toYaml } from 'yaml';
import { KubeClient } from 'operator-runtime';
import { TestEnv, freePort, readManifests } from 'operator-runtime/testing';
import { ManagedProcess } from 'operator-runtime/testing/chaos';
import { BackupService } from '../src/backup-service.js';
import { PartitionableLink } from './partitionable-link.js';
import { readRecords, type ReconcileRecord } from './reconcile-records.js';

export const OPERATOR_NAMESPACE = 'database-operator-system';
export const RING = 'database-operator';
/** The leader-election Lease of src/operator.ts (the sharder is leader-only). */
const LEADER_LEASE = 'database-operator';
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const CRD = new URL('../config/crd.yaml', import.meta.url);

export interface ShardBedOptions {
  /**
   * kube-controller-manager and simulated pods, so StatefulSets get ready replicas and Databases
   * reach Ready (and deleted ones are garbage-collected). Off, Databases settle in Provisioning.
   * @defaultValue false
   */
  readonly controllerManager?: boolean;
  /** @defaultValue 1 */
  readonly etcdMembers?: 1 | 3;
  /** Run the replicas sharded (SHARDING_RING); off, each replica is a plain, unsharded operator. @defaultValue true */
  readonly sharding?: boolean;
  /** Membership (and leader) Lease timings handed to every replica. */
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  /** More environment for every replica (e.g. SHARDING_MODE). */
  readonly replicaEnv?: Readonly<Record<string, string>>;
}

export const DEFAULT_BED_LEASE_DURATION_MS = 6_000;
export const DEFAULT_BED_RENEW_DEADLINE_MS = 4_000;
export const DEFAULT_BED_RETRY_PERIOD_MS = 1_000;

interface Replica {
  readonly name: string;
  readonly process: ManagedProcess;
  readonly link: PartitionableLink;
  readonly metricsPort: number;
  readonly recordFile: string;
  /** Killed or stopped on purpose: not restarted. */
  held: boolean;
}

export class ShardBed {
  private readonly replicas = new Map<string, Replica>();
  /**
   * When each replica's process ended — killed (the instant of the kill), or exited on its own or
   * stopped (when its exit was seen). A reconcile it left open ended there, so the records of a
   * replica restarted under the same name are never paired across processes.
   */
  readonly killedAt = new Map<string, number[]>();
  /** Restarts of replicas that exited on their own (e.g. after losing their Lease, by design). */
  supervisorRestarts = 0;
  private stopping = false;

  private constructor(
    readonly env: TestEnv,
    readonly backups: BackupService,
    readonly admin: KubeClient,
    readonly dir: string,
    readonly options: ShardBedOptions,
  ) {}

  static async start(options: ShardBedOptions = {}): Promise<ShardBed> {
    const env = await TestEnv.start({
      crds: await readManifests(CRD),
      // No periodic etcd compaction (kube-apiserver's default is every 5 min): the audit replays the
      // whole history of a run that takes longer.
      apiServerFlags: ['--etcd-compaction-interval=0'],
      ...(options.etcdMembers ? { etcdMembers: options.etcdMembers } : {}),
      ...(options.controllerManager ? { controllerManager: true, simulatePods: { readyDelayMs: 200 } } : {}),
    });
    const cleanups: (() => Promise<unknown>)[] = [() => env.stop()];
    try {
      const dir = await mkdtemp(join(tmpdir(), 'operator-sharding-'));
      cleanups.unshift(() => rm(dir, { recursive: true, force: true }));
      const backups = new BackupService({ backupDurationMs: 500 });
      await backups.start();
      cleanups.unshift(() => backups.stop());
      const admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
      cleanups.unshift(() => admin.close());
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPERATOR_NAMESPACE } });
      return new ShardBed(env, backups, admin, dir, options);
    } catch (err) {
      for (const c of cleanups) await c().catch(() => undefined);
      throw err;
    }
  }

  get leaseDurationMs(): number {
    return this.options.leaseDurationMs ?? DEFAULT_BED_LEASE_DURATION_MS;
  }

  get retryPeriodMs(): number {
    return this.options.retryPeriodMs ?? DEFAULT_BED_RETRY_PERIOD_MS;
  }

  /** Names of the replicas whose process runs now. */
  running(): string[] {
    return [...this.replicas.values()].filter((r) => r.process.running).map((r) => r.name);
  }

  /** Starts a new replica (or restarts a held one of that name) and waits until its /metrics answers. */
  async addReplica(name: string): Promise<void> {
    const existing = this.replicas.get(name);
    if (existing) {
      existing.held = false;
      existing.link.heal();
      if (!existing.process.running) this.run(existing);
      await this.waitForMetrics(existing);
      return;
    }
    const link = await PartitionableLink.start(this.env.server);
    const kubeconfigFile = join(this.dir, `${name}.kubeconfig`);
    const kubeconfig = structuredClone(this.env.kubeconfig);
    for (const c of kubeconfig.clusters) c.cluster.server = link.url;
    await writeFile(kubeconfigFile, toYaml(kubeconfig), { mode: 0o600 });
    const metricsPort = await freePort();
    const recordFile = join(this.dir, `${name}.records.jsonl`);
    const o = this.options;
    const process_ = new ManagedProcess({
      name,
      command: process.execPath,
      args: ['--import', 'tsx', MAIN],
      logFile: join(this.dir, `${name}.log`),
      env: {
        ...process.env,
        NODE_OPTIONS: `--conditions=operator-runtime-source ${process.env.NODE_OPTIONS ?? ''}`.trim(),
        KUBECONFIG: kubeconfigFile,
        BACKUP_SERVICE_URL: this.backups.url,
        POD_NAME: name,
        METRICS_PORT: String(metricsPort),
        HEALTH_PORT: String(metricsPort),
        BIND_HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        RECONCILE_LOG: recordFile,
        LEASE_DURATION_MS: String(this.leaseDurationMs),
        RENEW_DEADLINE_MS: String(o.renewDeadlineMs ?? DEFAULT_BED_RENEW_DEADLINE_MS),
        RETRY_PERIOD_MS: String(this.retryPeriodMs),
        // The sharder that assigns keys is leader-only, so a sharded replica also runs leader election.
        ...(o.sharding === false ? {} : { SHARDING_RING: RING, SHARDING_NAMESPACE: OPERATOR_NAMESPACE, LEADER_ELECTION_NAMESPACE: OPERATOR_NAMESPACE }),
        ...o.replicaEnv,
      },
    });
    const replica: Replica = { name, process: process_, link, metricsPort, recordFile, held: false };
    this.replicas.set(name, replica);
    this.run(replica);
    await this.waitForMetrics(replica);
  }

  /** Kills a replica's process group with `signal` (SIGKILL: at once; SIGTERM: a graceful stop) and waits for its exit. */
  async kill(name: string, signal: 'SIGKILL' | 'SIGTERM'): Promise<number> {
    const r = this.replica(name);
    r.held = true;
    const at = Date.now();
    if (signal === 'SIGKILL') {
      this.killedAt.set(name, [...(this.killedAt.get(name) ?? []), at]);
      r.process.killGroupNow('SIGKILL');
      await r.process.waitForExit();
    } else {
      await r.process.stop(30_000);
    }
    return at;
  }

  /** The identity the leader-election Lease names (the replica running the sharder), if any. */
  async leader(): Promise<string | undefined> {
    try {
      const lease = await this.admin.get<{ spec?: { holderIdentity?: string } }>({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' }, LEADER_LEASE, { namespace: OPERATOR_NAMESPACE });
      return lease.spec?.holderIdentity || undefined;
    } catch {
      return undefined;
    }
  }

  /** Cuts the replica off from kube-apiserver (it keeps running). */
  partition(name: string): void {
    this.replica(name).link.partition();
  }

  heal(name: string): void {
    this.replica(name).link.heal();
  }

  async records(): Promise<ReconcileRecord[]> {
    return readRecords([...this.replicas.values()].map((r) => r.recordFile));
  }

  async metrics(name: string): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.replica(name).metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
    return res.text();
  }

  /**
   * Databases the replica's caches hold (`cache_objects` of its Database informers): in its shard's
   * informer (the one whose label selector names the shard label), and in any other Database informer.
   */
  async cachedDatabases(name: string): Promise<{ shard: number; other: number }> {
    const text = await this.metrics(name);
    const database = (labels: string): boolean => /informer="[^"]* Database\b/.test(labels);
    const shard = metricValue(text, 'cache_objects', (labels) => database(labels) && labels.includes('shard.operator-runtime.io/')) ?? 0;
    const other = metricValue(text, 'cache_objects', (labels) => database(labels) && !labels.includes('shard.operator-runtime.io/')) ?? 0;
    return { shard, other };
  }

  /** The replica's `sharding_keys_owned` gauge (summed over its series). */
  async keysOwned(name: string): Promise<number | undefined> {
    return metricValue(await this.metrics(name), 'sharding_keys_owned', () => true);
  }

  /** Everything the replicas wrote to stdout/stderr. */
  async logs(): Promise<string> {
    const parts = await Promise.all([...this.replicas.values()].map((r) => readFile(r.process.options.logFile, 'utf8').catch(() => '')));
    return parts.join('\n');
  }

  logTail(name: string, lines = 20): string {
    return this.replica(name).process.logTail(lines);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.replicas.values()].map(async (r) => {
      await r.process.stop(5_000);
      await r.link.close();
    }));
    await this.admin.close().catch(() => undefined);
    await this.backups.stop().catch(() => undefined);
    await this.env.stop();
    // SHARDING_KEEP=1 keeps the replicas' logs and records for a post-mortem.
    if (process.env.SHARDING_KEEP === '1') console.log(`# sharding bed files kept in ${this.dir}`);
    else await rm(this.dir, { recursive: true, force: true });
  }

  private replica(name: string): Replica {
    const r = this.replicas.get(name);
    if (!r) throw new Error(`no replica ${name}`);
    return r;
  }

  private async waitForMetrics(replica: Replica): Promise<void> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`, { signal: AbortSignal.timeout(5_000) });
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (!replica.process.running && replica.process.exit) throw replica.process.failure(`replica ${replica.name} exited before serving /metrics`);
      if (Date.now() > deadline) throw replica.process.failure(`replica ${replica.name} did not serve /metrics within 90 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Like a Deployment's restartPolicy Always: a replica that exits on its own is started again a second later. */
  private run(replica: Replica): void {
    replica.process.start();
    void replica.process.waitForExit().then(async () => {
      this.killedAt.set(replica.name, [...(this.killedAt.get(replica.name) ?? []), Date.now()]);
      await new Promise((r) => setTimeout(r, 1_000));
      if (this.stopping || replica.held || replica.process.running) return;
      this.supervisorRestarts++;
      this.run(replica);
    });
  }
}

/** The sum of a metric's samples whose label set `labels` accepts; undefined when there is none. */
export function metricValue(text: string, name: string, labels: (labelText: string) => boolean): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name || !labels(m[2] ?? '')) continue;
    sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}
