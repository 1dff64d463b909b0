/**
 * The test bed of the reference Database operator, shared by the chaos scenarios and the sharding
 * smoke and scale runs: a TestEnv (1 or 3 etcd members, optionally kube-controller-manager with
 * simulated pods), the backup service, optionally a fault proxy in front of kube-apiserver, and N
 * replicas of the operator as real processes (testing/recorded-main.ts under tsx). Each replica
 * reaches the API server (or the fault proxy) through its own TCP relay that can be partitioned,
 * and appends its records (testing/replica-records.ts) to its own file. Replicas are added, killed,
 * restarted, partitioned and healed by name; one that exits on its own is started again, as a
 * Deployment would; `records()` merges every replica's records.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify as toYaml } from 'yaml';
import { KubeClient } from 'operator-runtime';
import { TestEnv, freePort, readManifests, type KubeconfigObject } from 'operator-runtime/testing';
import { FaultProxy, ManagedProcess } from 'operator-runtime/testing/chaos';
import { TcpProxy } from '../../../src/cache/testing/tcp-proxy.js';
import { LEASE_NAME } from '../src/operator.js';
import { BackupService } from './backup-service.js';
import { readRecords, type ReplicaRecord } from './replica-records.js';

export const OPERATOR_NAMESPACE = 'database-operator-system';
/** The ring of a sharded bed (SHARDING_RING). */
export const RING = 'database-operator';
/** etcd's key prefix of Databases (the audit's). */
export const DATABASE_PREFIX = '/registry/example.com/databases/';
const MAIN = fileURLToPath(new URL('./recorded-main.ts', import.meta.url));
const CRD = new URL('../config/crd.yaml', import.meta.url);

export const DEFAULT_BED_LEASE_DURATION_MS = 6_000;
export const DEFAULT_BED_RENEW_DEADLINE_MS = 4_000;
export const DEFAULT_BED_RETRY_PERIOD_MS = 1_000;
/** @defaultValue 500 ms */
export const DEFAULT_BED_BACKUP_DURATION_MS = 500;

export interface OperatorBedOptions {
  /** Replicas `start()` adds (`replica-0`, `replica-1`…); more come from `addReplica`. @defaultValue 0 */
  readonly replicas?: number;
  /** @defaultValue 1 */
  readonly etcdMembers?: 1 | 3;
  /**
   * kube-controller-manager and simulated pods, so StatefulSets get ready replicas and Databases
   * reach Ready (and deleted ones are garbage-collected). Off, Databases settle in Provisioning.
   * @defaultValue false
   */
  readonly controllerManager?: boolean;
  /** kube-apiserver's watch cache (off makes an etcd compaction answer 410 to every watch). @defaultValue true */
  readonly watchCache?: boolean;
  /** A fault proxy (`bed.proxy`) between every replica's relay and kube-apiserver, for injected API faults. @defaultValue false */
  readonly faultProxy?: boolean;
  /** Leader election (LEADER_ELECTION_NAMESPACE) on every replica. @defaultValue true */
  readonly leaderElection?: boolean;
  /** Run the replicas sharded (SHARDING_RING; the sharder is leader-only, so leader election too). @defaultValue false */
  readonly sharding?: boolean;
  /** Leader and membership Lease timings handed to every replica; short by default so failovers stay quick. */
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  /** How long a backup takes. @defaultValue {@link DEFAULT_BED_BACKUP_DURATION_MS} */
  readonly backupDurationMs?: number;
  /** More environment for every replica (e.g. SHARDING_MODE). */
  readonly replicaEnv?: Readonly<Record<string, string>>;
}

interface Replica {
  readonly name: string;
  readonly process: ManagedProcess;
  readonly link: TcpProxy;
  readonly metricsPort: number;
  readonly recordFile: string;
  /** Killed or stopped on purpose: not restarted until `addReplica` names it again. */
  held: boolean;
}

export class OperatorBed {
  private readonly replicas = new Map<string, Replica>();
  /** Restarts of replicas that exited on their own (e.g. after losing their Lease, by design). */
  supervisorRestarts = 0;
  private stopping = false;

