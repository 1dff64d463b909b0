/**
 * A new user's first `npm test`, with nothing but Node and the network: the packed tarball is
 * installed outside the repository, `operator-runtime init` scaffolds a project, and with an empty
 * HOME and no asset variable the scaffold's `pretest` (`operator-runtime testenv use`) downloads
 * envtest's binaries from a loopback index in controller-tools' layout, made from the binaries
 * this repository builds, then the scaffold's test is green. A corrupted archive leaves the cache
 * empty and fails with the archive, the expected hash and the fix. Prints the time from `init` to
 * the green test with a cold cache.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pack, userEnv, withDist, type PackResult } from './packaging/dist.js';
import { defaultAssetsDir } from '../src/testing/control-plane/binaries.js';
import {
  makeEnvtestArchive,
  startLoopbackIndex,
  type FixtureArchive,
  type LoopbackIndex,
} from '../src/testing/control-plane/test-support/loopback-envtest-index.js';
import { currentPlatform, storeFolderName } from '../src/testing/control-plane/envtest/platform.js';

const run = promisify(execFile);
const NPM_INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
/** The version of the binaries this repository builds, which the fixture archive carries. */
const VERSION = '1.20.2';
const ASSET_VARIABLES = [
  'OPERATOR_RUNTIME_ASSETS',
  'KUBEBUILDER_ASSETS',
  'OPERATOR_RUNTIME_MODERN_ASSETS',
  'OPERATOR_RUNTIME_ETCD',
  'OPERATOR_RUNTIME_KUBE_APISERVER',
  'OPERATOR_RUNTIME_KUBE_CONTROLLER_MANAGER',
  'OPERATOR_RUNTIME_ETCDCTL',
  'OPERATOR_RUNTIME_CACHE_DIR',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
];

/** A user's shell with an empty HOME: no asset variable, not inside this test runner; npm keeps its own cache so installs stay offline-first. */
function newUserEnv(home: string, npmCache: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = userEnv({ HOME: home, npm_config_cache: npmCache, ...extra });
  delete env.NODE_TEST_CONTEXT;
  for (const name of ASSET_VARIABLES) delete env[name];
  return env;
}

async function sh(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeout?: number },
): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(command, [...args], {
      cwd: options.cwd,
      env: options.env,
      timeout: options.timeout ?? 300_000,
      maxBuffer: 64 << 20,
    });
    return { code: 0, out: `${stdout}${stderr}` };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => !e.isDirectory())
    .map((e) => join(e.parentPath, e.name));
}

