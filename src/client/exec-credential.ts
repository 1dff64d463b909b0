/**
 * exec credential plugins (`users[].user.exec`, client.authentication.k8s.io v1 and v1beta1): run
 * the command, cache its ExecCredential until `expirationTimestamp`, run it again after a 401.
 * Plugin output and stderr are never copied into errors or logs, since they carry the credential.
 * A running plugin never outlives the operator: its process group is killed on `close()`, on the
 * process's exit, and by a watchdog when the operator dies without a word (kill -9).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { silentLogger } from '../core/logger.js';
import { InvalidOptionError } from '../core/errors.js';
import { CredentialError, type Credential, type CredentialValue } from './credentials.js';
import { inspect } from 'node:util';
import { untilAborted } from './until-aborted.js';

/** `users[].user.exec` as written in a kubeconfig. */
export interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[] | null;
  apiVersion: string;
  installHint?: string;
  provideClusterInfo?: boolean;
  interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
}

export interface ExecCredentialPluginOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Environment the plugin inherits. @defaultValue process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Cluster fields passed in `spec.cluster` when `provideClusterInfo` is set (CA as PEM text). */
  readonly cluster?: Readonly<Record<string, unknown>>;
  /** SIGTERM the plugin's process group after this long. @defaultValue DEFAULT_EXEC_TIMEOUT_MS */
  readonly timeoutMs?: number;
  /**
   * After the timeout's SIGTERM, SIGKILL the process group this much later, and fail then at the
   * latest: a run never takes longer than `timeoutMs + graceMs`. @defaultValue DEFAULT_EXEC_GRACE_MS
   */
  readonly graceMs?: number;
  /**
   * After the plugin exits, wait at most this long for the rest of its stdout: a background child
   * that inherited stdout must not hold the answer hostage. @defaultValue DEFAULT_EXEC_DRAIN_MS
   */
  readonly drainMs?: number;
}

