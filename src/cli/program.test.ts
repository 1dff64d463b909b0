/**
 * The CLI in-process: commands, --help/--version, and every kind of bad input giving one line, exit
 * code 2 and no file left behind. The manifest generators are stubbed (their own tests cover them);
 * scripts/scaffold.int.test.ts runs the real CLI from the packed tarball.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cliVersion, runCli } from './program.js';

/** The config imports the runtime from source by path (a temp folder cannot resolve 'operator-runtime'). */
const SRC = fileURLToPath(new URL('..', import.meta.url));
const CONFIG = 'operator-runtime.config.ts';
const config = (overrides = '') => `import { defineCustomKind, Type } from '${SRC}crd/index.ts';
import { Manager } from '${SRC}manager/manager.ts';
import { offlineClient } from '${SRC}rbac/offline-client.ts';
import { kinds } from '${SRC}client/kinds.ts';
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
    manager.controller('widget').for(WIDGET).owns(kinds.ConfigMap).writes(kinds.ConfigMap, ['create']).complete(async () => undefined);
    return manager;
  },
  ${overrides}
};
`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('operator-runtime CLI', () => {
  let root: string;
  let n = 0;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'operator-runtime-cli-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** A fresh project folder holding `files`. */
  async function project(files: Record<string, string>): Promise<string> {
    const dir = join(root, `project-${++n}`);
    await mkdir(dir);
    for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
    return dir;
  }

  async function cli(cwd: string, ...argv: string[]): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { cwd, stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr };
  }

  /** Bad input: exit code 2, one line on stderr matching `message`, nothing on stdout. */
  function assertUsageError(run: Run, message: RegExp): void {
    assert.equal(run.code, 2, `exit code 2 (stderr: ${run.stderr})`);
    assert.match(run.stderr, message);
    assert.equal(run.stderr.trimEnd().split('\n').length, 1, `one line: ${run.stderr}`);
  }

  test('--version prints the package version; --help works on every command', async () => {
    const version = await cli(root, '--version');
    assert.deepEqual(version, { code: 0, stdout: `${cliVersion()}\n`, stderr: '' });
    for (const argv of [
      ['--help'],
      ['generate', '--help'],
      ['generate', 'crds', '--help'],
      ['generate', 'rbac', '--help'],
      ['generate', 'manifests', '--help'],
      ['init', '--help'],
      ['help', 'init'],
    ]) {
      const run = await cli(root, ...argv);
      assert.equal(run.code, 0, argv.join(' '));
      assert.match(run.stdout, /^Usage: operator-runtime/m, argv.join(' '));
    }
    assert.match((await cli(root, 'generate', 'manifests', '--help')).stdout, /--config <file>[\s\S]*--out <dir>/);
    assert.match((await cli(root, 'init', '--help')).stdout, /--group <group>[\s\S]*--kind <kind>[\s\S]*--name <name>/);
  });

  test('no arguments prints the help and exits 2', async () => {
    const run = await cli(root);
    assert.equal(run.code, 2);
    assert.match(run.stdout, /Usage: operator-runtime/);
  });

  test('generate manifests writes CRDs, RBAC, the operator objects and a kustomization naming them', async () => {
    const dir = await project({ [CONFIG]: config() });
    const run = await cli(dir, 'generate', 'manifests');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.stdout.trim().split('\n'), [
      'wrote config/crd.yaml',
      'wrote config/rbac.yaml',
      'wrote config/deployment.yaml',
      'wrote config/health/flux-health-checks.yaml',
      'wrote config/health/argocd-cm.yaml',
      'wrote config/kustomization.yaml',
    ]);
    const kustomization = parseAllDocuments(
      await readFile(join(dir, 'config/kustomization.yaml'), 'utf8'),
    )[0]!.toJS() as { resources: string[] };
    assert.deepEqual(kustomization.resources, ['crd.yaml', 'rbac.yaml', 'deployment.yaml']);
    const kinds = parseAllDocuments(await readFile(join(dir, 'config/deployment.yaml'), 'utf8')).map(
      (d) => (d.toJS() as { kind: string }).kind,
    );
    assert.deepEqual(kinds, ['Namespace', 'ServiceAccount', 'Deployment', 'Service', 'NetworkPolicy']);
    const crd = await readFile(join(dir, 'config/crd.yaml'), 'utf8');
    assert.match(
      crd,
      /^# Generated by operator-runtime - do not edit\.\n# Regenerate: npx operator-runtime generate manifests\n/,
    );
    assert.equal(
      (parseAllDocuments(crd)[0]!.toJS() as { metadata: { name: string } }).metadata.name,
      'widgets.example.com',
    );
    const rbac = parseAllDocuments(await readFile(join(dir, 'config/rbac.yaml'), 'utf8')).map(
      (d) => d.toJS() as { kind: string; rules?: { resources?: string[]; verbs: string[] }[] },
    );
    const role = rbac.find((o) => o.kind === 'ClusterRole');
    assert.ok(
      role?.rules?.some((r) => r.resources?.includes('configmaps') && r.verbs.includes('create')),
      JSON.stringify(rbac),
    );
  });

  test('generate crds/rbac write only their file; --out and the config outDir choose the folder', async () => {
    const dir = await project({ [CONFIG]: config(`outDir: 'deploy/base'`) });
    assert.deepEqual(await cli(dir, 'generate', 'crds'), {
      code: 0,
      stdout: 'wrote deploy/base/crd.yaml\n',
      stderr: '',
    });
    assert.deepEqual(await cli(dir, 'generate', 'rbac', '--out', 'elsewhere'), {
      code: 0,
      stdout: 'wrote elsewhere/rbac.yaml\n',
      stderr: '',
    });
    assert.deepEqual(await readdir(join(dir, 'deploy/base')), ['crd.yaml']);
  });

  test('a plain JavaScript config loads as it is', async () => {
    const dir = await project({
      'operator-runtime.config.mjs': `export default { name: 'widget-operator', namespace: 'widget-system', image: 'example.com/w:1.0.0', kinds: [], manager: () => ({}) };\n`,
    });
    // No kinds: nothing for crds — still a clean, one-line answer.
    assertUsageError(await cli(dir, 'generate', 'crds'), /defines nothing to generate for "crds" \(no kinds\)/);
  });

  test('output is deterministic: two runs give the same bytes', async () => {
    const dir = await project({ [CONFIG]: config() });
    await cli(dir, 'generate', 'manifests', '--out', 'a');
    await cli(dir, 'generate', 'manifests', '--out', 'b');
    const files = await readdir(join(dir, 'a'), { recursive: true });
    for (const file of files.filter((f) => f.endsWith('.yaml')))
      assert.equal(await readFile(join(dir, 'a', file), 'utf8'), await readFile(join(dir, 'b', file), 'utf8'), file);
  });

  test('init scaffolds a project: sources, tests, Dockerfile, README and the generated Kustomize base', async () => {
    // The operator is named after the folder; only the kind's own files come from the kind.
    const target = join(root, 'pizza-shop');
    const run = await cli(root, 'init', target, '--group', 'shop.example.org', '--kind', 'PizzaOrder');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /created .*pizza-shop \(\d+ files\)/);
    const files = (await readdir(target, { recursive: true }))
      .filter((f) => !['src', 'config', 'config/health'].includes(f))
      .sort();
    assert.deepEqual(files, [
      '.dockerignore',
      '.gitignore',
      'Dockerfile',
      'README.md',
      'config/crd.yaml',
      'config/deployment.yaml',
      'config/health/argocd-cm.yaml',
      'config/health/flux-health-checks.yaml',
      'config/kustomization.yaml',
      'config/rbac.yaml',
      'config/samples.yaml',
      'operator-runtime.config.ts',
      'package.json',
      'src/main.ts',
      'src/operator.int.test.ts',
      'src/operator.simulation.test.ts',
      'src/operator.ts',
      'src/pizza-order-reconciler.ts',
      'src/pizza-order.ts',
      'tsconfig.build.json',
      'tsconfig.json',
    ]);
    const manifest = JSON.parse(await readFile(join(target, 'package.json'), 'utf8')) as {
      name: string;
      dependencies: Record<string, string>;
    };
    assert.equal(manifest.name, 'pizza-shop');
    assert.equal(manifest.dependencies['operator-runtime'], `^${cliVersion()}`);
    const kindSource = await readFile(join(target, 'src/pizza-order.ts'), 'utf8');
    assert.match(
      kindSource,
      /export const PIZZA_ORDER = defineCustomKind\(\{\s+group: 'shop\.example\.org',\s+names: \{ kind: 'PizzaOrder', plural: 'pizzaorders', singular: 'pizzaorder' \}/,
    );
    const crd = parseAllDocuments(await readFile(join(target, 'config/crd.yaml'), 'utf8'))[0]!.toJS() as {
      metadata: { name: string };
    };
    assert.equal(crd.metadata.name, 'pizzaorders.shop.example.org');
    const deployment = parseAllDocuments(await readFile(join(target, 'config/deployment.yaml'), 'utf8')).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } },
    );
    assert.deepEqual(
      deployment.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`),
      [
        'Namespace//pizza-shop-system',
        'ServiceAccount/pizza-shop-system/pizza-shop',
        'Deployment/pizza-shop-system/pizza-shop',
        'Service/pizza-shop-system/pizza-shop-metrics',
        'NetworkPolicy/pizza-shop-system/pizza-shop-allow-metrics',
      ],
    );
    assert.deepEqual(
      (await readdir(root)).filter((n) => n.includes('operator-runtime-')),
      [],
      'no temporary folder left',
    );
  });

  test('the executable (main.ts, as the bin runs it) exits 0 on success and 2 on bad input, one line on stderr', async () => {
    const main = fileURLToPath(new URL('./main.ts', import.meta.url));
    // From the repository, where --import tsx resolves.
    const exec = (...argv: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', main, ...argv], {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        timeout: 60_000,
      }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({
          code: error.code,
          stdout: error.stdout ?? '',
          stderr: error.stderr ?? '',
        }),
      );
    assert.deepEqual(await exec('--version'), { code: 0, stdout: `${cliVersion()}\n`, stderr: '' });
    const bad = await exec('generate', 'everything');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^error: unknown command 'everything'\n$/);
    assert.match(
      await readFile(main, 'utf8'),
      /^#!\/usr\/bin\/env node\n/,
      'a shebang: npm links the built file as the bin',
    );
  });

  describe('bad input: one line naming what is wrong, exit code 2, nothing written', () => {
    test('unknown command and unknown generate target', async () => {
      assertUsageError(await cli(root, 'generat'), /unknown command 'generat'/);
      assertUsageError(await cli(root, 'generate', 'crd'), /unknown command 'crd'/);
      assertUsageError(await cli(root, 'generate', 'crds', '--frobnicate'), /unknown option '--frobnicate'/);
    });

    test('an unknown command fails even with --version (the global flag does not win over it)', async () => {
      for (const flag of ['--version', '-v']) {
        assertUsageError(await cli(root, 'deploy', flag), /^error: unknown command 'deploy'\n$/);
        assertUsageError(await cli(root, flag, 'deploy'), /unknown command 'deploy'/);
        assertUsageError(await cli(root, 'generate', 'crd', flag), /unknown command 'crd' \(Did you mean crds\?\)/);
      }
      // A known command with the flag still prints the version.
      const known = await cli(root, 'generate', '--version');
      assert.deepEqual(known, { code: 0, stdout: `${cliVersion()}\n`, stderr: '' });
    });

    test('missing config: none in the folder, or a --config that does not exist', async () => {
      const dir = await project({});
      assertUsageError(
        await cli(dir, 'generate', 'manifests'),
        /no operator-runtime\.config\.ts in .*project-\d+ \(pass --config <file>\)/,
      );
      assertUsageError(await cli(dir, 'generate', 'crds', '--config', 'nope.ts'), /config file not found: .*nope\.ts/);
      assert.deepEqual(await readdir(dir), []);
    });

    test('invalid config: each wrong field is named', async () => {
      const cases: [string, RegExp][] = [
        [`export const notDefault = 1;\n`, /has no default export/],
        [config(`kinds: [{ kind: 'Widget' }],`), /invalid option config\.kinds\[0\]: is not a custom kind/],
        [config(`name: 'Widget_Operator'`), /invalid option config\.name: must be a DNS label.*"Widget_Operator"/],
        [config(`image: 'example.com/widget-operator'`), /invalid option config\.image: must name a tag or digest/],
        [config(`image: 'example.com/widget-operator:latest'`), /invalid option config\.image: must not use :latest/],
        [config(`kinds: 'widgets'`), /invalid option config\.kinds/],
        [config(`manager: undefined`), /invalid option config\.manager: must be a function/],
        [config(`manager: () => 42`), /invalid option config\.manager: must return a Manager/],
        [`export default {;\n`, /cannot load config .*: /],
        [`throw new Error('boom in the config');\n`, /cannot load config .*: boom in the config/],
      ];
      for (const [source, message] of cases) {
        const dir = await project({ [CONFIG]: source });
        assertUsageError(await cli(dir, 'generate', 'manifests'), message);
        assert.deepEqual(await readdir(dir), [CONFIG], `nothing written for ${message}`);
      }
    });

    test('an unwritable output folder: nothing written, no temporary folder left', async () => {
      const dir = await project({ [CONFIG]: config(), 'a-file': 'not a folder' });
      // Tests run as root, which ignores permission bits: a path through a regular file cannot be written by anyone.
      assertUsageError(
        await cli(dir, 'generate', 'manifests', '--out', 'a-file/config'),
        /cannot write to .*a-file\/config \((ENOTDIR|EEXIST)\); nothing was written/,
      );
      assert.deepEqual((await readdir(dir)).sort(), ['a-file', CONFIG]);
      assert.equal(await readFile(join(dir, 'a-file'), 'utf8'), 'not a folder');
    });

    test('init: invalid kind, group or name; existing non-empty target', async () => {
      assertUsageError(
        await cli(root, 'init', join(root, 'new-1'), '--kind', 'widget'),
        /--kind must be PascalCase .*"widget"/,
      );
      assertUsageError(
        await cli(root, 'init', join(root, 'new-2'), '--group', 'Example'),
        /--group must be a DNS subdomain with a dot .*"Example"/,
      );
      assertUsageError(
        await cli(root, 'init', join(root, 'new-3'), '--name', 'My Operator'),
        /--name must be a DNS label .*"My Operator"/,
      );
      assertUsageError(await cli(root, 'init'), /missing required argument 'dir'/);
      // Regression: `--kind Main` used to exit 0 with the process entry written over the kind's file.
      assertUsageError(
        await cli(root, 'init', join(root, 'new-4'), '--kind', 'Main'),
        /--kind Main is reserved: its file src\/main\.ts is src\/main\.ts, which the scaffold writes itself/,
      );
      assertUsageError(
        await cli(root, 'init', join(root, 'new-5'), '--kind', 'Operator'),
        /--kind Operator is reserved/,
      );
      assertUsageError(
        await cli(root, 'init', join(root, '___')),
        /cannot derive the operator name from the folder name "___".*pass --name/,
      );
      const existing = await project({ 'keep.txt': 'mine' });
      assertUsageError(await cli(root, 'init', existing), /is not empty: .*project-\d+/);
      assert.deepEqual(await readdir(existing), ['keep.txt']);
      assert.deepEqual(
        (await readdir(root)).filter((n) => n.startsWith('new-') || n === '___' || n.includes('operator-runtime-')),
        [],
      );
    });
  });
});
