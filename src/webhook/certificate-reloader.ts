/**
 * Serving certificate and key from files, reloaded when they change, as cert-manager (or a
 * Secret volume's atomic `..data` symlink swap) rotates them — controller-runtime's certwatcher.
 * Watches the files' directories (a swapped symlink fires there, not on the old file) and also
 * re-reads them every `pollIntervalMs`, because inotify misses changes on some volumes (NFS,
 * overlay, a watch that failed). A pair that does not load (a key from another pair, a file half
 * written) is ignored: the last good pair keeps serving and the next change or poll tries again.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { Clock, TimerHandle } from '../core/clock.js';
import { OperatorRuntimeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';

/** @defaultValue 10,000 ms (controller-runtime's certwatcher polls every 10 s) */
export const DEFAULT_CERT_POLL_INTERVAL_MS = 10_000;

export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
}

export interface CertificateReloaderOptions {
  readonly certFile: string;
  readonly keyFile: string;
  readonly pollIntervalMs?: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called with each new pair that loads (not with the first: `start` returns that). */
  readonly onChange: (pair: ServingCertificate) => void;
}

export class CertificateReloader {
  private current: ServingCertificate | undefined;
  private watchers: FSWatcher[] = [];
  private timer: TimerHandle | undefined;
  private reloading: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly options: CertificateReloaderOptions) {}

  /** The pair now served. */
  get certificate(): ServingCertificate | undefined {
    return this.current;
  }

  /** Loads the pair (rejects if it does not load: a server must not start without one) and starts watching. */
  async start(): Promise<ServingCertificate> {
    const pair = await this.read();
    checkServingPair(pair);
    this.current = pair;
    for (const dir of new Set([dirname(this.options.certFile), dirname(this.options.keyFile)])) {
      try {
        const watcher = watch(dir, { persistent: false }, () => void this.reload());
        watcher.on('error', (err) =>
          this.options.logger.warn({ err, dir }, 'certificate directory watch failed; polling only'),
        );
        this.watchers.push(watcher);
      } catch (err) {
        this.options.logger.warn({ err, dir }, 'cannot watch the certificate directory; polling only');
      }
    }
    this.schedulePoll();
    return pair;
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  /** Re-reads the files now; resolves once the pair in use reflects them (or was kept as the last good one). */
  reload(): Promise<void> {
    if (this.reloading) {
      // A change during a read: read once more after it, so the last write is never missed.
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.again = false;
        await this.loadIfChanged();
      } while (this.again && !this.stopped);
    })().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  private schedulePoll(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimer(this.options.pollIntervalMs ?? DEFAULT_CERT_POLL_INTERVAL_MS, () => {
      void this.reload().finally(() => this.schedulePoll());
    });
  }

  private async loadIfChanged(): Promise<void> {
    let pair: ServingCertificate;
    try {
      pair = await this.read();
      if (pair.cert === this.current?.cert && pair.key === this.current.key) return;
      checkServingPair(pair);
    } catch (err) {
      this.options.logger.warn(
        { err: err instanceof Error ? err.message : String(err), certFile: this.options.certFile },
        'serving certificate does not load; keeping the previous one',
      );
      return;
    }
    if (this.stopped) return;
    this.current = pair;
    this.options.logger.info({ certFile: this.options.certFile }, 'serving certificate reloaded');
    this.options.onChange(pair);
  }

  private async read(): Promise<ServingCertificate> {
    const [cert, key] = await Promise.all([
      readFile(this.options.certFile, 'utf8'),
      readFile(this.options.keyFile, 'utf8'),
    ]);
    return { cert, key };
  }
}

/**
 * Throws unless `pair` can serve: a certificate that parses, a key that parses, and the two belong
 * together. `createSecureContext` alone is not enough — it accepts an empty certificate or key, which
 * is what a reader sees between a writer's truncate and its write, and a server given one fails every
 * handshake.
 */
export function checkServingPair(pair: ServingCertificate): void {
  const certificate = new X509Certificate(pair.cert);
  if (!certificate.checkPrivateKey(createPrivateKey(pair.key))) {
    throw new OperatorRuntimeError('ERR_SERVING_CERTIFICATE', 'the serving certificate does not match its key');
  }
  createSecureContext(pair);
}
