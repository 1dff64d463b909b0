/**
 * `generate bundle`, `validate bundle` and `--kubernetes-version` through the CLI in-process: the
 * files and lines a user sees, the exit codes (0 clean, 1 a failed check, 2 bad input) and nothing
 * written when a check refuses.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkGeneratedApis } from './api-version-check.js';
import { CliCheckFailedError } from './cli-error.js';
import { runCli } from './program.js';

const SRC = fileURLToPath(new URL('..', import.meta.url));
const CONFIG = `import { defineCustomKind, Type } from '${SRC}crd/index.ts';
import { Manager } from '${SRC}manager/manager.ts';
import { offlineClient } from '${SRC}rbac/offline-client.ts';
const WIDGET = defineCustomKind({
  group: 'example.com',
  names: { kind: 'Widget', plural: 'widgets' },
  scope: 'Namespaced',
  versions: [{ name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ size: Type.Integer({ minimum: 1 }) }) } }],
});
export default {
  name: 'widget-operator',
  namespace: 'widget-system',
  image: 'example.com/widget-operator:1.2.3',
  kinds: [WIDGET],
  manager: () => {
    const manager = new Manager({ client: offlineClient() });
    manager.controller('widget').for(WIDGET).complete(async () => undefined);
    return manager;
  },
};
`;
const SAMPLES =
  'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: small\n  namespace: default\nspec:\n  size: 1\n';
const PDB_V1BETA1 =
  'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: widget\nspec:\n  minAvailable: 1\n';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('operator-runtime generate bundle / validate bundle', () => {
  let root: string;
  let n = 0;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'operator-runtime-bundle-cli-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function project(files: Record<string, string>): Promise<string> {
    const dir = join(root, `project-${++n}`);
    for (const [name, content] of Object.entries(files)) {
      await mkdir(join(dir, name, '..'), { recursive: true });
      await writeFile(join(dir, name), content);
    }
    return dir;
  }

  async function cli(cwd: string, ...argv: string[]): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { cwd, stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr };
  }

  test('generate bundle takes the version from package.json and the samples from config/samples.yaml; validate passes', async () => {
    const dir = await project({
      'operator-runtime.config.ts': CONFIG,
      'package.json': JSON.stringify({ name: 'widget-operator', version: '1.2.3' }),
      'config/samples.yaml': SAMPLES,
    });
    const generated = await cli(dir, 'generate', 'bundle');
    assert.equal(generated.code, 0, generated.stderr);
    assert.deepEqual(generated.stdout.trim().split('\n'), [
      'wrote bundle/manifests/widget-operator.clusterserviceversion.yaml',
      'wrote bundle/manifests/example.com_widgets.yaml',
      'wrote bundle/manifests/widget-operator-metrics_v1_service.yaml',
      'wrote bundle/manifests/widget-operator-allow-metrics_networking.k8s.io_v1_networkpolicy.yaml',
      'wrote bundle/metadata/annotations.yaml',
      'wrote bundle/bundle.Dockerfile',
    ]);
    const csv = await readFile(join(dir, 'bundle/manifests/widget-operator.clusterserviceversion.yaml'), 'utf8');
    assert.match(csv, /^ {2}name: widget-operator\.v1\.2\.3$/m);
    assert.match(csv, /"kind": "Widget"/);
    const annotations = await readFile(join(dir, 'bundle/metadata/annotations.yaml'), 'utf8');
    assert.match(annotations, /operators\.operatorframework\.io\.bundle\.mediatype\.v1: registry\+v1/);
    assert.match(annotations, /operators\.operatorframework\.io\.bundle\.package\.v1: widget-operator/);
    assert.match(annotations, /operators\.operatorframework\.io\.bundle\.channel\.default\.v1: alpha/);
    const validated = await cli(dir, 'validate', 'bundle', 'bundle');
    assert.deepEqual(validated, {
      code: 0,
      stdout: 'bundle: valid registry+v1 bundle (0 error(s), 0 warning(s))\n',
      stderr: '',
    });
  });

  test('--bundle-version wins; a version that is not semver is refused (exit 2) and nothing is written', async () => {
    const dir = await project({ 'operator-runtime.config.ts': CONFIG, 'config/samples.yaml': SAMPLES });
    const refused = await cli(dir, 'generate', 'bundle', '--bundle-version', '1.2');
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /^error: config .*: invalid option config\.bundle\.version: must be a semantic version/,
    );
    assert.deepEqual(await readdir(dir), ['config', 'operator-runtime.config.ts']);
    const run = await cli(dir, 'generate', 'bundle', '--bundle-version', '2.0.0-rc.1', '--out', 'out');
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      await readFile(join(dir, 'out/manifests/widget-operator.clusterserviceversion.yaml'), 'utf8'),
      /name: widget-operator\.v2\.0\.0-rc\.1/,
    );
  });

  test('a sample of a kind the operator does not own is refused, naming it', async () => {
    const dir = await project({
      'operator-runtime.config.ts': CONFIG,
      'package.json': '{"version":"1.0.0"}',
      'config/samples.yaml': SAMPLES.replace('Widget', 'Gadget'),
    });
    const run = await cli(dir, 'generate', 'bundle');
    assert.equal(run.code, 2);
    assert.match(
      run.stderr,
      /invalid option config\.bundle\.samples\[0\]: example\.com\/v1 Gadget is not a kind the operator owns at its storage version \(example\.com\/v1 Widget\)/,
    );
  });

  test('validate bundle prints one line per problem naming file and field, warnings apart, and exits 1', async () => {
    const dir = await project({
      'operator-runtime.config.ts': CONFIG,
      'package.json': '{"version":"1.0.0"}',
      'config/samples.yaml': SAMPLES,
    });
    assert.equal((await cli(dir, 'generate', 'bundle')).code, 0);
    await writeFile(join(dir, 'bundle/manifests/widget_policy_v1beta1_poddisruptionbudget.yaml'), PDB_V1BETA1);
    const at124 = await cli(dir, 'validate', 'bundle', 'bundle', '--kubernetes-version', '1.24');
    assert.equal(at124.code, 0, 'a deprecated API only warns');
    assert.equal(
      at124.stderr,
      'warning: bundle/manifests/widget_policy_v1beta1_poddisruptionbudget.yaml: apiVersion: policy/v1beta1 PodDisruptionBudget widget: policy/v1beta1 PodDisruptionBudget is deprecated and removed in Kubernetes 1.25; use policy/v1\n',
    );
    const run = await cli(dir, 'validate', 'bundle', 'bundle', '--kubernetes-version', '1.25');
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.deepEqual(run.stderr.trim().split('\n'), [
      'error: bundle/manifests/widget_policy_v1beta1_poddisruptionbudget.yaml: apiVersion: policy/v1beta1 PodDisruptionBudget widget: policy/v1beta1 PodDisruptionBudget is not served by Kubernetes 1.25 (removed in 1.25); use policy/v1',
      'error: bundle: 1 error(s), 0 warning(s)',
    ]);
  });

  test('validate bundle on a folder that is not there is bad input (exit 2)', async () => {
    const run = await cli(root, 'validate', 'bundle', 'missing');
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^error: cannot read the bundle folder .*missing \(ENOENT\)\n$/);
  });

  test('generate --kubernetes-version refuses a removed API, naming file and replacement, before writing anything', () => {
    const files = [
      { path: 'ok.yaml', content: 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: a\n' },
      { path: 'pdb.yaml', content: PDB_V1BETA1 },
    ];
    assert.deepEqual(checkGeneratedApis(files, '1.24'), [
      'pdb.yaml: policy/v1beta1 PodDisruptionBudget widget: policy/v1beta1 PodDisruptionBudget is deprecated and removed in Kubernetes 1.25; use policy/v1',
    ]);
    assert.throws(
      () => checkGeneratedApis(files, '1.30'),
      (error: unknown) =>
        error instanceof CliCheckFailedError &&
        error.problems.length === 1 &&
        error.problems[0] ===
          'pdb.yaml: policy/v1beta1 PodDisruptionBudget widget: policy/v1beta1 PodDisruptionBudget is not served by Kubernetes 1.30 (removed in 1.25); use policy/v1',
    );
  });

  test('generate manifests --kubernetes-version passes for 1.25 and 1.37; a bad version is bad input', async () => {
    const dir = await project({ 'operator-runtime.config.ts': CONFIG });
    for (const version of ['1.25', 'v1.37.0']) {
      const run = await cli(dir, 'generate', 'manifests', '--kubernetes-version', version);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
    }
    const bad = await cli(dir, 'generate', 'crds', '--kubernetes-version', 'latest', '--out', 'never');
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'error: --kubernetes-version "latest" is not a Kubernetes version such as 1.30\n');
    assert.ok(!(await readdir(dir)).includes('never'));
  });
});