export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;
export const DEFAULT_EXEC_GRACE_MS = 2_000;
export const DEFAULT_EXEC_DRAIN_MS = 250;
/** An ExecCredential is a few KiB; more than this is not one. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
const SUPPORTED_VERSIONS = new Set(['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']);

interface ExecCredentialStatus {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  expirationTimestamp?: string;
}

export class ExecCredentialPlugin implements Credential {
  readonly kind = 'exec';
  readonly #config: ExecConfig;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #cluster: Readonly<Record<string, unknown>> | undefined;
  readonly #timeoutMs: number;
  readonly #graceMs: number;
  readonly #drainMs: number;
  #value: CredentialValue | undefined;
  #expiresAt = Number.POSITIVE_INFINITY;
  #running: Promise<CredentialValue> | undefined;
  #currentRun: PluginRun | undefined;
  /** Number of times the plugin has been run (for tests and diagnostics). */
  runs = 0;

  constructor(config: ExecConfig, options: ExecCredentialPluginOptions = {}) {
    if (!SUPPORTED_VERSIONS.has(config.apiVersion)) {
      throw new CredentialError(
        `exec plugin apiVersion "${config.apiVersion}" is not supported (use client.authentication.k8s.io/v1 or v1beta1)`,
      );
    }
    if (config.interactiveMode === 'Always') {
      throw new CredentialError('exec plugin requires interactiveMode Always, but an operator has no terminal');
    }
    this.#config = config;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? silentLogger;
    this.#env = options.env ?? process.env;
    this.#cluster = options.cluster;
    this.#timeoutMs = duration('timeoutMs', options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS);
    this.#graceMs = duration('graceMs', options.graceMs ?? DEFAULT_EXEC_GRACE_MS);
    this.#drainMs = duration('drainMs', options.drainMs ?? DEFAULT_EXEC_DRAIN_MS);
  }

  get(signal?: AbortSignal): Promise<CredentialValue> {
    if (this.#value && this.#clock.now() < this.#expiresAt) return Promise.resolve(this.#value);
    // Concurrent requests share one plugin run. It is bounded by timeoutMs, not by any one caller's
    // signal: a caller giving up stops waiting without killing the run the others wait for.
    this.#running ??= this.run().finally(() => (this.#running = undefined));
    return signal ? untilAborted(this.#running, signal, 'waiting for exec credential') : this.#running;
  }

  invalidate(): boolean {
    this.#value = undefined;
    return true;
  }

  /**
   * Kills a running plugin's process group; its waiters get a CredentialError. The client calls it
   * when it closes. A later `get` runs the plugin again (the credential may be shared).
   */
  close(): void {
    this.#currentRun?.abort(
      new CredentialError(`exec plugin "${path.basename(this.#config.command)}" was stopped: the client is closed`),
    );
  }

  [inspect.custom](): string {
    return `ExecCredentialPlugin { command: '${path.basename(this.#config.command)}', <redacted> }`;
  }

  toJSON(): Record<string, string> {
    return { kind: this.kind, command: path.basename(this.#config.command), value: '<redacted>' };
  }

  private async run(): Promise<CredentialValue> {
    const cfg = this.#config;
    const name = path.basename(cfg.command);
    const execInfo: Record<string, unknown> = {
      apiVersion: cfg.apiVersion,
      kind: 'ExecCredential',
      spec: { interactive: false },
    };
    if (cfg.provideClusterInfo && this.#cluster) {
      const { 'certificate-authority-data': ca, ...rest } = this.#cluster;
      (execInfo.spec as Record<string, unknown>).cluster = {
        ...rest,
        ...(typeof ca === 'string' ? { 'certificate-authority-data': Buffer.from(ca).toString('base64') } : {}),
      };
    }
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.#env)) if (v !== undefined) env[k] = v;
    for (const e of cfg.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(execInfo);

    this.runs++;
    const run = startPlugin(cfg.command, cfg.args ?? [], env, {
      name,
      installHint: cfg.installHint,
      timeoutMs: this.#timeoutMs,
      graceMs: this.#graceMs,
      drainMs: this.#drainMs,
    });
    this.#currentRun = run;
    let stdout: string;
    try {
      stdout = await run.output;
    } finally {
      if (this.#currentRun === run) this.#currentRun = undefined;
    }

    let parsed: { apiVersion?: string; kind?: string; status?: ExecCredentialStatus };
    try {
      parsed = JSON.parse(stdout) as typeof parsed;
    } catch {
      throw new CredentialError(`exec plugin "${name}" printed something that is not JSON`);
    }
    if (parsed?.kind !== 'ExecCredential')
      throw new CredentialError(`exec plugin "${name}" output is not an ExecCredential`);
    if (parsed.apiVersion !== cfg.apiVersion) {
      throw new CredentialError(
        `exec plugin "${name}" answered with apiVersion "${parsed.apiVersion}", expected "${cfg.apiVersion}"`,
      );
    }
    const status = parsed.status;
    if (!status) throw new CredentialError(`exec plugin "${name}" returned no status`);
    // Named, never quoted: the fields hold the credential.
    if (typeof status !== 'object' || Array.isArray(status))
      throw new CredentialError(`exec plugin "${name}" returned a status that is not an object`);
    for (const field of ['token', 'clientCertificateData', 'clientKeyData', 'expirationTimestamp'] as const) {
      if (status[field] !== undefined && status[field] !== null && typeof status[field] !== 'string') {
        throw new CredentialError(`exec plugin "${name}" returned status.${field} that is not a string`);
      }
    }
    const hasCert = Boolean(status.clientCertificateData) || Boolean(status.clientKeyData);
    if (hasCert && !(status.clientCertificateData && status.clientKeyData)) {
      throw new CredentialError(
        `exec plugin "${name}" returned a client certificate without its key, or a key without a certificate`,
      );
    }
    if (!status.token && !hasCert)
      throw new CredentialError(`exec plugin "${name}" returned neither a token nor a client certificate`);

    let expiresAt = Number.POSITIVE_INFINITY;
    if (status.expirationTimestamp) {
      expiresAt = Date.parse(status.expirationTimestamp);
      if (Number.isNaN(expiresAt))
        throw new CredentialError(`exec plugin "${name}" returned an invalid expirationTimestamp`);
    }
    const value: CredentialValue = Object.freeze({
      ...(status.token ? { authorization: `Bearer ${status.token}` } : {}),
      ...(hasCert ? { clientCert: hideKey(status.clientCertificateData!, status.clientKeyData!) } : {}),
    });
    this.#value = value;
    this.#expiresAt = expiresAt;
    this.#logger.debug(
      { plugin: name, expiresAt: Number.isFinite(expiresAt) ? new Date(expiresAt).toISOString() : undefined },
      'exec credential obtained',
    );
    return value;
  }
}

function duration(option: string, ms: number): number {
  // A NaN or infinite timer would fire at once or never: either defeats the bound.
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
    throw new InvalidOptionError(option, 'must be a non-negative number of milliseconds');
  return ms;
}

function hideKey(cert: string, key: string): { cert: string; key: string } {
  const out = { cert } as { cert: string; key: string };
  Object.defineProperty(out, 'key', { value: key, enumerable: false });
  return Object.freeze(out);
}

/** One plugin run: its stdout once it exits, and a way to stop it early. */
interface PluginRun {
  readonly output: Promise<string>;
  /** SIGKILLs the plugin's process group and fails the run with `reason`. */
  abort(reason: CredentialError): void;
}

/**
 * Runs in a node of its own (always there: it is this process's binary) and kills the plugin's
 * process group as soon as its stdin, a pipe from the operator, closes: the kernel closes it when the
 * operator dies by any means, kill -9 included, which no handler in the operator can see.
 */
const WATCHDOG_SOURCE = `
const pgid = Number(process.argv[1]);
const fire = () => { try { process.kill(-pgid, 'SIGKILL'); } catch {} process.exit(0); };
process.stdin.on('data', () => {});
process.stdin.on('end', fire);
process.stdin.on('close', fire);
process.stdin.on('error', fire);
`;

/** Runs still going: killed synchronously if the process exits (process.exit included) meanwhile. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function killLiveGroupsOnExit(): void {
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/**
 * Runs the plugin in a process group of its own and resolves with its stdout. Settles on the
 * plugin's own exit (plus at most `drainMs` for the pipe to empty), never on the pipe's close, which
 * a grandchild can hold open indefinitely. At `timeoutMs` the group gets SIGTERM; at
 * `timeoutMs + graceMs` it gets SIGKILL and the run fails, whether or not anything exited.
 * Real timers, not the injected Clock: this bounds a real process, which a fake clock cannot pace.
 */
function startPlugin(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  o: { name: string; installHint: string | undefined; timeoutMs: number; graceMs: number; drainMs: number },
): PluginRun {
  let abort: (reason: CredentialError) => void = () => {};
  const output = new Promise<string>((resolve, reject) => {
    // stdin and stderr are not ours to use: an operator has no terminal, and stderr may carry the
    // credential (it is never copied into errors or logs, so it is not read at all).
    // Detached: a group of its own, so a timeout or a stop can kill whatever the plugin started too.
    const child = spawn(command, [...args], {
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
      windowsHide: true,
    });
    const pgid = child.pid;
    let watchdog: ChildProcess | undefined;
    if (pgid !== undefined) {
      liveGroups.add(pgid);
      if (!exitHookInstalled) {
        exitHookInstalled = true;
        process.on('exit', killLiveGroupsOnExit);
      }
      // Detached too: a signal to the operator's group (Ctrl-C) must not take the watchdog first.
      // No environment: NODE_OPTIONS (a loader, say) would only slow it down.
      watchdog = spawn(process.execPath, ['-e', WATCHDOG_SOURCE, String(pgid)], {
        env: {},
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
        windowsHide: true,
      });
      watchdog.on('error', () => {
        // Could not start: the exit hook and the timeouts still bound the plugin.
      });
      watchdog.stdin?.on('error', () => {});
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    let timedOut = false;
    let exited = false;
    const timers: NodeJS.Timeout[] = [];

    const killGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        // Negative pid: the whole group (detached made the plugin its leader), so its children go too.
        process.kill(-child.pid, signal);
      } catch {
        // The group is already gone.
      }
    };
    const settle = (err: CredentialError | undefined): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      if (pgid !== undefined) liveGroups.delete(pgid);
      // SIGKILL, not closing its stdin: closing would make it kill the group, and after a clean
      // exit whatever the plugin left running in it is its own business (as with client-go).
      watchdog?.kill('SIGKILL');
      watchdog?.stdin?.destroy();
      // Stop reading: a grandchild still holding the pipe must not keep this process busy.
      child.stdout?.destroy();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).toString('utf8'));
    };

    abort = (reason) => {
      killGroup('SIGKILL');
      settle(reason);
    };

    child.stdout?.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_OUTPUT_BYTES) {
        killGroup('SIGKILL');
        settle(new CredentialError(`exec plugin "${o.name}" output exceeds ${MAX_OUTPUT_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    child.stdout?.on('error', () => {
      // A destroyed or broken pipe: the exit status decides.
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      // Not err.message: it carries the command line.
      if (err.code === 'ENOENT')
        settle(new CredentialError(`exec plugin "${o.name}" not found${o.installHint ? `: ${o.installHint}` : ''}`));
      else settle(new CredentialError(`exec plugin "${o.name}" could not be started (${err.code ?? 'error'})`));
    });
    child.on('exit', (code, signal) => {
      exited = true;
      if (timedOut) {
        // The plugin went on SIGTERM; anything it left behind in its group goes now.
        killGroup('SIGKILL');
        return settle(new CredentialError(`exec plugin "${o.name}" timed out after ${o.timeoutMs} ms`));
      }
      if (code !== 0) {
        return settle(
          new CredentialError(
            signal
              ? `exec plugin "${o.name}" was killed (${signal})`
              : `exec plugin "${o.name}" failed with exit code ${String(code)}`,
          ),
        );
      }
      // What the plugin wrote before exiting may still be in the pipe: wait for its end, briefly.
      if (child.stdout === null || child.stdout.readableEnded) return settle(undefined);
      child.stdout.once('end', () => settle(undefined));
      timers.push(setTimeout(() => settle(undefined), o.drainMs));
    });

    timers.push(
      setTimeout(() => {
        if (exited) return;
        timedOut = true;
        killGroup('SIGTERM');
        timers.push(
          setTimeout(() => {
            killGroup('SIGKILL');
            settle(new CredentialError(`exec plugin "${o.name}" timed out after ${o.timeoutMs} ms and was killed`));
          }, o.graceMs),
        );
      }, o.timeoutMs),
    );
  });
  return { output, abort: (reason) => abort(reason) };
}
