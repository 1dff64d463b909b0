/**
 * The command lines of `operator-runtime sbom`, `sign` and `verify` (docs/supply-chain.md); the
 * work is in sbom-command.ts and cosign.ts.
 */
import type { Command } from 'commander';
import { omitUndefined } from '../../core/omit-undefined.js';
import { CosignError, DEFAULT_COSIGN, signFiles, verifyFiles } from './cosign.js';
import { DEFAULT_SBOM_SPEC_VERSION, SBOM_SPEC_VERSIONS } from './cyclonedx-bom.js';
import { DEFAULT_SBOM_FILE, runSbom } from './sbom-command.js';

export interface SupplyChainIo {
  readonly cwd: string;
  readonly stdout: (text: string) => void;
  /** @defaultValue process.env */
  readonly env?: NodeJS.ProcessEnv;
}

/** The failures of these commands that are the user's to fix: one message, exit 1, no stack. */
export function isSupplyChainFailure(error: unknown): error is CosignError {
  return error instanceof CosignError;
}

interface KeyOptions {
  key: string;
  sbom?: string;
  cosign?: string;
}

export function addSupplyChainCommands(program: Command, io: SupplyChainIo): void {
  program
    .command('sbom')
    .description(
      "write a CycloneDX SBOM (JSON) of the operator's production dependencies, from its package-lock.json; with --image, of an image's runtime files",
    )
    .option('-p, --project <dir>', 'the project folder, with package.json (default: the current folder)')
    .option(
      '--image <dir>',
      "list what is installed in an image's runtime files (node_modules, and each other file with its SHA-256) instead of the lockfile",
    )
    .option('-o, --out <file>', `where to write it (default: ${DEFAULT_SBOM_FILE})`)
    .option(
      '--spec-version <version>',
      `CycloneDX version: ${SBOM_SPEC_VERSIONS.join(' or ')} (default: ${DEFAULT_SBOM_SPEC_VERSION})`,
    )
    .action(async (options: { project?: string; image?: string; out?: string; specVersion?: string }) => {
      const result = await runSbom({ cwd: io.cwd, ...omitUndefined(options) });
      io.stdout(`wrote ${result.path} (${result.components} components)\n`);
    });

  const cosignOption = `the cosign binary (default: OPERATOR_RUNTIME_COSIGN, else ${DEFAULT_COSIGN} on PATH)`;
  program
    .command('sign')
    .description(
      'sign files with a cosign key, no transparency log: <file>.sigstore.json each; with --sbom, also an SBOM attestation <file>.sbom.sigstore.json (the key password comes from COSIGN_PASSWORD)',
    )
    .argument('<files...>', 'the files to sign: the SBOM, packed tarballs')
    .requiredOption('-k, --key <key>', 'the private key (cosign generate-key-pair), or a cosign key reference')
    .option('--sbom <file>', 'attest this CycloneDX SBOM for each file (cosign attest-blob --type cyclonedx)')
    .option('--cosign <path>', cosignOption)
    .action(async (files: string[], options: KeyOptions) => {
      const written = await signFiles({ cwd: io.cwd, files, ...omitUndefined({ ...options, env: io.env }) });
      for (const path of written) io.stdout(`wrote ${path}\n`);
    });

  program
    .command('verify')
    .description(
      'verify files signed by `operator-runtime sign` with the public key; with --sbom, also their SBOM attestation, which must hold that SBOM; exit 1 if any fails',
    )
    .argument('<files...>', 'the signed files (each with <file>.sigstore.json beside it)')
    .requiredOption('-k, --key <key>', 'the public key (cosign.pub), or a cosign key reference')
    .option('--sbom <file>', 'check <file>.sbom.sigstore.json attests this SBOM')
    .option('--cosign <path>', cosignOption)
    .action(async (files: string[], options: KeyOptions) => {
      const lines = await verifyFiles({ cwd: io.cwd, files, ...omitUndefined({ ...options, env: io.env }) });
      for (const line of lines) io.stdout(`${line}\n`);
    });
}
