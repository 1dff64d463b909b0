/**
 * Pack and consume, as a user would: `npm pack`, install the tarball into a fresh project outside
 * the repository (from the local npm cache after the first run), then use it from plain ESM, from
 * CommonJS (Node ≥ 22), and from strict TypeScript under `nodenext` and `bundler` resolution;
 * publint and attw on the tarball. Entry points come from package.json `exports`, so this follows
 * them when they move. Runs on whichever Node runs it (scripts/test.sh: Node 20 and Node 24).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO, entryPoints, pack, userEnv, withDist, type PackResult } from './packaging/dist.js';

const run = promisify(execFile);
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const bin = (name: string) => join(REPO, 'node_modules/.bin', name);
const versionOf = async (pkg: string) =>
  (JSON.parse(await readFile(join(REPO, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

/** Anything in the tarball that is not library output: tests, test support, benchmarks, sources, repo tooling. */
const NOT_SHIPPED = [
  /\.test\./,
  /\.test-support\./,
  /\.bench\./,
  /^dist\/[^/]+\/(testing|bench)\//,
  /^dist\/testing\/[^/]+\/test-support\//,
  // Repo folders, at the top or compiled into dist/ (not dist/testing/chaos/, the chaos tools' entry).
  /^(dist\/)?(chaos|bench|scripts|examples|src)\//,
  /\.ts$/,
];
/** Repo files the package ships on purpose: the source build of the control plane, for Debian users without a network. */
const SHIPPED_SCRIPTS = new Set(['scripts/install-control-plane.sh']);
/** Docs the package ships on purpose: the lint rules' docs URLs point at this copy (src/eslint/create-rule.ts). */
const SHIPPED_DOCS = new Set(['docs/lint.md']);
const isDeclaration = (path: string) => path.endsWith('.d.ts');

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
  - name: local
    cluster:
      server: https://127.0.0.1:6443
users:
  - name: someone
    user:
      token: not-a-real-token
contexts:
  - name: local
    context: { cluster: local, user: someone }
current-context: local
`;

/** The ESM consumer: every entry point, a KubeClient from a kubeconfig file, a Manager on the user's own prom-client Registry. */
const CONSUME_MJS = `import { Registry } from 'prom-client';
import { fileURLToPath } from 'node:url';
const entries = JSON.parse(process.argv[2]);
const loaded = {};
for (const entry of entries) loaded[entry] = { resolved: import.meta.resolve(entry), exports: Object.keys(await import(entry)).length };
const { KubeClient, Manager } = await import('operator-runtime');
const registry = new Registry();
const client = await KubeClient.fromKubeconfig({ path: fileURLToPath(new URL('./kubeconfig.yaml', import.meta.url)), registry });
const manager = new Manager({ client, registry, metricsPort: 0, healthPort: 0 });
const metrics = (await registry.getMetricsAsJSON()).map((m) => m.name);
const { conformanceCrds } = await import('operator-runtime/testing/conformance');
const crds = (await conformanceCrds()).map((crd) => crd.metadata.name);
console.log(JSON.stringify({ loaded, sameRegistry: manager.registry === registry, metrics, crds }));
await client.close();
`;

const CONSUME_CJS = `const runtime = require('operator-runtime');
console.log(JSON.stringify({ KubeClient: typeof runtime.KubeClient, Manager: typeof runtime.Manager }));
`;

/** A strict TypeScript consumer; one import per entry point plus typed use of the root API. */
function consumerTs(entries: readonly string[]): string {
  const imports = entries.map((entry, i) => `import * as entry${i} from '${entry}';`).join('\n');
  return `${imports}
import { KubeClient, Manager, TerminalError, type ReconcileFunction } from 'operator-runtime';
import { Registry } from 'prom-client';

export const modules: readonly object[] = [${entries.map((_, i) => `entry${i}`).join(', ')}];

export async function main(path: string): Promise<Manager> {
  const registry = new Registry();
  const client: KubeClient = await KubeClient.fromKubeconfig({ path, registry });
  return new Manager({ client, registry, metricsPort: 0, healthPort: 0 });
}

