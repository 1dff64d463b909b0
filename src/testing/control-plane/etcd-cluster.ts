/**
 * The etcd of a TestEnv: one member exactly as before, or a 3-member cluster on one machine for
 * chaos tests. Member i listens on its own loopback address 127.0.0.1i and runs as its own system
 * user `orchaos-etcd<i>`, so iptables' owner match can cut its peer traffic while kube-apiserver
 * (root) still reaches its client port.
 */
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { request } from 'undici';
import { OperatorRuntimeError } from '../../core/errors.js';
import { freePort } from './free-port.js';
import { TaggedOutputRules } from './iptables.js';
import { ManagedProcess } from './managed-process.js';
import { ensureSystemUser, type SystemUser } from './system-users.js';

const run = promisify(execFile);

/** One member: root, 127.0.0.1, as TestEnv always ran etcd. @defaultValue 1 */
export const DEFAULT_ETCD_MEMBERS = 1;

export interface EtcdClusterOptions {
  readonly etcdBinary: string;
  /** The env's folder; member data dirs and logs go inside it. */
  readonly dir: string;
  /** 1 (root, 127.0.0.1, as TestEnv always did) or 3 (own users and addresses). @defaultValue {@link DEFAULT_ETCD_MEMBERS} */
  readonly members?: number;
  /** Tags iptables rules and names the cluster token; letters, digits, `-_.` only. */
  readonly id: string;
  readonly startTimeoutMs: number;
}

/** Prefix of the system users the members of a multi-member cluster run as (`orchaos-etcd1`…). */
export const ETCD_MEMBER_USER_PREFIX = 'orchaos-etcd';

export interface EtcdMember {
  /** 1-based, as in `partitionEtcdMember(i)`. */
  readonly index: number;
  readonly name: string;
  readonly host: string;
  readonly clientUrl: string;
  readonly clientPort: number;
  readonly peerUrl: string;
  readonly peerPort: number;
  /** Undefined for the single root member. */
  readonly user: SystemUser | undefined;
  readonly process: ManagedProcess;
}

/** One member's answer to the Maintenance/Status RPC. */
export interface EtcdMemberStatus {
  readonly index: number;
  readonly memberId: string;
  /** Member id of the leader this member follows; `'0'` when it knows none. */
  readonly leaderId: string;
  readonly revision: number;
  readonly raftTerm: number;
  readonly raftIndex: number;
}

export class EtcdClusterError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_ENV_ETCD';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_TEST_ENV_ETCD', message, options);
  }
}

const STATUS_TIMEOUT_MS = 1000;

export class EtcdCluster {
  private readonly rules: TaggedOutputRules;
  private stopped = false;
  /** Deletes our rules if the process exits with a partition in place (a test that never stopped its env). */
  private readonly onExit = (): void => this.rules.removeAllSync();

  private constructor(
    readonly members: readonly EtcdMember[],
    private readonly startTimeoutMs: number,
    id: string,
  ) {
    this.rules = new TaggedOutputRules(id);
  }

  /** Picks addresses, ports and users and prepares data dirs; starts nothing. */
  static async create(options: EtcdClusterOptions): Promise<EtcdCluster> {
    const count = options.members ?? DEFAULT_ETCD_MEMBERS;
    if (count !== 1 && count !== 3) throw new EtcdClusterError(`etcdMembers must be 1 or 3, got ${count}`);
    if (count === 1) {
      const clientPort = await freePort();
      const peerPort = await freePort();
      const host = '127.0.0.1';
      const member: Omit<EtcdMember, 'process'> = memberAt(1, 'default', host, clientPort, peerPort, undefined);
      const proc = new ManagedProcess({
        name: 'etcd',
        command: options.etcdBinary,
        logFile: join(options.dir, 'etcd.log'),
        args: memberArgs(member, join(options.dir, 'etcd-data'), `default=${member.peerUrl}`, undefined),
      });
      return new EtcdCluster([{ ...member, process: proc }], options.startTimeoutMs, options.id);
    }

    // Other envs' members may run as the same users; their folders must stay traversable to them.
    await chmod(options.dir, 0o711);
    const specs: Omit<EtcdMember, 'process'>[] = [];
    for (let i = 1; i <= count; i++) {
      const host = `127.0.0.1${i}`;
      const user = await ensureSystemUser(`${ETCD_MEMBER_USER_PREFIX}${i}`);
      specs.push(memberAt(i, `member${i}`, host, await freePort(host), await freePort(host), user));
    }
    const initialCluster = specs.map((m) => `${m.name}=${m.peerUrl}`).join(',');
    const members: EtcdMember[] = [];
    for (const spec of specs) {
      const dataDir = join(options.dir, `etcd-${spec.index}`);
      await mkdir(dataDir, { mode: 0o700 });
      await chown(dataDir, spec.user!.uid, spec.user!.gid);
      const proc = new ManagedProcess({
        name: `etcd-${spec.index}`,
        command: options.etcdBinary,
        logFile: join(options.dir, `etcd-${spec.index}.log`),
        args: memberArgs(spec, join(dataDir, 'data'), initialCluster, options.id),
        user: spec.user!,
      });
      members.push({ ...spec, process: proc });
    }
    return new EtcdCluster(members, options.startTimeoutMs, options.id);
  }

