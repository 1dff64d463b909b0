/**
 * `operator-runtime sign|verify`: cosign with a key and no transparency log, for machines without
 * Sigstore's public services (and for tests). Each file gets a Sigstore bundle beside it
 * (`<file>.sigstore.json`, `cosign sign-blob`); with `--sbom`, each file also gets an in-toto
 * attestation whose predicate is the SBOM (`<file>.sbom.sigstore.json`, `cosign attest-blob --type
 * cyclonedx`). cosign 3 uploads to Rekor and fetches Sigstore's TUF root unless told otherwise: the
 * signing config written here names no transparency log, timestamp authority or CA, and the trusted
 * root is empty, so signing needs no network; verifying passes `--insecure-ignore-tlog`. The keyless
 * way for a release pipeline is in docs/supply-chain.md.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { OperatorRuntimeError } from '../../core/errors.js';
import { CliUsageError } from '../cli-error.js';

/** The cosign run when neither `--cosign` nor OPERATOR_RUNTIME_COSIGN names one: found on PATH. */
export const DEFAULT_COSIGN = 'cosign';
export const SIGNATURE_SUFFIX = '.sigstore.json';
export const SBOM_ATTESTATION_SUFFIX = '.sbom.sigstore.json';

/** cosign ran and said no: a signature or attestation that does not verify, a wrong key or password. */
export class CosignError extends OperatorRuntimeError {
  declare readonly code: 'ERR_COSIGN';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_COSIGN', message, options);
  }
}

/** A Sigstore signing config with no services: nothing is uploaded or timestamped. */
const OFFLINE_SIGNING_CONFIG = {
  mediaType: 'application/vnd.dev.sigstore.signingconfig.v0.2+json',
  caUrls: [],
  oidcUrls: [],
  rekorTlogUrls: [],
  tsaUrls: [],
  rekorTlogConfig: { selector: 'ANY' },
  tsaConfig: { selector: 'ANY' },
};
/** An empty trusted root: with a key, cosign needs none, and without one it would fetch Sigstore's. */
const EMPTY_TRUSTED_ROOT = { mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1' };

export interface CosignOptions {
  readonly cwd: string;
  readonly files: readonly string[];
  /** The private key (sign) or public key (verify): a path or a cosign key reference (env://, kms URIs). */
  readonly key: string;
  /** An SBOM to attest (sign) or to check against the attestation (verify). */
  readonly sbom?: string;
  /** @defaultValue OPERATOR_RUNTIME_COSIGN, else DEFAULT_COSIGN */
  readonly cosign?: string;
  /** The environment cosign runs with (COSIGN_PASSWORD for the key). @defaultValue process.env */
  readonly env?: NodeJS.ProcessEnv;
}

function cosignBinary(options: CosignOptions): string {
  const env = options.env ?? process.env;
  return options.cosign ?? env.OPERATOR_RUNTIME_COSIGN ?? DEFAULT_COSIGN;
}

async function runCosign(options: CosignOptions, args: readonly string[]): Promise<string> {
  const binary = cosignBinary(options);
  return new Promise((resolvePromise, reject) => {
    execFile(
      binary,
      [...args],
      { cwd: options.cwd, env: options.env ?? process.env, timeout: 120_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        if (!error) return resolvePromise(`${stdout}${stderr}`);
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          return reject(
            new CliUsageError(
              `${binary} not found: install cosign (docs/supply-chain.md) or name it with --cosign / OPERATOR_RUNTIME_COSIGN`,
              { cause: error },
            ),
          );
        }
        // cosign's own last "Error:" line says what failed (never the key's password).
        const lines = `${stderr}`.split('\n').filter((l) => l.startsWith('Error:'));
        reject(new CosignError(`cosign ${args[0]} failed: ${lines.at(-1) ?? error.message}`, { cause: error }));
      },
    );
  });
}

async function withOfflineConfig<T>(run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'operator-runtime-cosign-'));
  try {
    await writeFile(join(dir, 'signing-config.json'), JSON.stringify(OFFLINE_SIGNING_CONFIG));
    await writeFile(join(dir, 'trusted-root.json'), JSON.stringify(EMPTY_TRUSTED_ROOT));
    return await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function checkInput(options: CosignOptions): void {
  if (options.files.length === 0) throw new CliUsageError('name at least one file');
}

/** Signs each file (and attests the SBOM for it); returns the bundles written, relative to cwd. */
export async function signFiles(options: CosignOptions): Promise<string[]> {
  checkInput(options);
  const written: string[] = [];
  await withOfflineConfig(async (dir) => {
    const offline = [
      '--signing-config',
      join(dir, 'signing-config.json'),
      '--trusted-root',
      join(dir, 'trusted-root.json'),
      '--yes',
    ];
    for (const file of options.files) {
      const path = resolve(options.cwd, file);
      const bundle = `${path}${SIGNATURE_SUFFIX}`;
      await runCosign(options, ['sign-blob', '--key', options.key, '--bundle', bundle, ...offline, path]);
      written.push(relative(options.cwd, bundle));
      // The SBOM itself is signed as a blob; an attestation about itself would say nothing more.
      if (options.sbom !== undefined && resolve(options.cwd, options.sbom) !== path) {
        const attestation = `${path}${SBOM_ATTESTATION_SUFFIX}`;
        const predicate = resolve(options.cwd, options.sbom);
        await runCosign(options, [
          'attest-blob',
          '--key',
          options.key,
          '--type',
          'cyclonedx',
          '--predicate',
          predicate,
          '--bundle',
          attestation,
          ...offline,
          path,
        ]);
        written.push(relative(options.cwd, attestation));
      }
    }
  });
  return written;
}

/** The predicate of a DSSE bundle's in-toto statement. */
async function attestedPredicate(bundlePath: string): Promise<unknown> {
  const bundle = JSON.parse(await readFile(bundlePath, 'utf8')) as { dsseEnvelope?: { payload?: string } };
  const payload = bundle.dsseEnvelope?.payload;
  if (!payload) throw new CosignError(`${bundlePath} holds no attestation (no DSSE envelope)`);
  return (JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as { predicate?: unknown }).predicate;
}

/** Verifies each file's signature (and its SBOM attestation, which must hold exactly `sbom`); returns one line per check. */
export async function verifyFiles(options: CosignOptions): Promise<string[]> {
  checkInput(options);
  const verified: string[] = [];
  for (const file of options.files) {
    const path = resolve(options.cwd, file);
    await runCosign(options, [
      'verify-blob',
      '--key',
      options.key,
      '--bundle',
      `${path}${SIGNATURE_SUFFIX}`,
      '--insecure-ignore-tlog=true',
      path,
    ]);
    verified.push(`${file}: signature verified`);
    if (options.sbom !== undefined && resolve(options.cwd, options.sbom) !== path) {
      const attestation = `${path}${SBOM_ATTESTATION_SUFFIX}`;
      await runCosign(options, [
        'verify-blob-attestation',
        '--key',
        options.key,
        '--bundle',
        attestation,
        '--type',
        'cyclonedx',
        '--insecure-ignore-tlog=true',
        path,
      ]);
      const sbomPath = resolve(options.cwd, options.sbom);
      const expected: unknown = JSON.parse(await readFile(sbomPath, 'utf8'));
      // cosign re-encodes the predicate (its keys sorted): compare values, not bytes.
      if (!isDeepStrictEqual(await attestedPredicate(attestation), expected)) {
        throw new CosignError(`${options.sbom} is not the SBOM attested in ${relative(options.cwd, attestation)}`);
      }
      verified.push(`${file}: SBOM attestation verified (${options.sbom})`);
    }
  }
  return verified;
}