export const reconcile: ReconcileFunction = async () => {
  throw new TerminalError('not in this test');
};
`;
}

function tsconfig(resolution: 'nodenext' | 'bundler'): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: resolution === 'nodenext' ? 'nodenext' : 'preserve',
      moduleResolution: resolution,
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      verbatimModuleSyntax: true,
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
    },
    files: ['consumer.ts'],
  });
}

describe('the packed tarball, installed into a fresh project', { timeout: 600_000 }, () => {
  let dir: string;
  let consumer: string;
  let packed: PackResult;
  let entries: string[];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'operator-runtime-pack-'));
    packed = await withDist(() => pack(dir));
    entries = await entryPoints();
    consumer = join(dir, 'consumer');
    await mkdir(consumer);
    await writeFile(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    // The consumer's own prom-client and @types/node, at the repo's versions so they come from the npm
    // cache; and, as a project that lints has them, the optional peers of operator-runtime/eslint.
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        packed.tarball,
        `prom-client@${await versionOf('prom-client')}`,
        `@types/node@${await versionOf('@types/node')}`,
        `eslint@${await versionOf('eslint')}`,
        `typescript-eslint@${await versionOf('typescript-eslint')}`,
        `@typescript-eslint/utils@${await versionOf('@typescript-eslint/utils')}`,
      ],
      { cwd: consumer, env: userEnv() },
    );
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the tarball holds dist/, the library sources its maps name, README, LICENSE and the control-plane source build, and no tests, test support, benchmarks or other scripts', (t) => {
    t.diagnostic(`tarball ${packed.size} bytes, ${packed.files.length} files, unpacked ${packed.unpackedSize} bytes`);
    for (const required of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/index.js',
      'dist/index.d.ts',
      ...SHIPPED_SCRIPTS,
    ])
      assert.ok(packed.files.includes(required), `${required} is in the tarball`);
    const stray = packed.files.filter(
      (f) =>
        !(
          f.startsWith('dist/') ||
          f.startsWith('src/') ||
          SHIPPED_SCRIPTS.has(f) ||
          SHIPPED_DOCS.has(f) ||
          ['package.json', 'README.md', 'LICENSE'].includes(f)
        ),
    );
    assert.deepEqual(stray, []);
    // src/ ships for the source maps (scripts/source-maps.int.test.ts checks it is exactly the build's inputs).
    const notShipped = packed.files.filter(
      (f) =>
        !isDeclaration(f) && !f.startsWith('src/') && !SHIPPED_SCRIPTS.has(f) && NOT_SHIPPED.some((re) => re.test(f)),
    );
    assert.deepEqual(notShipped, []);
    assert.deepEqual(
      packed.files.filter((f) => isDeclaration(f) && /\.test(-support)?\.d\.ts$/.test(f)),
      [],
    );
  });

  test('the published types leave out @internal declarations', async () => {
    const store = await readFile(join(consumer, 'node_modules/operator-runtime/dist/cache/store.d.ts'), 'utf8');
    const source = await readFile(join(REPO, 'src/cache/store.ts'), 'utf8');
    assert.match(source, /@internal/, 'the source still marks some members @internal (else this test proves nothing)');
    assert.doesNotMatch(store, /@internal/);
  });

  test('every export resolves to files in the tarball', async () => {
    const manifest = JSON.parse(
      await readFile(join(consumer, 'node_modules/operator-runtime/package.json'), 'utf8'),
    ) as { exports: Record<string, string | Record<string, string>> };
    for (const [key, target] of Object.entries(manifest.exports)) {
      if (typeof target === 'string') continue;
      assert.ok(target.types && target.default, `${key} has types and default conditions`);
      for (const [condition, path] of Object.entries(target)) {
        const shipped = packed.files.includes(path.replace(/^\.\//, ''));
        assert.ok(shipped, `${key} → ${condition}: ${path}`);
      }
    }
  });

  test('plain ESM imports every entry point, builds a KubeClient from a kubeconfig file and a Manager on its own Registry', async () => {
    await writeFile(join(consumer, 'kubeconfig.yaml'), KUBECONFIG);
    await writeFile(join(consumer, 'consume.mjs'), CONSUME_MJS);
    const { stdout } = await run(process.execPath, ['consume.mjs', JSON.stringify(entries)], {
      cwd: consumer,
      env: userEnv(),
      timeout: 60_000,
    });
    const out = JSON.parse(stdout) as {
      loaded: Record<string, { resolved: string; exports: number }>;
      sameRegistry: boolean;
      metrics: string[];
      crds: string[];
    };
    assert.deepEqual(Object.keys(out.loaded), entries);
    for (const [entry, { resolved, exports }] of Object.entries(out.loaded)) {
      assert.match(resolved, /\/node_modules\/operator-runtime\/dist\/.+\.js$/, `${entry} resolves into dist/`);
      assert.ok(exports > 0, `${entry} exports something`);
    }
    assert.equal(out.sameRegistry, true);
    assert.ok(
      out.metrics.includes('rest_client_requests_total'),
      `the runtime registered its metrics on the user's Registry: ${out.metrics.join(', ')}`,
    );
    assert.ok(
      out.crds.includes('widgets.example.com'),
      `the conformance suite finds its CRDs inside the installed package: ${out.crds.join(', ')}`,
    );
  });

  test("prom-client is a peer: one copy in the consumer's tree, the user's", () => {
    assert.ok(existsSync(join(consumer, 'node_modules/prom-client/package.json')));
    assert.equal(existsSync(join(consumer, 'node_modules/operator-runtime/node_modules/prom-client')), false);
  });

  test(
    'require() from CommonJS works on Node ≥ 22',
    { skip: NODE_MAJOR < 22 && `Node ${process.versions.node} has no require(esm)` },
    async () => {
      await writeFile(join(consumer, 'consume.cjs'), CONSUME_CJS);
      const { stdout } = await run(process.execPath, ['consume.cjs'], {
        cwd: consumer,
        env: userEnv(),
        timeout: 60_000,
      });
      assert.deepEqual(JSON.parse(stdout), { KubeClient: 'function', Manager: 'function' });
    },
  );

  for (const resolution of ['nodenext', 'bundler'] as const) {
    test(
      `a strict TypeScript consumer compiles under moduleResolution ${resolution}`,
      // What tsc decides does not depend on the Node major running it; scripts/test.sh's run on
      // its second Node major leaves out the ~30 s of a core each compile costs.
      { skip: process.env.OPERATOR_RUNTIME_SECOND_NODE === '1' && 'checked on the first Node major of this run' },
      async () => {
        const project = join(dir, `ts-${resolution}`);
        await mkdir(project);
        await writeFile(join(project, 'consumer.ts'), consumerTs(entries));
        await writeFile(join(project, 'tsconfig.json'), tsconfig(resolution));
        // Shares the consumer's node_modules, as a project would have its own.
        await run('ln', ['-s', join(consumer, 'node_modules'), join(project, 'node_modules')]);
        await writeFile(
          join(project, 'package.json'),
          JSON.stringify({ name: `ts-${resolution}`, private: true, type: 'module' }),
        );
        const result = await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', project], {
          cwd: project,
          env: userEnv(),
        }).then(
          () => '',
          (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || 'tsc failed',
        );
        assert.equal(result, '');
      },
    );
  }

  test('publint reports no problems', async () => {
    const { stdout } = await run(process.execPath, [bin('publint'), '--strict', packed.tarball], { env: userEnv() });
    assert.match(stdout, /All good!/);
  });

  test('attw reports no problems for an ESM-only package', async () => {
    // esm-only: node10 and require-from-node16-CJS are out of scope (require(esm) is Node ≥ 22, tested above).
    const result = await run(
      process.execPath,
      [bin('attw'), '--profile', 'esm-only', '--format', 'json', packed.tarball],
      { env: userEnv(), maxBuffer: 64 << 20 },
    ).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, stdout: error.stdout ?? '' }),
    );
    assert.equal(result.code, 0, result.stdout.slice(0, 4000));
  });
});