  /** Client URLs of every member, in member order. */
  get endpoints(): string[] {
    return this.members.map((m) => m.clientUrl);
  }

  /** Starts every member and waits until each reports healthy (a multi-member cluster has a leader). */
  async start(): Promise<void> {
    for (const m of this.members) m.process.start();
    await Promise.all(this.members.map((m) => this.waitHealthy(m)));
  }

  /** Heals partitions, then stops every member (SIGTERM, SIGKILL after a grace period). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      if (this.members.length > 1) await this.heal();
    } finally {
      // A terminated leader first tries to hand over leadership, which stalls for the whole grace
      // period when its peers stop too; the data is thrown away, so a short grace is enough.
      const graceMs = this.members.length > 1 ? 500 : undefined;
      await Promise.all(this.members.map((m) => m.process.stop(graceMs)));
    }
  }

  pids(): number[] {
    return this.members.filter((m) => m.process.running).map((m) => m.process.pid!);
  }

  member(index: number): EtcdMember {
    const m = this.members[index - 1];
    if (!m || !Number.isInteger(index))
      throw new EtcdClusterError(`no etcd member ${index} (members are 1..${this.members.length})`);
    return m;
  }

  /** SIGSTOP one member, or all when `index` is omitted. */
  pause(index?: number): void {
    for (const m of index === undefined ? this.members : [this.member(index)]) m.process.pause();
  }

  resume(index?: number): void {
    for (const m of index === undefined ? this.members : [this.member(index)]) m.process.resume();
  }

  /** kill -9 a member; resolves once it has exited. */
  async kill(index: number): Promise<void> {
    const m = this.member(index);
    m.process.killGroupNow('SIGKILL');
    await m.process.waitForExit();
  }

  /** Starts a member again on its data dir (it rejoins as the same member); resolves when healthy. */
  async restart(index: number): Promise<void> {
    const m = this.member(index);
    if (m.process.running) await m.process.stop();
    m.process.start();
    await this.waitHealthy(m);
  }

  /**
   * Cuts member `index` off from every other member in both directions, with rules on the
   * members' own users' TCP packets. Client ports stay open, so kube-apiserver keeps reaching the
   * cut-off member.
   * - Their dials to its peer port, and its answers from that port: dropped (they time out).
   * - Its dials to their peer ports: rejected with a TCP reset to itself. Dropping is not enough:
   *   the others' answers on connections it dialed cannot be matched (loopback dials leave from
   *   127.0.0.1, not 127.0.0.1i), and raft streams carry the leader's messages on exactly those
   *   answers, so a dropped-only cut leaked heartbeats. A reset on its first ack kills each such
   *   connection, and it cannot dial again.
   * - Then every established peer connection is killed (`ss -K`): data the leader had already
   *   written on a stream the cut member dialed would otherwise still reach it before its ack is
   *   reset (seen under load: the cut member briefly followed the new leader). The two healthy
   *   members redial each other within milliseconds.
   */
  async partition(index: number): Promise<void> {
    if (this.members.length < 2) throw new EtcdClusterError('partitionEtcdMember needs etcdMembers: 3');
    const cut = this.member(index);
    process.removeListener('exit', this.onExit);
    process.once('exit', this.onExit);
    for (const other of this.members) {
      if (other === cut) continue;
      await this.rules.block({
        uid: cut.user!.uid,
        destination: other.host,
        destinationPort: other.peerPort,
        action: 'reset',
      });
      await this.rules.block({ uid: other.user!.uid, destination: cut.host, destinationPort: cut.peerPort });
    }
    await this.rules.block({ uid: cut.user!.uid, sourcePort: cut.peerPort });
    await killPeerConnections(this.members.map((m) => m.peerPort));
  }

  /** Deletes exactly this cluster's iptables rules; returns how many there were. */
  async heal(): Promise<number> {
    if (this.members.length < 2) return 0;
    const removed = await this.rules.removeAll();
    process.removeListener('exit', this.onExit);
    return removed;
  }

  /** The iptables rules this cluster has in place (`iptables -S` lines). */
  async partitionRules(): Promise<string[]> {
    return this.members.length < 2 ? [] : this.rules.list();
  }

  /** Status of every member that answers within a second (a killed or paused one does not). */
  async statuses(): Promise<EtcdMemberStatus[]> {
    const answers = await Promise.all(
      this.members.map(async (m) => {
        if (!m.process.running) return undefined;
        try {
          return await memberStatus(m);
        } catch {
          return undefined;
        }
      }),
    );
    return answers.filter((s): s is EtcdMemberStatus => s !== undefined);
  }

