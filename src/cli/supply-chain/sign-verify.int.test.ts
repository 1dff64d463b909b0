/**
 * `operator-runtime sign|verify` with the real cosign (Debian sid's 3.1, scripts/install-cosign-kustomize.sh),
 * offline: a key pair generated in a temporary folder (COSIGN_PASSWORD set), the reference
 * operator's SBOM and a packed artifact signed as blobs and the SBOM attested for the artifact,
 * all verified; then a one-byte change to the SBOM, to the artifact, or another key fails.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { supplyChainTool } from '../../../scripts/packaging/supply-chain-tools.js';
import { runCli } from '../program.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../..', import.meta.url));

describe('operator-runtime sign and verify, with the real cosign and no transparency log', { timeout: 180_000 }, () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  async function cli(args: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(args, { cwd: dir, env, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { code, stdout, stderr };
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'operator-runtime-cosign-'));
    const cosign = await supplyChainTool('cosign');
    // No route to Sigstore's services is needed: HOME here keeps cosign's TUF cache out of the user's.
    env = { ...process.env, COSIGN_PASSWORD: 'test-only-password', OPERATOR_RUNTIME_COSIGN: cosign, HOME: dir };
    for (const keys of ['release', 'other']) {
      await run(cosign, ['generate-key-pair', '--output-key-prefix', keys], { cwd: dir, env });
    }
    const sbom = await runCli(
      ['sbom', '-p', join(REPO, 'examples/database-operator'), '-o', join(dir, 'sbom.cdx.json')],
      {
        cwd: dir,
        stdout: () => undefined,
        stderr: () => undefined,
      },
    );
    assert.equal(sbom, 0);
    await writeFile(join(dir, 'database-operator-0.1.0.tgz'), 'a packed artifact\n');
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('sign writes a bundle per file and an SBOM attestation for the artifact; verify accepts them', async () => {
    const signed = await cli([
      'sign',
      'sbom.cdx.json',
      'database-operator-0.1.0.tgz',
      '--key',
      'release.key',
      '--sbom',
      'sbom.cdx.json',
    ]);
    assert.equal(signed.code, 0, signed.stderr);
    assert.equal(
      signed.stdout,
      'wrote sbom.cdx.json.sigstore.json\nwrote database-operator-0.1.0.tgz.sigstore.json\nwrote database-operator-0.1.0.tgz.sbom.sigstore.json\n',
    );
    const bundle = JSON.parse(await readFile(join(dir, 'sbom.cdx.json.sigstore.json'), 'utf8')) as {
      mediaType: string;
      verificationMaterial: Record<string, unknown>;
    };
    assert.match(bundle.mediaType, /^application\/vnd\.dev\.sigstore\.bundle\.v0\.3\+json$/);
    assert.deepEqual(bundle.verificationMaterial.tlogEntries ?? [], [], 'nothing was logged');

    const verified = await cli([
      'verify',
      'sbom.cdx.json',
      'database-operator-0.1.0.tgz',
      '--key',
      'release.pub',
      '--sbom',
      'sbom.cdx.json',
    ]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.equal(
      verified.stdout,
      'sbom.cdx.json: signature verified\ndatabase-operator-0.1.0.tgz: signature verified\ndatabase-operator-0.1.0.tgz: SBOM attestation verified (sbom.cdx.json)\n',
    );
  });

  test('a one-byte change to the SBOM fails its signature and its attestation; another key fails too', async () => {
    const path = join(dir, 'sbom.cdx.json');
    const original = await readFile(path);
    const tampered = Buffer.from(original);
    const at = tampered.indexOf('"specVersion": "1.6"') + '"specVersion": "1.'.length;
    tampered[at] = '5'.charCodeAt(0);
    await writeFile(path, tampered);
    try {
      const blob = await cli(['verify', 'sbom.cdx.json', '--key', 'release.pub']);
      assert.equal(blob.code, 1);
      assert.match(blob.stderr, /^error: cosign verify-blob failed: Error: .*invalid signature.*\n$/);
      const attested = await cli([
        'verify',
        'database-operator-0.1.0.tgz',
        '--key',
        'release.pub',
        '--sbom',
        'sbom.cdx.json',
      ]);
      assert.equal(attested.code, 1);
      assert.equal(
        attested.stderr,
        'error: sbom.cdx.json is not the SBOM attested in database-operator-0.1.0.tgz.sbom.sigstore.json\n',
      );
    } finally {
      await writeFile(path, original);
    }
    const otherKey = await cli(['verify', 'sbom.cdx.json', '--key', 'other.pub']);
    assert.equal(otherKey.code, 1);
    assert.match(otherKey.stderr, /^error: cosign verify-blob failed: /);
  });

  test('a one-byte change to the artifact fails its signature and its SBOM attestation', async () => {
    const path = join(dir, 'database-operator-0.1.0.tgz');
    const original = await readFile(path);
    await writeFile(path, Buffer.concat([original.subarray(0, -1), Buffer.from('!')]));
    try {
      const result = await cli(['verify', 'database-operator-0.1.0.tgz', '--key', 'release.pub']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^error: cosign verify-blob failed: /);
      // The attestation alone (its subject is the artifact's digest) does not pass either.
      const cosign = env.OPERATOR_RUNTIME_COSIGN!;
      await assert.rejects(
        run(
          cosign,
          [
            'verify-blob-attestation',
            '--key',
            'release.pub',
            '--bundle',
            'database-operator-0.1.0.tgz.sbom.sigstore.json',
            '--type',
            'cyclonedx',
            '--insecure-ignore-tlog=true',
            'database-operator-0.1.0.tgz',
          ],
          { cwd: dir, env },
        ),
      );
    } finally {
      await writeFile(path, original);
    }
  });

  test('bad input: a missing cosign is named with the fix; no file is a usage error', async () => {
    const missing = await runCli(
      ['verify', 'sbom.cdx.json', '--key', 'release.pub', '--cosign', join(dir, 'no-cosign')],
      {
        cwd: dir,
        env,
        stdout: () => undefined,
        stderr: (t) => assert.match(t, /^error: .*no-cosign not found: install cosign \(docs\/supply-chain\.md\)/),
      },
    );
    assert.equal(missing, 2);
    const noKey = await cli(['sign', 'sbom.cdx.json']);
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /required option '-k, --key <key>' not specified/);
  });
});
