/**
 * The build ships TypeBox as one file (scripts/packaging/bundle-typebox.ts, docs/footprint.md).
 * These hold the bundle to the package it replaces, and hold src/ to loading TypeBox's values only
 * through the seam the build replaces: one value import elsewhere would bring TypeBox's ~370
 * modules (~12 MiB RSS) back into every operator's start-up, with nothing failing.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import * as typebox from 'typebox';
import { TYPEBOX_SEAM, bundleTypebox } from './bundle-typebox.js';
import { REPO } from './dist.js';

const SEAM = 'src/crd/typebox.ts';
let dir: string;
let bundleFile: string;
let bundled: typeof import('../../src/crd/typebox.js');

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bundle-typebox-'));
  bundleFile = join(dir, 'typebox.js');
  await bundleTypebox(join(REPO, SEAM), bundleFile);
  bundled = (await import(pathToFileURL(bundleFile).href)) as typeof bundled;
});
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the bundle imports nothing and carries TypeBox’s licence', async () => {
  const text = await readFile(bundleFile, 'utf8');
  assert.doesNotMatch(text, /^\s*import\b|\bfrom\s*["']|\bimport\s*\(|\brequire\s*\(/m);
  assert.match(text, /TypeBox \d+\.\d+\.\d+, bundled by operator-runtime/);
  assert.match(text, /The MIT License/);
});

test('the bundle exports what the seam re-exports, with the package’s whole Type namespace', () => {
  assert.deepEqual(Object.keys(bundled).sort(), ['IsSchema', 'Type']);
  assert.deepEqual(Object.keys(bundled.Type).sort(), Object.keys(typebox.Type).sort());
});

test('a schema built by the bundle is the one the package builds', () => {
  const build = (T: typeof typebox.Type) =>
    T.Object({
      engine: T.Union([T.Literal('postgres'), T.Literal('mysql')]),
      replicas: T.Integer({ minimum: 1, maximum: 5 }),
      storage: T.Optional(T.String({ pattern: '^[0-9]+Gi$' })),
      tags: T.Array(T.String(), { maxItems: 8 }),
      conditions: T.Optional(T.Array(T.Object({ type: T.String(), status: T.String() }))),
    });
  const fromBundle = build(bundled.Type);
  const fromPackage = build(typebox.Type);
  assert.deepEqual(JSON.parse(JSON.stringify(fromBundle)), JSON.parse(JSON.stringify(fromPackage)));
  assert.equal(bundled.IsSchema(fromPackage), true);
  assert.equal(typebox.IsSchema(fromBundle), true);
  assert.equal(bundled.IsSchema(42), false);
});

/** Imports and re-exports of `typebox` (or a subpath) that load it at run time; `import type` is free. */
function typeboxValueImports(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  for (const statement of source.statements) {
    const isImport = ts.isImportDeclaration(statement);
    if (!isImport && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier) || !/^typebox(\/|$)/.test(specifier.text)) continue;
    // Under verbatimModuleSyntax only `import type` / `export type` are erased; `import { type X }`
    // compiles to `import {} from 'typebox'`, which still loads the package.
    const typeOnly = isImport ? statement.importClause?.isTypeOnly === true : statement.isTypeOnly;
    if (!typeOnly) {
      const { line } = source.getLineAndCharacterOfPosition(statement.getStart(source));
      found.push(`${file}:${line + 1}`);
    }
  }
  return found;
}

test('library code loads TypeBox’s values only through src/crd/typebox.ts', async () => {
  const files = (await readdir(join(REPO, 'src'), { recursive: true }))
    .map((f) => `src/${f.split(sep).join('/')}`)
    .filter((f) => f.endsWith('.ts') && !/\.test\.ts$/.test(f) && !/^src\/([^/]+\/)?testing\//.test(f));
  assert.ok(files.length > 100, `${files.length} files`);
  const offenders: string[] = [];
  for (const file of files) {
    if (file === SEAM) continue;
    offenders.push(...typeboxValueImports(file, await readFile(join(REPO, file), 'utf8')));
  }
  assert.deepEqual(offenders, [], 'import the value from src/crd/typebox.ts instead (import type is fine)');
});

test('the import check sees a value import and lets a type import through', () => {
  assert.deepEqual(typeboxValueImports('a.ts', "import { Type } from 'typebox';"), ['a.ts:1']);
  assert.deepEqual(typeboxValueImports('b.ts', "import { Type, type TSchema } from 'typebox';"), ['b.ts:1']);
  assert.deepEqual(typeboxValueImports('g.ts', "import 'typebox';"), ['g.ts:1']);
  assert.deepEqual(typeboxValueImports('c.ts', "export { Type } from 'typebox/type';"), ['c.ts:1']);
  assert.deepEqual(typeboxValueImports('d.ts', "import type { TSchema } from 'typebox';"), []);
  assert.deepEqual(typeboxValueImports('e.ts', "import { type TSchema } from 'typebox';"), ['e.ts:1']);
  assert.deepEqual(typeboxValueImports('f.ts', "export type { Static } from 'typebox';"), []);
});

test('the build bundles its compiled seam in place and drops tsc’s map of it', async () => {
  // What scripts/build.sh does after tsc: the compiled seam is the two-line re-export tsc emits.
  const out = join(dir, 'build-out');
  const seam = join(out, TYPEBOX_SEAM);
  await mkdir(join(seam, '..'), { recursive: true });
  await writeFile(seam, "export { IsSchema, Type } from 'typebox';\n//# sourceMappingURL=typebox.js.map\n");
  await writeFile(`${seam}.map`, '{}');
  await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', join(REPO, 'scripts/packaging/bundle-typebox.ts'), out],
    {
      cwd: REPO,
    },
  );
  const text = await readFile(seam, 'utf8');
  assert.match(text, /bundled by operator-runtime/);
  assert.doesNotMatch(text, /from\s*["']typebox["']|sourceMappingURL/);
  await assert.rejects(access(`${seam}.map`));
  const build = await readFile(join(REPO, 'scripts/build.sh'), 'utf8');
  assert.match(
    build,
    /tsc -p tsconfig\.build\.json --outDir "\$out"\nnode --import tsx scripts\/packaging\/bundle-typebox\.ts "\$out"|tsc -p tsconfig\.build\.json --outDir "\$out"\n#[^\n]*\nnode --import tsx scripts\/packaging\/bundle-typebox\.ts "\$out"/,
  );
});
