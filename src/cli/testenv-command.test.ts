import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './program.js';
import {
  fakeBinary,
  makeRawArchive,
  startLoopbackIndex,
  type LoopbackIndex,
} from '../testing/control-plane/test-support/loopback-envtest-index.js';
import { currentPlatform, storeFolderName } from '../testing/control-plane/envtest/platform.js';

let dir: string;
let index: LoopbackIndex;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'testenv-cli-'));
  await mkdir(join(dir, 'archives'));
  const archive = await makeRawArchive({
    version: '1.30.1',
    platform: currentPlatform(),
    entries: ['etcd', 'kube-apiserver', 'kubectl'].map(fakeBinary),
    outDir: join(dir, 'archives'),
  });
  index = await startLoopbackIndex([archive]);
});
after(async () => {
  await index?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function cli(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    cwd: dir,
    env,
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
  });
  return { code, stdout, stderr };
}

test('testenv use -p downloads into the cache and prints only the folder; list and cleanup see it', async () => {
  const home = await mkdtemp(join(dir, 'home-'));
  const env = { HOME: home, PATH: '', OPERATOR_RUNTIME_ENVTEST_INDEX: index.indexUrl };
  const expected = join(home, '.cache/operator-runtime/envtest/k8s', storeFolderName('1.30.1', currentPlatform()));
  assert.deepEqual(await cli(['testenv', 'use', '1.30.x', '-p'], env), {
    code: 0,
    stdout: `${expected}\n`,
    stderr: '',
  });
  const listed = await cli(['testenv', 'list', '-i'], env);
  assert.match(listed.stdout, /^\(installed\) {2}v1\.30\.1 /);
  assert.deepEqual(await cli(['testenv', 'cleanup'], env), { code: 0, stdout: `removed ${expected}\n`, stderr: '' });
});

test('a failure is one message and exit 1, no stack: an unknown version, an index over plain http elsewhere', async () => {
  const env = { HOME: await mkdtemp(join(dir, 'home-')), PATH: '' };
  const unknown = await cli(['testenv', 'install', '1.99.0', '--index', index.indexUrl], env);
  assert.equal(unknown.code, 1);
  assert.match(
    unknown.stderr,
    /^error: the envtest index .* has no version matching 1\.99\.0 \(newest: 1\.30\.1\)\. Nothing was downloaded\. Fix: /,
  );
  assert.doesNotMatch(unknown.stderr, /\n\s+at /);
  const insecure = await cli(['testenv', 'install', '--index', 'http://mirror.example/envtest-releases.yaml'], env);
  assert.equal(insecure.code, 1);
  assert.match(insecure.stderr, /must be https \(https only, plain http on loopback only\)/);
});

test('testenv use fetches nothing when the tests run against an existing cluster (the scaffold pretest on kind or k3d)', async () => {
  const home = await mkdtemp(join(dir, 'home-'));
  const env = {
    HOME: home,
    PATH: '',
    OPERATOR_RUNTIME_ENVTEST_INDEX: index.indexUrl,
    OPERATOR_RUNTIME_USE_EXISTING_CLUSTER: 'true',
  };
  const used = await cli(['testenv', 'use'], env);
  assert.equal(used.code, 0);
  assert.match(used.stdout, /OPERATOR_RUNTIME_USE_EXISTING_CLUSTER is set/);
  const listed = await cli(['testenv', 'list', '-i'], { ...env, OPERATOR_RUNTIME_USE_EXISTING_CLUSTER: '' });
  assert.doesNotMatch(listed.stdout, /\(installed\)/);
});
