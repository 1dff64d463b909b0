import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** An RSA key pair for signing service-account tokens (kube-apiserver and controller-manager share it). */
export async function writeServiceAccountKeyPair(
  dir: string,
): Promise<{ privateKeyFile: string; publicKeyFile: string }> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyFile = join(dir, 'sa.key');
  const publicKeyFile = join(dir, 'sa.pub');
  await writeFile(privateKeyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  await writeFile(publicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }));
  return { privateKeyFile, publicKeyFile };
}

export function randomToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * A client CA for minting user certificates at any time (the static token file is only read at
 * start, so per-test users are certificates, as in envtest). Uses the openssl CLI: node:crypto can
 * read X.509 certificates but not create them.
 */
export class ClientCa {
  private serial = 1;

  private constructor(
    private readonly dir: string,
    readonly certFile: string,
    private readonly keyFile: string,
  ) {}

  static async create(dir: string): Promise<ClientCa> {
    const keyFile = join(dir, 'client-ca.key');
    const certFile = join(dir, 'client-ca.crt');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=operator-runtime-test-client-ca',
    ]);
    return new ClientCa(dir, certFile, keyFile);
  }

  /** A client certificate for `user` in `groups` (CN = user, O = each group), PEM cert and key. */
  async issue(user: string, groups: readonly string[] = []): Promise<{ certPem: string; keyPem: string }> {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const base = join(this.dir, `user-${this.serial++}`);
    await writeFile(`${base}.key`, keyPem, { mode: 0o600 });
    const subject = `/CN=${escapeDn(user)}${groups.map((g) => `/O=${escapeDn(g)}`).join('')}`;
    await run('openssl', ['req', '-new', '-key', `${base}.key`, '-out', `${base}.csr`, '-subj', subject]);
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      `${base}.csr`,
      '-CA',
      this.certFile,
      '-CAkey',
      this.keyFile,
      '-set_serial',
      String(Date.now() + this.serial),
      '-days',
      '2',
      '-out',
      `${base}.crt`,
    ]);
    return { certPem: await readFile(`${base}.crt`, 'utf8'), keyPem };
  }
}

function escapeDn(value: string): string {
  return value.replace(/[/\\=+,]/g, (c) => `\\${c}`);
}