  /**
   * The member a majority of members follow as leader, or undefined while there is none (during
   * an election, or when a cut-off old leader is the only one still claiming it).
   */
  async leader(): Promise<number | undefined> {
    const statuses = await this.statuses();
    const votes = new Map<string, number>();
    for (const s of statuses) if (s.leaderId !== '0') votes.set(s.leaderId, (votes.get(s.leaderId) ?? 0) + 1);
    const quorum = Math.floor(this.members.length / 2) + 1;
    for (const [id, n] of votes) {
      const leader = statuses.find((s) => s.memberId === id);
      if (n >= quorum && leader) return leader.index;
    }
    return undefined;
  }

  /** etcd's current revision: the highest any member reports. */
  async revision(): Promise<number> {
    const statuses = await this.statuses();
    if (statuses.length === 0) throw new EtcdClusterError('no etcd member answered a status request');
    return Math.max(...statuses.map((s) => s.revision));
  }

  /**
   * Compacts at `revision` (physically), through a member that follows a leader, so a cut-off
   * member cannot make it hang.
   */
  async compact(revision: number): Promise<void> {
    const statuses = await this.statuses();
    const leaderId = statuses.find((s) => s.leaderId !== '0')?.leaderId;
    const via = statuses.find((s) => s.memberId === leaderId) ?? statuses[0];
    if (!via) throw new EtcdClusterError('no etcd member answered a status request');
    await gateway(this.member(via.index), '/v3/kv/compaction', { revision: String(revision), physical: true }, 30_000);
  }

  private async waitHealthy(m: EtcdMember): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    let lastError: unknown;
    for (;;) {
      if (this.stopped) throw new EtcdClusterError(`stopped while waiting for ${m.process.options.name} to be healthy`);
      if (!m.process.running)
        throw m.process.failure(`exited (${JSON.stringify(m.process.exit)}) while waiting for it to be healthy`);
      try {
        const res = await request(`${m.clientUrl}/health`, { headersTimeout: 2000, bodyTimeout: 2000 });
        const body = (await res.body.json()) as { health?: string };
        if (res.statusCode === 200 && body.health === 'true') return;
      } catch (err) {
        lastError = err;
      }
      if (Date.now() > deadline) {
        const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
        throw m.process.failure(`timed out after ${this.startTimeoutMs} ms waiting for it to be healthy${detail}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Kills established TCP connections from or to any of these ports (needs INET_DIAG_DESTROY, as on Debian's kernels). */
async function killPeerConnections(ports: readonly number[]): Promise<void> {
  const filter = ports.flatMap((p) => [`sport = :${p}`, `dport = :${p}`]).join(' or ');
  try {
    await run('ss', ['-K', '-t', 'state', 'established', `( ${filter} )`]);
  } catch (err) {
    throw new EtcdClusterError(`could not kill the peer connections of a partitioned member (ss -K): ${String(err)}`);
  }
}

function memberAt(
  index: number,
  name: string,
  host: string,
  clientPort: number,
  peerPort: number,
  user: SystemUser | undefined,
): Omit<EtcdMember, 'process'> {
  return {
    index,
    name,
    host,
    clientPort,
    peerPort,
    user,
    clientUrl: `http://${host}:${clientPort}`,
    peerUrl: `http://${host}:${peerPort}`,
  };
}

function memberArgs(
  m: Omit<EtcdMember, 'process'>,
  dataDir: string,
  initialCluster: string,
  token: string | undefined,
): string[] {
  return [
    `--name=${m.name}`,
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${m.clientUrl}`,
    `--advertise-client-urls=${m.clientUrl}`,
    `--listen-peer-urls=${m.peerUrl}`,
    `--initial-advertise-peer-urls=${m.peerUrl}`,
    `--initial-cluster=${initialCluster}`,
    ...(token ? [`--initial-cluster-token=${token}`, '--initial-cluster-state=new'] : []),
    '--listen-metrics-urls=',
  ];
}

async function memberStatus(m: EtcdMember): Promise<EtcdMemberStatus> {
  const body = (await gateway(m, '/v3/maintenance/status', {}, STATUS_TIMEOUT_MS)) as {
    header?: { member_id?: string; revision?: string; raft_term?: string };
    leader?: string;
    raftIndex?: string;
    raftTerm?: string;
  };
  return {
    index: m.index,
    memberId: body.header?.member_id ?? '0',
    leaderId: body.leader ?? '0',
    revision: Number(body.header?.revision ?? 0),
    raftTerm: Number(body.raftTerm ?? 0),
    raftIndex: Number(body.raftIndex ?? 0),
  };
}

/** One call of etcd's JSON gRPC gateway (int64 fields travel as strings). */
async function gateway(m: EtcdMember, path: string, body: unknown, timeoutMs: number): Promise<unknown> {
  const res = await request(`${m.clientUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new EtcdClusterError(`etcd ${m.name} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as unknown;
}
