/**
 * The chaos bed for the reference Database operator: a 3-member etcd control plane with
 * kube-controller-manager and simulated pods, the backup service, a fault proxy in front of
 * kube-apiserver for the operators' connection, and N operator replicas as real processes with
 * leader election. Replicas record reconcile start/end and status writes to a shared log the
 * invariants are checked against.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from 'operator-runtime';
import { TestEnv, freePort, readManifests } from 'operator-runtime/testing';
import { FaultProxy, ManagedProcess } from 'operator-runtime/testing/chaos';
import { BackupService } from '../../examples/database-operator/src/backup-service.js';

export const OPERATOR_NS = 'database-operator-system';
export const DATABASE_PREFIX = '/registry/example.com/databases/';
const MAIN = fileURLToPath(new URL('../../examples/database-operator/src/main.ts', import.meta.url));
const CRD = new URL('../../examples/database-operator/config/crd.yaml', import.meta.url);

export interface OperatorBedOptions {
  /** @defaultValue 2 */
  readonly replicas?: number;
  /** Short by default so failover scenarios stay quick; the defaults' ratios are kept. */
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  /** kube-apiserver's watch cache (off makes an etcd compaction answer 410 to every watch). @defaultValue true */
  readonly watchCache?: boolean;
}

export interface ReplicaRecord {
  readonly t: number;
  readonly replica: string;
  readonly phase: 'start' | 'end' | 'status-write';
  readonly key: string;
  readonly read?: string;
  readonly written?: string;
}

interface Replica {
  readonly name: string;
  readonly process: ManagedProcess;
  readonly metricsPort: number;
  /** Killed on purpose: not restarted until `restart()` says so. */
  held: boolean;
}

export class OperatorBed {
  readonly replicas: Replica[] = [];
  /** When each replica was last killed (its open reconciles end there). */
  readonly killedAt = new Map<string, number>();
  /** Restarts after a replica exited on its own (e.g. lost leadership: it exits non-zero by design). */
  supervisorRestarts = 0;
  private stopping = false;

  private constructor(
    readonly env: TestEnv,
    readonly proxy: FaultProxy,
    readonly backups: BackupService,
    readonly admin: KubeClient,
    readonly dir: string,
    private readonly options: OperatorBedOptions,
  ) {}

  static async start(options: OperatorBedOptions = {}): Promise<OperatorBed> {
    const env = await TestEnv.start({
      etcdMembers: 3,
      crds: await readManifests(CRD),
      controllerManager: true,
      simulatePods: { readyDelayMs: 200 },
      ...(options.watchCache === false ? { watchCache: false } : {}),
    });
    const cleanups: (() => Promise<unknown>)[] = [() => env.stop()];
    try {
      const dir = await mkdtemp(join(tmpdir(), 'operator-chaos-'));
      cleanups.unshift(() => rm(dir, { recursive: true, force: true }));
      const proxy = await FaultProxy.start({ upstream: env });
      cleanups.unshift(() => proxy.close());
      await proxy.writeKubeconfig(join(dir, 'operator.kubeconfig'));
      const backups = new BackupService({ backupDurationMs: 1000 });
      await backups.start();
      cleanups.unshift(() => backups.stop());
      const admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPERATOR_NS } });
      const bed = new OperatorBed(env, proxy, backups, admin, dir, options);
      for (let i = 0; i < (options.replicas ?? 2); i++) await bed.addReplica(`replica-${i}`);
      return bed;
    } catch (err) {
      for (const c of cleanups) await c().catch(() => undefined);
      throw err;
    }
  }

  get reconcileLog(): string {
    return join(this.dir, 'reconciles.jsonl');
  }

  /** Kills a replica's process group with `signal` and waits for it to exit. */
  async kill(replica: string, signal: NodeJS.Signals): Promise<void> {
    const r = this.replica(replica);
    r.held = true;
    this.killedAt.set(replica, Date.now());
    if (signal === 'SIGKILL') {
      r.process.killGroupNow('SIGKILL');
      await r.process.waitForExit();
    } else {
      await r.process.stop(30_000);
    }
  }

  /** Starts a killed replica again (same name, same log files); a no-op if it runs. */
  async restart(replica: string): Promise<void> {
    const r = this.replica(replica);
    r.held = false;
    if (!r.process.running) this.run(r);
  }

  /** The identity the Lease names, if any. */
  async leader(): Promise<string | undefined> {
    try {
      const lease = await this.admin.get<{ spec?: { holderIdentity?: string } }>({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' }, 'database-operator', { namespace: OPERATOR_NS });
      return lease.spec?.holderIdentity || undefined;
    } catch {
      return undefined;
    }
  }

  async waitForLeader(options: { not?: string; timeoutMs?: number } = {}): Promise<string> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const leader = await this.leader();
      if (leader && leader !== options.not && this.replica(leader).process.running) return leader;
      if (Date.now() > deadline) throw new Error(`no leader${options.not ? ` other than ${options.not}` : ''} within ${options.timeoutMs ?? 60_000} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async records(): Promise<ReplicaRecord[]> {
    try {
      return (await readFile(this.reconcileLog, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as ReplicaRecord);
    } catch {
      return [];
    }
  }

  /** Everything the replicas wrote to stdout/stderr. */
  async logs(): Promise<string> {
    const parts = await Promise.all(this.replicas.map((r) => readFile(r.process.options.logFile, 'utf8').catch(() => '')));
    return parts.join('\n');
  }

  /** Metrics text of a running replica. */
  async metrics(replica: string): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.replica(replica).metricsPort}/metrics`);
    return res.text();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.replicas.map((r) => r.process.stop(5_000)));
    await this.admin.close().catch(() => undefined);
    await this.proxy.close().catch(() => undefined);
    await this.backups.stop().catch(() => undefined);
    await this.env.stop();
    // CHAOS_KEEP=1 keeps the replicas' logs and records for a post-mortem.
    if (process.env.CHAOS_KEEP === '1') console.log(`# chaos bed files kept in ${this.dir}`);
    else await rm(this.dir, { recursive: true, force: true });
  }

  private replica(name: string): Replica {
    const r = this.replicas.find((x) => x.name === name);
    if (!r) throw new Error(`no replica ${name}`);
    return r;
  }

  private async addReplica(name: string): Promise<void> {
    const metricsPort = await freePort();
    const o = this.options;
    const process_ = new ManagedProcess({
      name,
      command: process.execPath,
      args: ['--import', 'tsx', MAIN],
      logFile: join(this.dir, `${name}.log`),
      env: {
        ...process.env,
        KUBECONFIG: join(this.dir, 'operator.kubeconfig'),
        BACKUP_SERVICE_URL: this.backups.url,
        LEADER_ELECTION_NAMESPACE: OPERATOR_NS,
        POD_NAME: name,
        METRICS_PORT: String(metricsPort),
        HEALTH_PORT: String(metricsPort),
        BIND_HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        RECONCILE_LOG: this.reconcileLog,
        LEASE_DURATION_MS: String(o.leaseDurationMs ?? 6_000),
        RENEW_DEADLINE_MS: String(o.renewDeadlineMs ?? 4_000),
        RETRY_PERIOD_MS: String(o.retryPeriodMs ?? 1_000),
      },
    });
    const replica: Replica = { name, process: process_, metricsPort, held: false };
    this.replicas.push(replica);
    this.run(replica);
  }

  /**
   * Starts the replica and, like a Deployment's restartPolicy Always, starts it again a second
   * after it exits on its own — a replica that lost its Lease exits non-zero by design.
   */
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
