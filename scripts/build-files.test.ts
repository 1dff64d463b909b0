/**
 * What `npm run build` compiles (tsconfig.build.json, read by the TypeScript compiler): every entry
 * point in package.json `exports`, and no test support. Test support has one home: a module's own
 * helpers in `src/<module>/testing/` (the test tools' own in `src/testing/<tool>/test-support/`),
 * user-facing tools in `src/testing/` (see src/testing/README.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT, readEntryPoints } from './api-report.js';

function buildFiles(): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(REPO_ROOT, 'tsconfig.build.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    },
  );
  assert.ok(parsed);
  return parsed.fileNames.map((f) => relative(REPO_ROOT, f).split(sep).join('/'));
}

/** Per-module test support (and the test tools' own, src/testing/<tool>/test-support/), benchmarks and tests: never compiled into dist/. */
function isTestSupport(rel: string): boolean {
  return (
    /\.(test|bench)\.ts$/.test(rel) ||
    /\.test\./.test(rel) ||
    /^src\/[^/]+\/(testing|bench)\//.test(rel) ||
    /^src\/testing\/[^/]+\/test-support\//.test(rel)
  );
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

const files = buildFiles();

test('the build compiles every entry point in package.json exports', () => {
  for (const entry of readEntryPoints())
    assert.ok(files.includes(entry.source), `${entry.specifier}: ${entry.source} is not in tsconfig.build.json`);
});

test('the build compiles no tests, benchmarks or per-module test support', () => {
  assert.ok(files.length > 50, `only ${files.length} files in the build`);
  assert.deepEqual(files.filter(isTestSupport), []);
});

test('test support has one home: no *.test-support.ts, no helper beside the code it supports', () => {
  const src = walk(join(REPO_ROOT, 'src')).map((f) => relative(REPO_ROOT, f).split(sep).join('/'));
  const inTestingFolder = (f: string): boolean => /^src\/(testing|[^/]+\/testing)\//.test(f);
  // FakeClock stays in core beside the Clock it implements; it is exported only from operator-runtime/testing.
  const misplaced = src.filter(
    (f) =>
      /\.test-support\.ts$/.test(f) ||
      (/\/fake-[^/]*\.ts$/.test(f) && !/\.test\.ts$/.test(f) && !inTestingFolder(f) && f !== 'src/core/fake-clock.ts'),
  );
  assert.deepEqual(misplaced, []);
});

test('shipped code never imports per-module test support', () => {
  const offenders: string[] = [];
  for (const rel of files.filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(REPO_ROOT, rel), 'utf8');
    for (const m of text.matchAll(/\bfrom\s+'(\.[^']+)'/g)) {
      const target = relative(REPO_ROOT, resolve(dirname(join(REPO_ROOT, rel)), m[1]!))
        .split(sep)
        .join('/');
      if (isTestSupport(target)) offenders.push(`${rel} imports ${target}`);
    }
  }
  assert.deepEqual(offenders, []);
});