describe(
  'a first npm test with only Node and the network: envtest binaries from a loopback index',
  { timeout: 900_000 },
  () => {
    let dir: string;
    let packed: PackResult;
    let bin: string;
    let npmCache: string;
    let archive: FixtureArchive;
    let index: LoopbackIndex;
    let project: string;

    before(async () => {
      const assets = process.env.OPERATOR_RUNTIME_ASSETS || defaultAssetsDir();
      assert.ok(
        existsSync(join(assets, 'kube-apiserver')),
        `the binaries this repository builds are in ${assets} (scripts/install-control-plane.sh)`,
      );
      dir = await mkdtemp(join(tmpdir(), 'operator-runtime-testenv-'));
      npmCache = (await run('npm', ['config', 'get', 'cache'], { env: userEnv() })).stdout.trim();
      packed = await withDist(() => pack(dir));
      const tools = join(dir, 'tools');
      await mkdir(tools);
      await writeFile(join(tools, 'package.json'), JSON.stringify({ name: 'tools', private: true }));
      const installed = await sh('npm', [...NPM_INSTALL, packed.tarball], { cwd: tools, env: userEnv() });
      assert.equal(installed.code, 0, installed.out);
      bin = join(tools, 'node_modules/.bin/operator-runtime');
      // Upstream's layout: controller-tools/envtest/{etcd,kube-apiserver,kubectl}, no kube-controller-manager.
      const kubectl = (await run('sh', ['-c', 'command -v kubectl'])).stdout.trim();
      const archives = join(dir, 'archives');
      await mkdir(archives);
      archive = await makeEnvtestArchive({
        version: VERSION,
        platform: currentPlatform(),
        binaries: { etcd: join(assets, 'etcd'), 'kube-apiserver': join(assets, 'kube-apiserver'), kubectl },
        outDir: archives,
      });
      index = await startLoopbackIndex([archive]);
      project = join(dir, 'my-operator');
    });

    after(async () => {
      await index?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    test('init → npm install → npm test is green, its pretest downloading and verifying the binaries into an empty cache', async (t) => {
      const home = await mkdtemp(join(dir, 'home-'));
      const env = newUserEnv(home, npmCache, { OPERATOR_RUNTIME_ENVTEST_INDEX: index.indexUrl });
      const started = performance.now();
      const init = await sh(bin, ['init', project, '--group', 'demo.example.com', '--kind', 'Greeting'], {
        cwd: dir,
        env,
      });
      assert.equal(init.code, 0, init.out);
      const manifestPath = join(project, 'package.json');
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as {
        dependencies: Record<string, string>;
        scripts: Record<string, string>;
      };
      assert.equal(manifest.scripts.pretest, 'operator-runtime testenv use');
      manifest.dependencies['operator-runtime'] = `file:${packed.tarball}`;
      await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
      const install = await sh('npm', NPM_INSTALL, { cwd: project, env });
      assert.equal(install.code, 0, install.out);
      const downloadsBefore = index.requests.filter((r) => r.endsWith('.tar.gz')).length;
      const tested = await sh('npm', ['test'], { cwd: project, env });
      const initToGreenMs = performance.now() - started;
      assert.equal(tested.code, 0, tested.out.slice(-8000));
      assert.match(tested.out, /# pass 3\n# fail 0/, tested.out.slice(-8000));
      const dirOf = join(home, '.cache/operator-runtime/envtest/k8s', storeFolderName(VERSION, currentPlatform()));
      assert.ok(tested.out.includes(`control plane v${VERSION} from download: ${dirOf}`), tested.out.slice(0, 4000));
      assert.equal(index.requests.filter((r) => r.endsWith('.tar.gz')).length - downloadsBefore, 1, 'downloaded once');
      assert.deepEqual((await readdir(dirOf)).sort(), ['etcd', 'kube-apiserver', 'kubectl']);
      t.diagnostic(
        `init → green scaffold test with a cold cache (init, npm install, pretest download of ${(archive ? (await readFile(archive.file)).length / 2 ** 20 : 0).toFixed(0)} MiB from the loopback index, npm test): ${(initToGreenMs / 1000).toFixed(1)} s`,
      );

      // A second run finds the cache: no download.
      const again = await sh('npm', ['test'], { cwd: project, env });
      assert.equal(again.code, 0, again.out.slice(-4000));
      assert.match(again.out, /from envtest-cache/);
      assert.equal(
        index.requests.filter((r) => r.endsWith('.tar.gz')).length - downloadsBefore,
        1,
        'no second download',
      );
    });

    test('a corrupted archive leaves the cache empty, and install and npm test exit non-zero naming the archive, the expected hash and the fix', async (t) => {
      assert.ok(existsSync(join(project, 'node_modules')), 'the scaffold exists');
      index.fault(VERSION, 'corrupt');
      t.after(() => index.fault(VERSION, undefined));
      const home = await mkdtemp(join(dir, 'home-corrupt-'));
      const env = newUserEnv(home, npmCache, { OPERATOR_RUNTIME_ENVTEST_INDEX: index.indexUrl });
      const expected = createHash('sha512')
        .update(await readFile(archive.file))
        .digest('hex');
      const name = `envtest-v${VERSION}-${currentPlatform().os}-${currentPlatform().arch}.tar.gz`;
      for (const [command, args, cwd] of [
        [bin, ['testenv', 'install'], dir],
        ['npm', ['test'], project],
      ] as const) {
        const result = await sh(command, args, { cwd, env });
        assert.notEqual(result.code, 0, result.out);
        assert.ok(result.out.includes(`error: envtest download of ${name}`), result.out);
        assert.ok(result.out.includes(`Expected sha512 ${expected}`), result.out);
        assert.match(result.out, /checksum mismatch.*Nothing was written to .*Fix: /);
        assert.doesNotMatch(result.out, /# pass/, 'no test ran');
        assert.deepEqual(await filesUnder(join(home, '.cache')), [], 'nothing in the cache');
      }
    });

    test('the source-build installer ships in the package', () => {
      assert.ok(existsSync(join(dir, 'tools/node_modules/operator-runtime/scripts/install-control-plane.sh')));
      assert.ok(packed.files.includes('scripts/install-control-plane.sh'));
    });
  },
);
