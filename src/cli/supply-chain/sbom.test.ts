/**
 * `operator-runtime sbom`: the production tree from a lockfile (dev dependencies never entered),
 * the reference operator's SBOM against its real lockfile and package manifests, an image's
 * installed files, each SBOM valid against the CycloneDX JSON schema (the CycloneDX library's
 * strict validator: ajv with the schemas shipped in its npm package, offline), and bad input.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import CycloneDX from '@cyclonedx/cyclonedx-library';
import { runCli } from '../program.js';
import { productionTree, type NpmPackageEntry } from './npm-tree.js';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));

interface Bom {
  specVersion: string;
  metadata: { component: { name: string; version: string } };
  components: {
    type: string;
    name: string;
    group?: string;
    version?: string;
    purl?: string;
    hashes?: { alg: string; content: string }[];
    properties?: { name: string; value: string }[];
  }[];
  dependencies: { ref: string; dependsOn?: string[] }[];
}

async function cli(cwd: string, args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { cwd, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

async function schemaErrors(json: string, version: '1.5' | '1.6'): Promise<unknown> {
  const spec = version === '1.5' ? CycloneDX.Spec.Version.v1dot5 : CycloneDX.Spec.Version.v1dot6;
  return new CycloneDX.Validation.JsonStrictValidator(spec).validate(json);
}

const fullName = (c: Bom['components'][number]) => (c.group ? `${c.group}/${c.name}` : c.name);

describe('productionTree', () => {
  const lock: Record<string, NpmPackageEntry> = {
    '': { name: 'app', version: '1.0.0', dependencies: { a: '^1', ws: '*' }, optionalDependencies: { gone: '*' } },
    'node_modules/a': { version: '1.0.0', license: 'MIT', integrity: 'sha512-AAAA', dependencies: { b: '^2' } },
    'node_modules/b': { version: '1.0.0', dependencies: {} }, // hoisted for the dev tool
    'node_modules/a/node_modules/b': {
      version: '2.0.0',
      peerDependencies: { p: '*', q: '*' },
      peerDependenciesMeta: { q: { optional: true } },
    },
    'node_modules/p': { version: '3.0.0' },
    'node_modules/q': { version: '4.0.0' }, // present (a dev dependency), an optional peer: not production
    'node_modules/dev-tool': { version: '9.0.0', dev: true, dependencies: { b: '^1' } } as NpmPackageEntry,
    'node_modules/ws': { resolved: 'packages/ws', link: true },
    'packages/ws': { name: 'ws', version: '0.1.0', dependencies: { a: '^1' } },
  };

  test('walks dependencies, optional ones and required peers as Node resolves them; never a dev-only package', () => {
    const tree = productionTree(lock, '', 'lock');
    assert.deepEqual([...tree.packages.keys()], ['a@1.0.0', 'b@2.0.0', 'p@3.0.0', 'ws@0.1.0']);
    assert.deepEqual(tree.packages.get('b@2.0.0')?.paths, ['node_modules/a/node_modules/b']);
    assert.deepEqual(tree.packages.get('b@2.0.0')?.dependsOn, ['p@3.0.0']);
    assert.deepEqual(tree.packages.get('ws@0.1.0')?.paths, ['packages/ws'], 'a workspace link is followed');
    assert.deepEqual(tree.root.dependsOn, ['a@1.0.0', 'ws@0.1.0']);
    assert.equal(tree.packages.get('a@1.0.0')?.license, 'MIT');
  });

  test('a workspace project is walked from its own folder', () => {
    const tree = productionTree(lock, 'packages/ws', 'lock');
    assert.equal(tree.root.name, 'ws');
    assert.deepEqual([...tree.packages.keys()], ['a@1.0.0', 'b@2.0.0', 'p@3.0.0']);
  });

  test('a required dependency missing from the lockfile is named; an unknown project says run npm install', () => {
    const broken = { ...lock, 'node_modules/p': undefined } as unknown as Record<string, NpmPackageEntry>;
    assert.throws(
      () => productionTree(broken, '', 'package-lock.json'),
      /^CliUsageError: package-lock\.json: p, required by node_modules\/a\/node_modules\/b, is not installed: run npm install$/,
    );
    assert.throws(() => productionTree(lock, 'nope', 'package-lock.json'), /has no entry for nope: run npm install/);
  });
});

describe('operator-runtime sbom', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'operator-runtime-sbom-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the reference operator: every runtime dependency and none of the dev dependencies, valid CycloneDX 1.6', async () => {
    const out = join(dir, 'database-operator.cdx.json');
    const result = await cli(REPO, ['sbom', '--project', 'examples/database-operator', '--out', out]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^wrote .*database-operator\.cdx\.json \(\d+ components\)\n$/);
    const json = await readFile(out, 'utf8');
    assert.equal(await schemaErrors(json, '1.6'), null);
    const bom = JSON.parse(json) as Bom;
    assert.equal(bom.specVersion, '1.6');
    assert.deepEqual(bom.metadata.component.name, 'database-operator-example');

    const manifest = async (path: string) =>
      JSON.parse(await readFile(join(REPO, path), 'utf8')) as {
        dependencies: Record<string, string>;
        devDependencies: Record<string, string>;
      };
    const runtime = await manifest('package.json');
    const example = await manifest('examples/database-operator/package.json');
    const listed = new Set(bom.components.map(fullName));
    const production = new Set([...Object.keys(example.dependencies), ...Object.keys(runtime.dependencies)]);
    for (const name of production) assert.ok(listed.has(name), `runtime dependency ${name} is listed`);
    // A dev dependency that a production package also depends on (prom-client → @opentelemetry/api)
    // is in the production tree, as the lockfile says: only what npm marks dev is dev-only.
    const lock = JSON.parse(await readFile(join(REPO, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
    };
    const inProductionTree = (name: string): boolean => {
      const entry = lock.packages[`node_modules/${name}`];
      return entry !== undefined && !entry.dev && !entry.devOptional;
    };
    const devOnly = [...Object.keys(runtime.devDependencies), ...Object.keys(example.devDependencies)].filter(
      (name) => !production.has(name) && !inProductionTree(name),
    );
    assert.ok(devOnly.includes('typescript') && devOnly.includes('eslint'));
    for (const name of devOnly) assert.ok(!listed.has(name), `dev dependency ${name} is not listed`);

    const pino = bom.components.find((c) => c.name === 'pino')!;
    assert.match(pino.purl!, /^pkg:npm\/pino@\d+\.\d+\.\d+$/);
    assert.equal(pino.hashes?.[0]?.alg, 'SHA-512', "the lockfile's integrity, as a hash");
    assert.deepEqual(pino.properties, [{ name: 'cdx:npm:package:path', value: 'node_modules/pino' }]);
    const root = bom.dependencies.find((d) => d.ref === 'pkg:npm/database-operator-example@0.1.0');
    assert.ok(root?.dependsOn?.includes('pkg:npm/operator-runtime@0.1.0'), 'the graph starts at the operator');
  });

  test('--spec-version 1.5 writes a valid CycloneDX 1.5 document', async () => {
    const out = join(dir, 'v15.cdx.json');
    const result = await cli(REPO, ['sbom', '-p', 'examples/database-operator', '-o', out, '--spec-version', '1.5']);
    assert.equal(result.code, 0, result.stderr);
    const json = await readFile(out, 'utf8');
    assert.equal((JSON.parse(json) as Bom).specVersion, '1.5');
    assert.equal(await schemaErrors(json, '1.5'), null);
  });

  test("--image: the packages installed in an image's runtime files and the SHA-256 of each of the operator's own", async () => {
    const image = join(dir, 'app');
    const files: Record<string, string> = {
      'package.json': JSON.stringify({ name: 'op', version: '2.0.0', dependencies: { lib: '^1' } }),
      'dist/main.js': 'console.log("operator")\n',
      'node_modules/lib/package.json': JSON.stringify({
        name: 'lib',
        version: '1.2.3',
        license: 'MIT',
        dependencies: { '@s/dep': '^1' },
      }),
      'node_modules/lib/index.js': '',
      'node_modules/@s/dep/package.json': JSON.stringify({
        name: '@s/dep',
        version: '1.0.0',
        license: '(MIT OR Apache-2.0)',
      }),
      'node_modules/.package-lock.json': '{}',
    };
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(image, path)), { recursive: true });
      await writeFile(join(image, path), content);
    }
    const out = join(dir, 'image.cdx.json');
    const result = await cli(dir, ['sbom', '--image', 'app', '--out', out]);
    assert.equal(result.code, 0, result.stderr);
    const json = await readFile(out, 'utf8');
    assert.equal(await schemaErrors(json, '1.6'), null);
    const bom = JSON.parse(json) as Bom;
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    assert.deepEqual(
      bom.components.map((c) => [c.type, fullName(c), c.version ?? c.hashes?.[0]?.content]),
      [
        ['file', 'dist/main.js', sha256(files['dist/main.js']!)],
        ['file', 'package.json', sha256(files['package.json']!)],
        ['library', '@s/dep', '1.0.0'],
        ['library', 'lib', '1.2.3'],
      ],
    );
  });

  test('--help on sbom, sign and verify', async () => {
    for (const [command, option] of [
      ['sbom', /--image <dir>[\s\S]*--spec-version <version>/],
      ['sign', /-k, --key <key>[\s\S]*--sbom <file>/],
      ['verify', /-k, --key <key>[\s\S]*--sbom <file>/],
    ] as const) {
      const help = await cli(REPO, [command, '--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, new RegExp(`^Usage: operator-runtime ${command}`));
      assert.match(help.stdout, option);
    }
  });

  test('bad input: one line naming what is wrong, exit 2, nothing written', async () => {
    const empty = join(dir, 'empty');
    await mkdir(empty);
    await writeFile(join(empty, 'package.json'), '{"name":"x","version":"1.0.0"}');
    const noLock = await cli(dir, ['sbom', '-p', 'empty', '-o', join(empty, 'sbom.cdx.json')]);
    // Found nowhere above a temporary folder.
    assert.equal(noLock.code, 2);
    assert.match(noLock.stderr, /^error: no package-lock\.json found in .*empty or above it: run npm install/);
    assert.deepEqual(await readdir(empty), ['package.json'], 'nothing written');
    const version = await cli(REPO, ['sbom', '--spec-version', '1.4', '-o', join(dir, 'x.json')]);
    assert.deepEqual([version.code, version.stderr], [2, 'error: --spec-version 1.4: use one of 1.5, 1.6\n']);
    const notProject = await cli(dir, ['sbom', '-p', 'nowhere']);
    assert.equal(notProject.code, 2);
    assert.match(notProject.stderr, /^error: no package\.json in .*nowhere\n$/);
  });
});
