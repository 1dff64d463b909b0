import { EtcdClusterError, type EtcdCluster, type EtcdMemberStatus } from '../control-plane/etcd-cluster.js';
import type { TestEnv } from '../control-plane/test-env.js';

/** @defaultValue 30 s: an etcd election after a partition or kill takes 1–2 s here; 30 s is a stuck cluster. */
export const DEFAULT_WAIT_FOR_ETCD_LEADER_TIMEOUT_MS = 30_000;

/**
 * The faults a chaos test injects into the etcd members of `TestEnv.start({ etcdMembers: 3 })`:
 * partitions (iptables; needs root), SIGKILL and restart, SIGSTOP and SIGCONT, and the leader
 * queries a scenario needs around them. They live apart from `TestEnv` so that the env users write
 * their tests against carries no root-only controls. Members are numbered from 1.
 */
export class EtcdFaults {
  readonly #cluster: EtcdCluster;

  constructor(env: TestEnv) {
    this.#cluster = env.etcdCluster;
  }

  /** SIGSTOP one member. */
  pauseMember(member: number): void {
    this.#cluster.pause(member);
  }

  resumeMember(member: number): void {
    this.#cluster.resume(member);
  }

  /**
   * Cuts `member` off from the other members in both directions with iptables OUTPUT rules on the
   * members' users; kube-apiserver still reaches it, as a real network partition between etcd nodes
   * would leave it. Undone by `heal()` and by the env's `stop()`.
   */
  async partitionMember(member: number): Promise<void> {
    await this.#cluster.partition(member);
  }

  /** Deletes exactly this env's iptables rules (all partitions); returns how many there were. */
  async heal(): Promise<number> {
    return this.#cluster.heal();
  }

  /** This env's iptables rules now in place, as `iptables -S OUTPUT` prints them. */
  async rules(): Promise<string[]> {
    return this.#cluster.partitionRules();
  }

  /** kill -9 one member; resolves once it has exited. */
  async killMember(member: number): Promise<void> {
    await this.#cluster.kill(member);
  }

  /** Starts a killed (or running) member again on its data dir; resolves when it is healthy. */
  async restartMember(member: number): Promise<void> {
    await this.#cluster.restart(member);
  }

  /** The member a majority of members follow as leader, or undefined during an election. */
  async leader(): Promise<number | undefined> {
    return this.#cluster.leader();
  }

  /** Status of each member that answers within a second (leader it follows, revision, raft index). */
  async statuses(): Promise<EtcdMemberStatus[]> {
    return this.#cluster.statuses();
  }

  /** Polls `leader()` every 50 ms until there is a leader (other than `not`, when given) and returns it. */
  async waitForLeader(options: { readonly not?: number; readonly timeoutMs?: number } = {}): Promise<number> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_FOR_ETCD_LEADER_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const leader = await this.#cluster.leader();
      if (leader !== undefined && leader !== options.not) return leader;
      if (Date.now() > deadline)
        throw new EtcdClusterError(
          `no etcd leader${options.not !== undefined ? ` other than member ${options.not}` : ''} after ${timeoutMs} ms`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The etcd-member faults of `env` (which must have been started with `etcdMembers: 3` for partitions). */
export function etcdFaults(env: TestEnv): EtcdFaults {
  return new EtcdFaults(env);
}
