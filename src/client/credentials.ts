/**
 * Credentials: where the Authorization header (and, for exec plugins, a client certificate) comes
 * from. Secrets live in private fields, and every credential prints as `<redacted>` under
 * `console.log`, `util.inspect` and `JSON.stringify`, so logging a config cannot leak one.
 */
import { open } from 'node:fs/promises';
import { constants } from 'node:fs';
import { inspect } from 'node:util';
import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import { OperatorRuntimeError } from '../core/errors.js';

export interface ClientCertificate {
  readonly cert: string;
  readonly key: string;
}

export interface CredentialValue {
  /** Value of the Authorization header, if any. */
  readonly authorization?: string;
  /** A client certificate to present instead of the configured one (exec plugins may return one). */
  readonly clientCert?: ClientCertificate;
}

export interface Credential {
  /** Non-secret description for logs: `none`, `token`, `token-file`, `basic`, `exec`. */
  readonly kind: string;
  /** Current credential material, refreshed as the source requires. */
  get(signal?: AbortSignal): Promise<CredentialValue>;
  /**
   * Called after a 401: drop cached material. Returns true when fetching again may give a different
   * credential, i.e. when one retry of the request is worth it.
   */
  invalidate(): boolean;
  /** Called when the client closes: stop whatever the credential runs (an exec plugin's processes). */
  close?(): void;
}

/** A credential could not be obtained (file unreadable, exec plugin failed). Never carries the secret. */
export class CredentialError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CREDENTIAL';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_CREDENTIAL', message, options);
  }
}

export abstract class RedactedCredential implements Credential {
  abstract readonly kind: string;
  abstract get(signal?: AbortSignal): Promise<CredentialValue>;
  abstract invalidate(): boolean;
  [inspect.custom](): string {
    return `${this.constructor.name} { kind: '${this.kind}', <redacted> }`;
  }
  toJSON(): Record<string, string> {
    return { kind: this.kind, value: '<redacted>' };
  }
}

const EMPTY: CredentialValue = Object.freeze({});

class NoCredential extends RedactedCredential {
  readonly kind = 'none';
  get(): Promise<CredentialValue> {
    return Promise.resolve(EMPTY);
  }
  invalidate(): boolean {
    return false;
  }
}

/** Anonymous: no Authorization header (a client certificate may still authenticate). */
export const NO_CREDENTIAL: Credential = new NoCredential();

export class StaticTokenCredential extends RedactedCredential {
  readonly kind = 'token';
  readonly #value: CredentialValue;
  constructor(token: string) {
    super();
    this.#value = Object.freeze({ authorization: `Bearer ${token.trim()}` });
  }
  get(): Promise<CredentialValue> {
    return Promise.resolve(this.#value);
  }
  invalidate(): boolean {
    return false;
  }
}

export class BasicAuthCredential extends RedactedCredential {
  readonly kind = 'basic';
  readonly #value: CredentialValue;
  constructor(username: string, password: string) {
    super();
    this.#value = Object.freeze({
      authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
    });
  }
  get(): Promise<CredentialValue> {
    return Promise.resolve(this.#value);
  }
  invalidate(): boolean {
    return false;
  }
}

export interface TokenFileCredentialOptions {
  readonly clock?: Clock;
  /**
   * How long a read token is used before the file is read again. Projected service-account tokens
   * are rotated well before expiry, so client-go's one minute is plenty.
   * @defaultValue DEFAULT_TOKEN_FILE_REFRESH_MS
   */
  readonly refreshMs?: number;
  /** Token to use before the first successful read (a kubeconfig may carry both). */
  readonly initialToken?: string;
}

export const DEFAULT_TOKEN_FILE_REFRESH_MS = 60_000;

/**
 * A bearer token read from a file and re-read every `refreshMs` and after a 401, so rotated tokens
 * (projected service-account tokens, `tokenFile` in kubeconfig) are picked up without a restart.
 */
export class TokenFileCredential extends RedactedCredential {
  readonly kind = 'token-file';
  readonly path: string;
  readonly #clock: Clock;
  readonly #refreshMs: number;
  #value: CredentialValue | undefined;
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<CredentialValue> | undefined;

  constructor(path: string, options: TokenFileCredentialOptions = {}) {
    super();
    this.path = path;
    this.#clock = options.clock ?? realClock;
    this.#refreshMs = options.refreshMs ?? DEFAULT_TOKEN_FILE_REFRESH_MS;
    if (options.initialToken) this.#value = Object.freeze({ authorization: `Bearer ${options.initialToken.trim()}` });
  }

  get(): Promise<CredentialValue> {
    if (this.#value && this.#clock.monotonicNow() - this.#readAt < this.#refreshMs) return Promise.resolve(this.#value);
    // One read at a time: a burst of requests at refresh time shares it.
    this.#reading ??= this.read().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  invalidate(): boolean {
    this.#readAt = Number.NEGATIVE_INFINITY;
    return true;
  }

  private async read(): Promise<CredentialValue> {
    let token: string;
    try {
      token = (await readLocalFile(this.path)).trim();
    } catch (err) {
      // Like client-go, keep using the last good token if the file is briefly unreadable mid-rotation.
      if (this.#value) return this.#value;
      throw new CredentialError(`cannot read token file ${this.path}: ${describeReadError(err)}`, { cause: err });
    }
    if (!token) {
      if (this.#value) return this.#value;
      throw new CredentialError(`token file ${this.path} is empty`);
    }
    this.#value = Object.freeze({ authorization: `Bearer ${token}` });
    this.#readAt = this.#clock.monotonicNow();
    return this.#value;
  }
}

/** Credential material (tokens, keys, certificates, kubeconfigs) is small; more is not one. */
export const MAX_LOCAL_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Reads a local credential file (token, kubeconfig, CA, certificate, key) as UTF-8, refusing what
 * is not a regular file or is larger than `maxBytes`. A FIFO would block a libuv thread forever on
 * open, and `/dev/zero` would be read until memory runs out, so the file is opened non-blocking and
 * checked before it is read. Errors carry a `code`; {@link describeReadError} words it.
 */
export async function readLocalFile(file: string, maxBytes = MAX_LOCAL_FILE_BYTES): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ERR_NOT_REGULAR_FILE' });
    // Read at most one byte past the limit, in case the file grew since stat.
    const buf = Buffer.alloc(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, length, buf.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buf.length) break;
    }
    if (length > maxBytes) throw Object.assign(new Error('file too large'), { code: 'ERR_FILE_TOO_LARGE' });
    return buf.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Words a {@link readLocalFile} failure for a message: its code, never the file's content. */
export function describeReadError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ERR_NOT_REGULAR_FILE') return 'not a regular file';
  if (code === 'ERR_FILE_TOO_LARGE') return `larger than ${MAX_LOCAL_FILE_BYTES} bytes`;
  return code ?? 'error';
}
