/**
 * A serving certificate for a webhook on loopback that a TestEnv's kube-apiserver trusts through
 * the `caBundle` of the generated configurations (kube-apiserver 1.20 calls webhooks by URL, so
 * no Service is needed). The certificate is self-signed, so it is its own CA: `caPem` is the
 * caBundle. `rotate()` replaces the files the way a Secret volume does (write aside, rename over),
 * for testing reload without a restart.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSelfSignedCertificate } from '../../webhook/self-signed-certificate.js';

export interface WebhookServingCertificateOptions {
  /** Names and IPs in the certificate. @defaultValue ['127.0.0.1', 'localhost'] */
  readonly hosts?: readonly string[];
  /** Directory for `tls.crt` and `tls.key`. @defaultValue a new temp dir (removed by `remove()`) */
  readonly dir?: string;
}

export interface WebhookServingCertificate {
  /** Holds `tls.crt` and `tls.key`: the manager's `webhook.certDir`. */
  readonly dir: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** PEM to put in `caBundle` (the certificate now in the files). */
  readonly caPem: string;
  /** Writes a new certificate and key (a new CA too) over the files; resolves with the new `caPem`. */
  rotate(): Promise<string>;
  /** Removes the temp dir (only one this helper made). */
  remove(): Promise<void>;
}

export async function webhookServingCertificate(
  options: WebhookServingCertificateOptions = {},
): Promise<WebhookServingCertificate> {
  const hosts = options.hosts ?? ['127.0.0.1', 'localhost'];
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'operator-runtime-webhook-cert-')));
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  const write = async (): Promise<string> => {
    const pair = createSelfSignedCertificate({ hosts });
    // Key first, then certificate, each renamed into place: a reader never sees half a file.
    await writeFile(`${keyFile}.tmp`, pair.key, { mode: 0o600 });
    await writeFile(`${certFile}.tmp`, pair.cert);
    await rename(`${keyFile}.tmp`, keyFile);
    await rename(`${certFile}.tmp`, certFile);
    return pair.cert;
  };
  let caPem = await write();
  return {
    dir,
    certFile,
    keyFile,
    get caPem() {
      return caPem;
    },
    rotate: async () => (caPem = await write()),
    remove: async () => {
      if (!options.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