  private constructor(
    readonly env: TestEnv,
    private readonly faultProxy: FaultProxy | undefined,
    readonly backups: BackupService,
    readonly admin: KubeClient,
    readonly dir: string,
    readonly options: OperatorBedOptions,
  ) {}

  static async start(options: OperatorBedOptions = {}): Promise<OperatorBed> {
    const env = await TestEnv.start({
      crds: await readManifests(CRD),
      // No periodic etcd compaction (kube-apiserver's default is every 5 min): the audit replays the
      // whole history of a run that takes longer.
      apiServerFlags: ['--etcd-compaction-interval=0'],
      etcdMembers: options.etcdMembers ?? 1,
      controllerManager: options.controllerManager ?? false,
      simulatePods: options.controllerManager ? { readyDelayMs: 200 } : undefined,
      watchCache: options.watchCache,
    });
    const cleanups: (() => Promise<unknown>)[] = [() => env.stop()];
    try {
      const dir = await mkdtemp(join(tmpdir(), 'operator-bed-'));
      cleanups.unshift(() => rm(dir, { recursive: true, force: true }));
      const proxy = options.faultProxy ? await FaultProxy.start({ upstream: env }) : undefined;
      if (proxy) cleanups.unshift(() => proxy.close());
      const backups = new BackupService({
        backupDurationMs: options.backupDurationMs ?? DEFAULT_BED_BACKUP_DURATION_MS,
      });
      await backups.start();
      cleanups.unshift(() => backups.stop());
      const admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
      cleanups.unshift(() => admin.close());
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPERATOR_NAMESPACE } });
      const bed = new OperatorBed(env, proxy, backups, admin, dir, options);
      await Promise.all(Array.from({ length: options.replicas ?? 0 }, (_, i) => bed.addReplica(`replica-${i}`)));
      return bed;
    } catch (err) {
      for (const c of cleanups) await c().catch(() => undefined);
      throw err;
    }
  }

  /** The fault proxy in front of kube-apiserver (with `faultProxy: true`). */
  get proxy(): FaultProxy {
    if (!this.faultProxy) throw new Error('this bed has no fault proxy: start it with faultProxy: true');
    return this.faultProxy;
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

  /**
   * Starts a new replica, or starts a held one of that name again (same log and record files, its
   * link healed), and waits until its /metrics answers.
   */
  async addReplica(name: string): Promise<void> {
    const existing = this.replicas.get(name);
    if (existing) {
      existing.held = false;
      existing.link.heal();
      if (!existing.process.running) this.run(existing);
      await this.waitForMetrics(existing);
      return;
    }
    const upstream = this.faultProxy ?? { url: this.env.server, kubeconfig: this.env.kubeconfig };
    const target = new URL(upstream.url);
    const link = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    const kubeconfigFile = join(this.dir, `${name}.kubeconfig`);
    const kubeconfig: KubeconfigObject = structuredClone(upstream.kubeconfig);
    for (const c of kubeconfig.clusters) c.cluster.server = `https://127.0.0.1:${link.port}`;
    await writeFile(kubeconfigFile, toYaml(kubeconfig), { mode: 0o600 });
    const metricsPort = await freePort();
    const recordFile = join(this.dir, `${name}.records.jsonl`);
    const o = this.options;
    const leaderElection = (o.leaderElection ?? true) || o.sharding === true;
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
        LEADER_ELECTION_NAMESPACE: leaderElection ? OPERATOR_NAMESPACE : '',
        SHARDING_RING: o.sharding ? RING : '',
        SHARDING_NAMESPACE: o.sharding ? OPERATOR_NAMESPACE : '',
        ...o.replicaEnv,
      },
    });
    const replica: Replica = { name, process: process_, link, metricsPort, recordFile, held: false };
    this.replicas.set(name, replica);
    this.run(replica);
    await this.waitForMetrics(replica);
  }

  /**
   * Kills a replica's process group with `signal` (SIGKILL: at once; SIGTERM: a graceful stop) and
   * waits for its exit; it stays down until `addReplica` names it again. Returns when the kill began.
   */
  async kill(name: string, signal: 'SIGKILL' | 'SIGTERM'): Promise<number> {
    const r = this.replica(name);
    r.held = true;
    const at = Date.now();
    if (signal === 'SIGKILL') {
      r.process.killGroupNow('SIGKILL');
      await r.process.waitForExit();
    } else {
      await r.process.stop(30_000);
    }
    return at;
  }

  /** The identity the leader-election Lease names (the leader; the sharder when sharded), if any. */
  async leader(): Promise<string | undefined> {
    try {
      const lease = await this.admin.get<{ spec?: { holderIdentity?: string } }>(
        { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' },
        LEASE_NAME,
        { namespace: OPERATOR_NAMESPACE },
      );
      return lease.spec?.holderIdentity || undefined;
    } catch {
      return undefined;
    }
  }

  /** Waits until the Lease names a running replica (other than `not`) and returns it. */
  async waitForLeader(options: { not?: string; timeoutMs?: number } = {}): Promise<string> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const leader = await this.leader();
      if (leader && leader !== options.not && this.replicas.get(leader)?.process.running) return leader;
      if (Date.now() > deadline)
        throw new Error(`no leader${options.not ? ` other than ${options.not}` : ''} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Cuts the replica off from kube-apiserver (it keeps running): its connections go silent. */
  partition(name: string): void {
    this.replica(name).link.freeze();
  }

  /** Ends the replica's partition: its silenced connections are reset, new ones carried. */
  heal(name: string): void {
    this.replica(name).link.heal();
  }

  /** Every replica's records, merged in time order. */
  async records(): Promise<ReplicaRecord[]> {
    return readRecords([...this.replicas.values()].map((r) => r.recordFile));
  }

  /** Metrics text of a running replica. */
  async metrics(name: string): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.replica(name).metricsPort}/metrics`, {
      signal: AbortSignal.timeout(10_000),
    });
    return res.text();
  }

  /**
   * Databases the replica's caches hold (`cache_objects` of its Database informers): in its shard's
   * informer (the one whose label selector names the shard label), and in any other Database informer.
   */
  async cachedDatabases(name: string): Promise<{ shard: number; other: number }> {
    const text = await this.metrics(name);
    const database = (labels: string): boolean => /informer="[^"]* Database\b/.test(labels);
    const shard =
      metricValue(
        text,
        'cache_objects',
        (labels) => database(labels) && labels.includes('shard.operator-runtime.io/'),
      ) ?? 0;
    const other =
      metricValue(
        text,
        'cache_objects',
        (labels) => database(labels) && !labels.includes('shard.operator-runtime.io/'),
      ) ?? 0;
    return { shard, other };
  }

  /** The replica's `sharding_keys_owned` gauge (summed over its series). */
  async keysOwned(name: string): Promise<number | undefined> {
    return metricValue(await this.metrics(name), 'sharding_keys_owned', () => true);
  }

  /** Everything the replicas wrote to stdout/stderr. */
  async logs(): Promise<string> {
    const parts = await Promise.all(
      [...this.replicas.values()].map((r) => readFile(r.process.options.logFile, 'utf8').catch(() => '')),
    );
    return parts.join('\n');
  }

  logTail(name: string, lines = 20): string {
    return this.replica(name).process.logTail(lines);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.replicas.values()].map(async (r) => {
        await r.process.stop(5_000);
        await r.link.close();
      }),
    );
    await this.admin.close().catch(() => undefined);
    await this.faultProxy?.close().catch(() => undefined);
    await this.backups.stop().catch(() => undefined);
    await this.env.stop();
    // BED_KEEP=1 keeps the replicas' logs and records for a post-mortem.
    if (process.env.BED_KEEP === '1') console.log(`# operator bed files kept in ${this.dir}`);
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
        const res = await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`, {
          signal: AbortSignal.timeout(5_000),
        });
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (!replica.process.running && replica.process.exit)
        throw replica.process.failure(`replica ${replica.name} exited before serving /metrics`);
      if (Date.now() > deadline)
        throw replica.process.failure(`replica ${replica.name} did not serve /metrics within 90 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Like a Deployment's restartPolicy Always: a replica that exits on its own is started again a second later. */
  private run(replica: Replica): void {
    replica.process.start();
    void replica.process.waitForExit().then(async () => {
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
