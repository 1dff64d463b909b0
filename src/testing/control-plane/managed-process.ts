import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, type WriteStream } from 'node:fs';
import { AlreadyStartedError, InvalidOptionError, OperatorRuntimeError } from '../../core/errors.js';

/** Thrown when a control-plane component fails to start or dies; carries the tail of its log. */
export class ComponentError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_ENV_COMPONENT';
  readonly component: string;
  readonly logTail: string;

  constructor(component: string, message: string, logTail: string) {
    super('ERR_TEST_ENV_COMPONENT', `${component}: ${message}\n--- last lines of ${component}'s log ---\n${logTail}`);
    this.component = component;
    this.logTail = logTail;
  }
}

export interface ManagedProcessOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Run as this user and group (supplementary groups cleared), through setpriv; needs root. */
  readonly user?: { readonly uid: number; readonly gid: number };
}

/** How long a stopped component's pipes may keep delivering output into its log. */
const LOG_DRAIN_MS = 1000;

const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

/**
 * Kills every live component synchronously when this Node process exits for any reason we can
 * observe (normal exit, uncaught exception, SIGINT/SIGTERM). A SIGKILL of the test process is
 * covered by the parent-death signal each component is started with.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) p.killGroupNow('SIGKILL');
  });
}

/**
 * One control-plane component in its own process group, with a parent-death signal (so a killed
 * test runner leaves no orphan) and its output in a log file. `pause`/`resume` send SIGSTOP/SIGCONT
 * to the whole group.
 */
export class ManagedProcess {
  private child: ChildProcess | undefined;
  private log: WriteStream | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** Settles when the child's stdout and stderr have closed, which can be after its exit. */
  private streamsClosed: Promise<void> = Promise.resolve();
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(readonly options: ManagedProcessOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.exitInfo === undefined;
  }

  /** Why the process ended, if it has. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitInfo;
  }

  start(): void {
    if (this.running) throw new AlreadyStartedError(`${this.options.name} is already running`);
    installExitHook();
    this.exitInfo = undefined;
    void this.closeLog(); // a restart: the previous run's log, once its pipes have drained
    const log = createWriteStream(this.options.logFile, { flags: 'a' });
    // The log is diagnostics only: a failing write must not become an uncaught exception in a test run.
    log.on('error', () => undefined);
    this.log = log;
    // setpriv --pdeathsig: the kernel kills the component when the Node process dies, even by SIGKILL.
    // setpriv applies --pdeathsig after --reuid (a uid change clears it), so one invocation does both.
    const useSetpriv = existsSync('/usr/bin/setpriv');
    const user = this.options.user;
    if (user && !useSetpriv)
      throw new InvalidOptionError('user', `${this.options.name}: running as another user needs /usr/bin/setpriv`);
    const asUser = user ? ['--reuid', String(user.uid), '--regid', String(user.gid), '--clear-groups'] : [];
    const command = useSetpriv ? '/usr/bin/setpriv' : this.options.command;
    const args = useSetpriv
      ? [...asUser, '--pdeathsig', 'SIGKILL', '--', this.options.command, ...this.options.args]
      : [...this.options.args];
    const child = spawn(command, args, {
      detached: true, // own process group: signals reach the component and anything it forks
      stdio: ['ignore', 'pipe', 'pipe'],
      env: this.options.env ?? process.env,
    });
    this.child = child;
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    this.streamsClosed = new Promise((resolve) => child.once('close', () => resolve()));
    child.unref();
    (child.stdout as { unref?: () => void } | null)?.unref?.();
    (child.stderr as { unref?: () => void } | null)?.unref?.();
    live.add(this);
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        live.delete(this);
        resolve();
      });
      child.once('error', (err) => {
        this.log?.write(`spawn error: ${err.message}\n`);
        this.exitInfo = { code: -1, signal: null };
        live.delete(this);
        resolve();
      });
    });
  }

  /** SIGTERM the group, then SIGKILL after `graceMs`; resolves when the process has exited. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return this.closeLog();
    this.child?.ref(); // keep the event loop alive until the exit is observed
    this.resume(); // a stopped process cannot handle SIGTERM
    this.signalGroup('SIGTERM');
    const timer = setTimeout(() => this.signalGroup('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    // Anything the component forked into its group goes too.
    this.signalGroup('SIGKILL');
    await this.closeLog();
  }

  /** SIGKILL without waiting (for kill -9 fault tests and exit hooks). */
  killGroupNow(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.child?.pid !== undefined) this.signalGroup(signal);
  }

  async waitForExit(): Promise<void> {
    this.child?.ref();
    await this.exited;
  }

  pause(): void {
    this.signalGroup('SIGSTOP');
  }

  resume(): void {
    this.signalGroup('SIGCONT');
  }

  /** The last `lines` lines of the component's log. */
  logTail(lines = 30): string {
    try {
      const text = readFileSync(this.options.logFile, 'utf8');
      return text
        .split('\n')
        .slice(-lines - 1)
        .join('\n');
    } catch {
      return '(no log)';
    }
  }

  failure(message: string): ComponentError {
    return new ComponentError(this.options.name, message, this.logTail());
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // group already gone
    }
  }

  /**
   * Ends the log once the child's pipes have closed: they can still deliver output after the exit
   * event, and a write to an ended stream is ERR_STREAM_WRITE_AFTER_END. A grandchild holding a
   * pipe open gets {@link LOG_DRAIN_MS}, then the pipes are cut.
   */
  private async closeLog(): Promise<void> {
    const log = this.log;
    const child = this.child;
    this.log = undefined;
    if (!log) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.streamsClosed,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, LOG_DRAIN_MS);
      }),
    ]);
    clearTimeout(timer);
    child?.stdout?.unpipe(log);
    child?.stderr?.unpipe(log);
    await new Promise<void>((resolve) => log.end(() => resolve()));
  }
}
