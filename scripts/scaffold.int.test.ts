/**
 * `operator-runtime init` as a new user meets it, with nothing but Node and the network: the packed
 * tarball is installed into a tool folder outside the repository and its `operator-runtime` bin
 * scaffolds a project into another temporary folder; the project installs the tarball
 * (offline-first from the npm cache), and with an empty HOME and no asset variable its `pretest`
 * (`operator-runtime testenv use`) downloads envtest's binaries from a loopback index in
 * controller-tools' layout, made from the binaries this repository builds, then its own `npm test`
 * passes against a real TestEnv. A corrupted archive leaves the cache empty and fails with the
 * archive, the expected hash and the fix. The project also passes its test against an existing
 * cluster, type-checks, lints clean and builds; `npm run generate` rewrites its config folder byte
 * for byte (the manifests `init` wrote agree with the scaffold's own code), `npm run bundle` writes
 * an OLM bundle that validates clean, and `npm run sbom` lists its production dependencies and none
 * of its dev tooling. Prints the time from `init` to the green test with a cold cache. The bin also
 * runs on Node 24.
 *
 * (One file, one packed tarball and one scaffold for all of it: each costs tens of seconds.)
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
import { REPO, pack, userEnv, withDist, type PackResult } from './packaging/dist.js';
import { defaultAssetsDir } from '../src/testing/control-plane/binaries.js';
import { currentPlatform, storeFolderName } from '../src/testing/control-plane/envtest/platform.js';
import { TestEnv } from '../src/testing/control-plane/test-env.js';
import { startControlPlaneProcess } from '../src/testing/control-plane/test-support/control-plane-process.js';
import {
  makeEnvtestArchive,
  startLoopbackIndex,
  type FixtureArchive,
  type LoopbackIndex,
} from '../src/testing/control-plane/test-support/loopback-envtest-index.js';

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

/** The environment of a user's shell: no repo-only condition, and not inside this test runner (else the scaffold's `node --test` would skip its files). */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = userEnv(extra);
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/** A new user's shell with an empty HOME: no asset variable; npm keeps its own cache so installs stay offline-first. */
function newUserEnv(home: string, npmCache: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = shellEnv({ HOME: home, npm_config_cache: npmCache, ...extra });
  for (const name of ASSET_VARIABLES) delete env[name];
  return env;
}

/** Runs a command that may fail: its exit code and output. */
async function attempt(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(command, [...args], { ...options, timeout: 300_000, maxBuffer: 64 << 20 });
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

/** Runs a command; its stdout (and stderr with `stderr: true`); fails with the output when it fails. */
async function sh(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number; stderr?: false },
): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, [...args], {
      cwd: options.cwd,
      env: options.env ?? shellEnv(),
      timeout: options.timeout ?? 300_000,
      maxBuffer: 64 << 20,
    });
    return options.stderr === false ? stdout : `${stdout}${stderr}`;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${command} ${args.join(' ')} failed in ${options.cwd}: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.slice(
        0,
        20_000,
      ),
      { cause: error },
    );
  }
}

async function readTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile())) {
    const path = join(name.parentPath, name.name);
    out[path.slice(dir.length + 1)] = await readFile(path, 'utf8');
  }
  return out;
}

