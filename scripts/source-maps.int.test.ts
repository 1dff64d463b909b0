/**
 * Source and declaration maps resolve inside the installed package: the packed tarball ships the
 * library's sources (the build's inputs, no tests) beside dist/, every `.js.map` and `.d.ts.map`
 * names sources that are in the tarball, and a stack trace thrown from inside the installed package
 * under `--enable-source-maps` names a `.ts` file that exists, at the line that throws. (The build
 * used to compile into a temporary folder two levels down and move it, so every map pointed at
 * `../../../../src/…`, outside the package.)
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { REPO, pack, userEnv, withDist, type PackResult } from './packaging/dist.js';

const run = promisify(execFile);

/** The files tsconfig.build.json compiles, relative to the repository. */
function buildInputs(): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(REPO, 'tsconfig.build.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  assert.ok(parsed);
  return parsed.fileNames.map((f) => relative(REPO, f).split(sep).join('/'));
}

describe('source maps in the packed package', { timeout: 600_000 }, () => {
  let dir: string;
  let packed: PackResult;
  let unpacked: string;
  let consumer: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'operator-runtime-maps-'));
    packed = await withDist(() => pack(dir));
    unpacked = join(dir, 'unpacked');
    await mkdir(unpacked);
    await run('tar', ['-xzf', packed.tarball, '-C', unpacked]);
    consumer = join(dir, 'consumer');
    await mkdir(consumer);
    await writeFile(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', packed.tarball], {
      cwd: consumer,
      env: userEnv(),
      timeout: 300_000,
    });
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the tarball ships exactly the build’s sources: no test, test support or benchmark', () => {
    const shipped = packed.files.filter((f) => f.startsWith('src/') && f.endsWith('.ts')).sort();
    assert.deepEqual(shipped, buildInputs().sort());
  });

  test('every .js.map and .d.ts.map names sources that exist in the tarball', async () => {
    const root = join(unpacked, 'package');
    const maps = (await readdir(join(root, 'dist'), { recursive: true })).filter((f) => f.endsWith('.map'));
    assert.ok(maps.length > 100, `${maps.length} maps`);
    const dangling: string[] = [];
    for (const map of maps) {
      const path = join(root, 'dist', map);
      const { sources, sourceRoot } = JSON.parse(readFileSync(path, 'utf8')) as {
        sources: string[];
        sourceRoot?: string;
      };
      assert.ok(sources.length > 0, map);
      for (const source of sources) {
        const target = resolve(dirname(path), sourceRoot ?? '', source);
        if (!target.startsWith(`${root}${sep}`) || !existsSync(target)) dangling.push(`dist/${map} → ${source}`);
      }
    }
    assert.deepEqual(dangling, []);
  });

  test('a stack trace thrown from inside the installed package names a .ts file that exists, at the throwing line', async () => {
    const script = join(consumer, 'throws.mjs');
    await writeFile(
      script,
      `import { parseLabelSelector } from 'operator-runtime/cache';
try { parseLabelSelector('app in'); } catch (error) { process.stdout.write(error.stack); }
`,
    );
    const { stdout } = await run(process.execPath, ['--enable-source-maps', script], {
      cwd: consumer,
      env: userEnv(),
      timeout: 60_000,
    });
    const frame =
      /\((\/[^)]*node_modules\/operator-runtime\/[^):]+):(\d+):(\d+)\)/.exec(stdout) ??
      /at (\/[^\s:]*node_modules\/operator-runtime\/[^:]+):(\d+):(\d+)/.exec(stdout);
    assert.ok(frame, stdout);
    const [, file, line] = frame;
    assert.match(file!, /\/node_modules\/operator-runtime\/src\/cache\/label-selector\.ts$/, stdout);
    assert.ok(existsSync(file!), `${file} exists`);
    assert.match(readFileSync(file!, 'utf8').split('\n')[Number(line) - 1]!, /throw new InvalidLabelSelectorError/);
    // The same file as in the repository: the trace points at what was compiled.
    assert.equal(
      await readFile(file!, 'utf8'),
      await readFile(fileURLToPath(new URL('../src/cache/label-selector.ts', import.meta.url)), 'utf8'),
    );
  });
});
