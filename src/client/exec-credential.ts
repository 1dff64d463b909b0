/**
 * exec credential plugins (`users[].user.exec`, client.authentication.k8s.io v1 and v1beta1): run
 * the command, cache its ExecCredential until `expirationTimestamp`, run it again after a 401.
 * Plugin output and stderr are never copied into errors or logs, since they carry the credential.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { silentLogger } from '../core/logger.js';
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
  /** Kill the plugin after this long. @defaultValue DEFAULT_EXEC_TIMEOUT_MS */
  readonly timeoutMs?: number;
}

export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;
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
  #value: CredentialValue | undefined;
  #expiresAt = Number.POSITIVE_INFINITY;
  #running: Promise<CredentialValue> | undefined;
  /** Number of times the plugin has been run (for tests and diagnostics). */
  runs = 0;

  constructor(config: ExecConfig, options: ExecCredentialPluginOptions = {}) {
    if (!SUPPORTED_VERSIONS.has(config.apiVersion)) {
      throw new CredentialError(`exec plugin apiVersion "${config.apiVersion}" is not supported (use client.authentication.k8s.io/v1 or v1beta1)`);
    }
    if (config.interactiveMode === 'Always') {
      throw new CredentialError('exec plugin requires interactiveMode Always, but an operator has no terminal');
    }
    this.#config = config;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? silentLogger;
    this.#env = options.env ?? process.env;
    this.#cluster = options.cluster;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
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

  [inspect.custom](): string {
    return `ExecCredentialPlugin { command: '${path.basename(this.#config.command)}', <redacted> }`;
  }

  toJSON(): Record<string, string> {
    return { kind: this.kind, command: path.basename(this.#config.command), value: '<redacted>' };
  }

  private async run(): Promise<CredentialValue> {
    const cfg = this.#config;
    const name = path.basename(cfg.command);
    const execInfo: Record<string, unknown> = { apiVersion: cfg.apiVersion, kind: 'ExecCredential', spec: { interactive: false } };
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
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = execFile(
        cfg.command,
        cfg.args ?? [],
        { env, timeout: this.#timeoutMs, maxBuffer: 16 * 1024 * 1024, windowsHide: true },
        (err, out) => {
          if (!err) return resolve(out);
          const e = err as NodeJS.ErrnoException & { code?: unknown; killed?: boolean; signal?: string };
          // Not err.message: execFile puts the command line and the plugin's stderr into it.
          if (e.code === 'ENOENT') reject(new CredentialError(`exec plugin "${name}" not found${cfg.installHint ? `: ${cfg.installHint}` : ''}`));
          else if (e.killed) reject(new CredentialError(`exec plugin "${name}" timed out or was killed (${e.signal ?? 'signal'})`));
          else reject(new CredentialError(`exec plugin "${name}" failed with exit code ${String(e.code)}`));
        },
      );
      child.stdin?.end();
    });

    let parsed: { apiVersion?: string; kind?: string; status?: ExecCredentialStatus };
    try {
      parsed = JSON.parse(stdout) as typeof parsed;
    } catch {
      throw new CredentialError(`exec plugin "${name}" printed something that is not JSON`);
    }
    if (parsed?.kind !== 'ExecCredential') throw new CredentialError(`exec plugin "${name}" output is not an ExecCredential`);
    if (parsed.apiVersion !== cfg.apiVersion) {
      throw new CredentialError(`exec plugin "${name}" answered with apiVersion "${parsed.apiVersion}", expected "${cfg.apiVersion}"`);
    }
    const status = parsed.status;
    if (!status) throw new CredentialError(`exec plugin "${name}" returned no status`);
    const hasCert = Boolean(status.clientCertificateData) || Boolean(status.clientKeyData);
    if (hasCert && !(status.clientCertificateData && status.clientKeyData)) {
      throw new CredentialError(`exec plugin "${name}" returned a client certificate without its key, or a key without a certificate`);
    }
    if (!status.token && !hasCert) throw new CredentialError(`exec plugin "${name}" returned neither a token nor a client certificate`);

    let expiresAt = Number.POSITIVE_INFINITY;
    if (status.expirationTimestamp) {
      expiresAt = Date.parse(status.expirationTimestamp);
      if (Number.isNaN(expiresAt)) throw new CredentialError(`exec plugin "${name}" returned an invalid expirationTimestamp`);
    }
    const value: CredentialValue = Object.freeze({
      ...(status.token ? { authorization: `Bearer ${status.token}` } : {}),
      ...(hasCert ? { clientCert: hideKey(status.clientCertificateData!, status.clientKeyData!) } : {}),
    });
    this.#value = value;
    this.#expiresAt = expiresAt;
    this.#logger.debug({ plugin: name, expiresAt: Number.isFinite(expiresAt) ? new Date(expiresAt).toISOString() : undefined }, 'exec credential obtained');
    return value;
  }
}


function hideKey(cert: string, key: string): { cert: string; key: string } {
  const out = { cert } as { cert: string; key: string };
  Object.defineProperty(out, 'key', { value: key, enumerable: false });
  return Object.freeze(out);
}