describe('operator-runtime init, from the packed tarball', { timeout: 900_000 }, () => {
  let dir: string;
  let packed: PackResult;
  let bin: string;
  let tools: string;
  let project: string;
  let npmCache: string;
  let archive: FixtureArchive;
  let index: LoopbackIndex;
  let configAfterInit: Record<string, string>;

  before(async () => {
    const assets = process.env.OPERATOR_RUNTIME_ASSETS || defaultAssetsDir();
    assert.ok(
      existsSync(join(assets, 'kube-apiserver')),
      `the binaries this repository builds are in ${assets} (scripts/install-control-plane.sh)`,
    );
    dir = await mkdtemp(join(tmpdir(), 'operator-runtime-scaffold-'));
    npmCache = (await run('npm', ['config', 'get', 'cache'], { env: userEnv() })).stdout.trim();
    packed = await withDist(() => pack(dir));
    // The CLI as a user gets it: the tarball installed, its bin linked by npm.
    tools = join(dir, 'tools');
    await mkdir(tools);
    await writeFile(join(tools, 'package.json'), JSON.stringify({ name: 'tools', private: true }));
    await sh('npm', [...NPM_INSTALL, packed.tarball], { cwd: tools });
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

  test('init → npm install → npm test is green against a real TestEnv, its pretest downloading and verifying the binaries into an empty cache', async (t) => {
    const home = await mkdtemp(join(dir, 'home-'));
    const env = newUserEnv(home, npmCache, { OPERATOR_RUNTIME_ENVTEST_INDEX: index.indexUrl });
    const started = performance.now();
    const initOutput = await sh(bin, ['init', project, '--group', 'demo.example.com', '--kind', 'Greeting'], {
      cwd: dir,
      env,
    });
    assert.match(initOutput, /created .*my-operator/);
    configAfterInit = await readTree(join(project, 'config'));
    // The scaffold depends on a version range; here it gets the tarball under test instead.
    const manifestPath = join(project, 'package.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as {
      dependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    assert.match(manifest.dependencies['operator-runtime']!, /^\^\d+\.\d+\.\d+/);
    assert.equal(manifest.scripts.pretest, 'operator-runtime testenv use');
    manifest.dependencies['operator-runtime'] = `file:${packed.tarball}`;
    await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
    await sh('npm', NPM_INSTALL, { cwd: project, env });
    const downloads = () => index.requests.filter((r) => r.endsWith('.tar.gz')).length;
    const downloadsBefore = downloads();
    const output = await sh('npm', ['test'], { cwd: project, env });
    const initToGreenMs = performance.now() - started;
    assert.match(output, /# pass 3\n# fail 0/, output.slice(-8000));
    const dirOf = join(home, '.cache/operator-runtime/envtest/k8s', storeFolderName(VERSION, currentPlatform()));
    assert.ok(output.includes(`control plane v${VERSION} from download: ${dirOf}`), output.slice(0, 4000));
    assert.equal(downloads() - downloadsBefore, 1, 'downloaded once');
    assert.deepEqual((await readdir(dirOf)).sort(), ['etcd', 'kube-apiserver', 'kubectl']);
    t.diagnostic(
      `init → green scaffold test with a cold cache (init, npm install, pretest download of ${((await readFile(archive.file)).length / 2 ** 20).toFixed(0)} MiB from the loopback index, npm test): ${(initToGreenMs / 1000).toFixed(1)} s`,
    );

    // The next pretest finds the cache: no second download.
    const again = await sh('npm', ['run', 'pretest'], { cwd: project, env });
    assert.ok(again.includes(`control plane v${VERSION} from envtest-cache: ${dirOf}`), again);
    assert.equal(downloads() - downloadsBefore, 1, 'no second download');
  });

  test('a corrupted archive leaves the cache empty, and install and npm test exit non-zero naming the archive, the expected hash and the fix', async (t) => {
    assert.ok(configAfterInit, 'the scaffold exists');
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
      const result = await attempt(command, args, { cwd, env });
      assert.notEqual(result.code, 0, result.out);
      assert.ok(result.out.includes(`error: envtest download of ${name}`), result.out);
      assert.ok(result.out.includes(`Expected sha512 ${expected}`), result.out);
      assert.match(result.out, /checksum mismatch.*Nothing was written to .*Fix: /);
      assert.doesNotMatch(result.out, /# pass/, 'no test ran');
      assert.deepEqual(await filesUnder(join(home, '.cache')), [], 'nothing in the cache');
    }
  });

  test('the source-build installer ships in the package', () => {
    assert.ok(existsSync(join(tools, 'node_modules/operator-runtime/scripts/install-control-plane.sh')));
    assert.ok(packed.files.includes('scripts/install-control-plane.sh'));
  });

  test('the scaffold’s own test is green against an existing cluster, and leaves no namespace or CRD behind', async () => {
    assert.ok(configAfterInit, 'the scaffold exists');
    // A cluster the user already runs, as kind's: a control plane in another process, by its kubeconfig.
    const cluster = await startControlPlaneProcess();
    const observer = await TestEnv.start({ existingCluster: { kubeconfigPath: cluster.kubeconfigPath } });
    try {
      const names = async (path: string) =>
        (await observer.request<{ items: { metadata: { name: string } }[] }>('GET', path)).body.items
          .map((i) => i.metadata.name)
          .sort();
      const before = {
        namespaces: await names('/api/v1/namespaces'),
        crds: await names('/apis/apiextensions.k8s.io/v1/customresourcedefinitions'),
      };
      const env = shellEnv({ OPERATOR_RUNTIME_USE_EXISTING_CLUSTER: 'true', KUBECONFIG: cluster.kubeconfigPath });
      // No control-plane binaries needed: nothing is started.
      delete env.OPERATOR_RUNTIME_ASSETS;
      delete env.KUBEBUILDER_ASSETS;
      const output = await sh('npm', ['test'], { cwd: project, env });
      assert.match(output, /# pass 3\n# fail 0/, output);
      assert.deepEqual(await names('/api/v1/namespaces'), before.namespaces, 'no namespace left behind');
      assert.deepEqual(
        await names('/apis/apiextensions.k8s.io/v1/customresourcedefinitions'),
        before.crds,
        'no CRD left behind',
      );
      assert.deepEqual(before.crds, [], 'the cluster had no CRD before');
    } finally {
      await observer.stop();
      await cluster.stop();
    }
  });

  test('the scaffold type-checks strictly, lints clean (operator-runtime lint) and builds to dist/', async () => {
    assert.ok(configAfterInit, 'the scaffold exists');
    await sh('npm', ['run', '--silent', 'typecheck'], { cwd: project });
    // Its reconciler through operator-runtime/eslint's rules, its kind through the conventions: no finding.
    assert.equal(await sh('npm', ['run', '--silent', 'lint'], { cwd: project }), '');
    await sh('npm', ['run', '--silent', 'build'], { cwd: project });
    assert.ok((await readdir(join(project, 'dist'))).includes('main.js'));
  });

  test('npm run sbom writes a CycloneDX SBOM of the production dependencies: the runtime, none of the dev tooling', async () => {
    assert.ok(configAfterInit, 'the scaffold exists');
    const output = await sh('npm', ['run', '--silent', 'sbom'], { cwd: project });
    assert.match(output, /wrote sbom\.cdx\.json \(\d+ components\)/);
    const bom = JSON.parse(await readFile(join(project, 'sbom.cdx.json'), 'utf8')) as {
      bomFormat: string;
      specVersion: string;
      metadata: { component: { name: string } };
      components: { name: string; group?: string; version: string }[];
    };
    assert.deepEqual(
      [bom.bomFormat, bom.specVersion, bom.metadata.component.name],
      ['CycloneDX', '1.6', 'my-operator'],
    );
    const listed = new Set(bom.components.map((c) => (c.group ? `${c.group}/${c.name}` : c.name)));
    for (const name of ['operator-runtime', 'prom-client', 'pino', 'undici', 'yaml']) assert.ok(listed.has(name), name);
    for (const name of ['typescript', 'tsx', '@types/node', '@cyclonedx/cyclonedx-library', 'esbuild'])
      assert.ok(!listed.has(name), `${name} (dev tooling) is not listed`);
  });

  test('npm run generate rewrites config/ byte for byte: what init wrote matches the scaffold’s own schema and controller', async () => {
    assert.ok(configAfterInit, 'the scaffold exists');
    const output = await sh('npm', ['run', '--silent', 'generate'], { cwd: project });
    assert.match(output, /wrote config\/crd\.yaml/);
    assert.deepEqual(Object.keys(configAfterInit).sort(), [
      'crd.yaml',
      'deployment.yaml',
      'health/argocd-cm.yaml',
      'health/flux-health-checks.yaml',
      'kustomization.yaml',
      'rbac.yaml',
      'samples.yaml',
    ]);
    assert.deepEqual(await readTree(join(project, 'config')), configAfterInit);
  });

  test('npm run bundle writes an OLM registry+v1 bundle that `validate bundle` passes clean', async () => {
    assert.ok(configAfterInit, 'the scaffold exists');
    const output = await sh('npm', ['run', '--silent', 'bundle'], { cwd: project });
    assert.match(output, /wrote bundle\/manifests\/my-operator\.clusterserviceversion\.yaml/);
    assert.match(output, /bundle: valid registry\+v1 bundle \(0 error\(s\), 0 warning\(s\)\)/);
    const csv = await readFile(join(project, 'bundle/manifests/my-operator.clusterserviceversion.yaml'), 'utf8');
    assert.match(csv, /^ {2}name: my-operator\.v0\.1\.0$/m, 'named after package.json');
    assert.match(csv, /"kind": "Greeting"/, 'config/samples.yaml is the alm-examples');
  });

  test('without tsx a TypeScript config is refused with the fix (exit 2); a plain .mjs config needs nothing', async () => {
    // tsx is an optional peer: the tool folder has operator-runtime only.
    const project = join(dir, 'plain');
    await mkdir(project);
    await writeFile(join(project, 'operator-runtime.config.ts'), 'export default {};\n');
    const refused = await run(bin, ['generate', 'crds'], { cwd: project, env: shellEnv(), timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /^error: loading .*operator-runtime\.config\.ts needs tsx: npm install --save-dev tsx \(or write the config as \.mjs\)\n$/,
    );
    assert.deepEqual(await readdir(project), ['operator-runtime.config.ts'], 'nothing written');
    // The same project as plain JavaScript, importing the installed package.
    await rm(join(project, 'operator-runtime.config.ts'));
    await writeFile(
      join(tools, 'operator-runtime.config.mjs'),
      `import { Manager } from 'operator-runtime';
import { defineConfig } from 'operator-runtime/codegen';
import { Type, defineCustomKind } from 'operator-runtime/crd';
import { offlineClient } from 'operator-runtime/rbac';
const NOTE = defineCustomKind({ group: 'plain.example.com', names: { kind: 'Note', plural: 'notes' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ text: Type.String() }) } }] });
export default defineConfig({ name: 'note-operator', namespace: 'notes', image: 'example.com/note-operator:1.0.0', kinds: [NOTE], manager: () => { const m = new Manager({ client: offlineClient() }); m.controller('note').for(NOTE).complete(async () => undefined); return m; } });
`,
    );
    const output = await sh(bin, ['generate', 'manifests', '--out', project], { cwd: tools });
    assert.match(output, /wrote .*crd\.yaml/);
    assert.deepEqual((await readdir(project)).sort(), [
      'crd.yaml',
      'deployment.yaml',
      'health',
      'kustomization.yaml',
      'rbac.yaml',
    ]);
    assert.match(await readFile(join(project, 'crd.yaml'), 'utf8'), /name: notes\.plain\.example\.com/);
  });

  test('the bin runs on Node 24 too: --version and generate manifests give the same files', async () => {
    assert.ok(configAfterInit, 'the scaffold exists');
    const node24 = (await sh(join(REPO, 'scripts/install-node24.sh'), [], { cwd: REPO, stderr: false }))
      .trim()
      .split('\n')
      .pop()!;
    const version = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string };
    assert.equal((await sh(node24, [bin, '--version'], { cwd: project, stderr: false })).trim(), version.version);
    await sh(node24, [bin, 'generate', 'manifests', '--out', 'config-node24'], { cwd: project });
    // samples.yaml is the scaffold's hand-written sample, not generated.
    const generated = Object.fromEntries(Object.entries(configAfterInit).filter(([path]) => path !== 'samples.yaml'));
    assert.deepEqual(await readTree(join(project, 'config-node24')), generated);
  });
});
