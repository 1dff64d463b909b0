/**
 * Runs `replica.ts` processes against one Lease and reads their shared log: spawn, signal, wait for a
 * record, turn the log into leadership intervals. Used by the integration tests and the failover
 * bench. Every replica is started with a parent-death signal and is SIGKILLed by `stopAll()` and at
 * process exit, so a failing test leaves none behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Interval } from './intervals.js';

export const EXIT_BAD_OPTIONS = 2;
export const EXIT_LEADERSHIP_LOST = 3;

const REPLICA_SCRIPT = fileURLToPath(new URL('./replica.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface ReplicaTimings {
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
}

export interface ReplicaGroupOptions {
  readonly kubeconfigPath: string;
  readonly namespace: string;
  /** Lease name. */
  readonly name: string;
  /** Where the shared log and each replica's stderr go. */
  readonly dir: string;
  /** Omitted fields: the elector's defaults. */
  readonly timings?: ReplicaTimings;
  readonly reenterCandidacy?: boolean;
}

/** One line of the shared log. */
export interface ReplicaRecord {
  readonly t: number;
  readonly id: string;
  readonly ev:
    | 'up'
    | 'leader-seen'
    | 'start'
    | 'work'
    | 'stop'
    | 'stopped-leading'
    | 'exit'
    | 'killed'
    | 'paused'
    | 'resumed'
    | string;
  readonly pid?: number;
  readonly leader?: string;
  readonly reason?: string;
  readonly code?: number;
}

export interface Replica {
  readonly id: string;
  readonly pid: number;
  readonly stderrFile: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running: boolean;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

export class ReplicaGroup {
  readonly logFile: string;
  private readonly replicas = new Map<string, Replica>();

  constructor(private readonly options: ReplicaGroupOptions) {
    this.logFile = join(options.dir, `${options.name}.log`);
    writeFileSync(this.logFile, '');
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', () => {
        for (const child of live) child.kill('SIGKILL');
      });
    }
  }

  /** Starts a replica process named `id`; `extraArgs` override the group's options. */
  spawn(id: string, extraArgs: readonly string[] = []): Replica {
    const t = this.options.timings ?? {};
    const args = [
      '--import',
      'tsx',
      REPLICA_SCRIPT,
      '--kubeconfig',
      this.options.kubeconfigPath,
      '--namespace',
      this.options.namespace,
      '--name',
      this.options.name,
      '--identity',
      id,
      '--log',
      this.logFile,
      ...(t.leaseDurationMs !== undefined ? ['--lease-ms', String(t.leaseDurationMs)] : []),
      ...(t.renewDeadlineMs !== undefined ? ['--renew-ms', String(t.renewDeadlineMs)] : []),
      ...(t.retryPeriodMs !== undefined ? ['--retry-ms', String(t.retryPeriodMs)] : []),
      ...(this.options.reenterCandidacy ? ['--reenter'] : []),
      ...extraArgs,
    ];
    // setpriv --pdeathsig: the kernel kills the replica if the test process dies, even by SIGKILL.
    // setpriv execs node, so the pid is node's and a signal sent to it reaches the replica itself.
    const useSetpriv = existsSync('/usr/bin/setpriv');
    const command = useSetpriv ? '/usr/bin/setpriv' : process.execPath;
    const argv = useSetpriv ? ['--pdeathsig', 'SIGKILL', '--', process.execPath, ...args] : args;
    const stderrFile = join(this.options.dir, `${this.options.name}.${id}.stderr.log`);
    const fd = openSync(stderrFile, 'a');
    const child = spawn(command, argv, { cwd: REPO_ROOT, stdio: ['ignore', fd, fd], env: process.env });
    closeSync(fd);
    live.add(child);
    const replica: Replica = {
      id,
      pid: child.pid!,
      stderrFile,
      running: true,
      exited: new Promise((resolve) => {
        child.once('exit', (code, signal) => {
          live.delete(child);
          replica.running = false;
          resolve({ code, signal });
        });
      }),
    };
    this.replicas.set(id, replica);
    return replica;
  }

  replica(id: string): Replica {
    const r = this.replicas.get(id);
    if (!r) throw new Error(`no replica ${id}`);
    return r;
  }

  /** Sends `signal` to a replica and returns when it was sent (ms since the epoch); SIGKILL is noted in the log. */
  signal(id: string, signal: NodeJS.Signals): number {
    const r = this.replica(id);
    process.kill(r.pid, signal);
    const t = Date.now();
    if (signal === 'SIGKILL') this.note(id, 'killed', t);
    return t;
  }

  /** Appends a record on behalf of the test. */
  note(id: string, ev: string, t = Date.now()): void {
    appendFileSync(this.logFile, `${JSON.stringify({ t, id, ev })}\n`);
  }

  records(): ReplicaRecord[] {
    return readFileSync(this.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as ReplicaRecord);
  }

  /** Polls the log until `find` returns something, or fails after `timeoutMs` with the log tail. */
  async waitFor<T>(what: string, find: (records: ReplicaRecord[]) => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find(this.records());
      if (found !== undefined) return found;
      if (Date.now() > deadline)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${this.describe()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The first `start` record after `afterMs` (optionally by someone other than `notBy`). */
  async waitForLeader(timeoutMs: number, afterMs = 0, notBy?: string): Promise<ReplicaRecord> {
    return this.waitFor(
      `a leader (after ${afterMs}${notBy ? `, not ${notBy}` : ''})`,
      (rs) => rs.find((r) => r.ev === 'start' && r.t >= afterMs && r.id !== notBy),
      timeoutMs,
    );
  }

  /** Leadership intervals from the log: `start` to `stop`, or to the kill / last record of a killed one. */
  intervals(nowMs = Date.now()): Interval[] {
    return leadershipIntervals(this.records(), nowMs);
  }

  /** SIGKILLs every replica still running and waits for them to exit. */
  async stopAll(): Promise<void> {
    const running = [...this.replicas.values()].filter((r) => r.running);
    for (const r of running) {
      try {
        process.kill(r.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await Promise.all(running.map((r) => r.exited));
  }

  /** The last lines of the log and of each replica's stderr, for failure messages. */
  describe(): string {
    const tail = (file: string, n: number): string =>
      existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n') : '';
    const parts = [
      `--- ${this.logFile} (without work records) ---`,
      this.records()
        .filter((r) => r.ev !== 'work')
        .slice(-40)
        .map((r) => JSON.stringify(r))
        .join('\n'),
    ];
    for (const r of this.replicas.values()) parts.push(`--- ${r.id} stderr ---`, tail(r.stderrFile, 15));
    return parts.join('\n');
  }
}

/**
 * Per replica, each `start` opens an interval that its next `stop` closes; an interval left open
 * closes at the replica's kill or last record (a SIGKILLed process does nothing after it), or at
 * `nowMs` while it runs.
 */
export function leadershipIntervals(records: readonly ReplicaRecord[], nowMs: number): Interval[] {
  const out: Interval[] = [];
  const open = new Map<string, number>();
  const last = new Map<string, ReplicaRecord>();
  for (const r of records) {
    last.set(r.id, r);
    if (r.ev === 'start') open.set(r.id, r.t);
    else if ((r.ev === 'stop' || r.ev === 'killed' || r.ev === 'exit') && open.has(r.id)) {
      out.push({ who: r.id, start: open.get(r.id)!, end: r.t });
      open.delete(r.id);
    }
  }
  for (const [id, start] of open) {
    const l = last.get(id)!;
    out.push({ who: id, start, end: l.ev === 'killed' || l.ev === 'exit' ? l.t : nowMs });
  }
  return out;
}
