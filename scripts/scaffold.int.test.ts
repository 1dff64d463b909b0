/**
 * `operator-runtime init` as a new user meets it: the packed tarball is installed into a tool
 * folder outside the repository and its `operator-runtime` bin scaffolds a project into another
 * temporary folder; the project installs the tarball (offline-first from the npm cache), its own
 * `npm test` passes against a real TestEnv, it type-checks, lints clean and builds, `npm run generate`
 * rewrites its config folder byte for byte (the manifests `init` wrote agree with the scaffold's own code),
 * `npm run bundle` writes an OLM bundle that validates clean, and `npm run sbom` lists its production
 * dependencies and none of its dev tooling.
 * Prints the time from `init` to the green scaffold test. The bin also runs on Node 24.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO, pack, userEnv, withDist, type PackResult } from './packaging/dist.js';
import { TestEnv } from '../src/testing/control-plane/test-env.js';
import { startControlPlaneProcess } from '../src/testing/control-plane/test-support/control-plane-process.js';

const run = promisify(execFile);
const NPM_INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/** The environment of a user's shell: no repo-only condition, and not inside this test runner (else the scaffold's `node --test` would skip its files). */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = userEnv(extra);
  delete env.NODE_TEST_CONTEXT;
  return env;
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
  let initToGreenMs: number;
  let configAfterInit: Record<string, string>;

  before(async () => {
    assert.ok(
      process.env.OPERATOR_RUNTIME_ASSETS,
      'OPERATOR_RUNTIME_ASSETS names the control-plane binaries (scripts/test.sh sets it)',
    );
    dir = await mkdtemp(join(tmpdir(), 'operator-runtime-scaffold-'));
    packed = await withDist(() => pack(dir));
    // The CLI as a user gets it: the tarball installed, its bin linked by npm.
    tools = join(dir, 'tools');
    await mkdir(tools);
    await writeFile(join(tools, 'package.json'), JSON.stringify({ name: 'tools', private: true }));
    await sh('npm', [...NPM_INSTALL, packed.tarball], { cwd: tools });
    bin = join(tools, 'node_modules/.bin/operator-runtime');
    project = join(dir, 'my-operator');
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('init scaffolds a project whose own integration test passes against a real TestEnv', async (t) => {
    const started = performance.now();
    const initOutput = await sh(bin, ['init', project, '--group', 'demo.example.com', '--kind', 'Greeting'], {
      cwd: dir,
    });
    assert.match(initOutput, /created .*my-operator/);
    configAfterInit = await readTree(join(project, 'config'));
    // The scaffold depends on a version range; here it gets the tarball under test instead.
    const manifestPath = join(project, 'package.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { dependencies: Record<string, string> };
    assert.match(manifest.dependencies['operator-runtime']!, /^\^\d+\.\d+\.\d+/);
    manifest.dependencies['operator-runtime'] = `file:${packed.tarball}`;
    await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
    await sh('npm', NPM_INSTALL, { cwd: project });
    const output = await sh('npm', ['test'], {
      cwd: project,
      env: shellEnv({ OPERATOR_RUNTIME_ASSETS: process.env.OPERATOR_RUNTIME_ASSETS! }),
    });
    initToGreenMs = performance.now() - started;
    assert.match(output, /# pass 3\n# fail 0/, output);
    t.diagnostic(`init → green scaffold test (init, npm install, npm test): ${(initToGreenMs / 1000).toFixed(1)} s`);
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
