/**
 * Test support: the cosign and kustomize binaries the supply-chain and GitOps tests drive. The test
 * command exports OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS; a test file run on its own calls the
 * installer, which answers from its cache without the network after the first run.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from './dist.js';

const run = promisify(execFile);
let installed: Promise<string> | undefined;

/** The path of `cosign` or `kustomize` (Debian sid's, from scripts/install-cosign-kustomize.sh). */
export async function supplyChainTool(name: 'cosign' | 'kustomize'): Promise<string> {
  const dir = process.env.OPERATOR_RUNTIME_SUPPLY_CHAIN_TOOLS;
  if (dir) return join(dir, name);
  installed ??= run(join(REPO, 'scripts/install-cosign-kustomize.sh'), [], { maxBuffer: 16 << 20 }).then(({ stdout }) =>
    stdout.trim().split('\n').pop()!,
  );
  return join(await installed, name);
}
