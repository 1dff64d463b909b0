/**
 * The reference operator reads and writes with typed kinds, so it needs no type assertions: this
 * test parses every file of examples/database-operator/src with the TypeScript compiler and fails
 * naming file:line for each `x as T` or `<T>x`. `as const` is not a cast (it narrows, never
 * widens or lies), and `import … as` / `export … as` are renames, not expressions, so neither is
 * found. A parser, not a regex: `as` in strings, comments and identifiers is never a cast.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..');
const CHECKED_DIR = join(ROOT, 'examples/database-operator/src');

/** `file:line: text` for each type assertion in `source` (a file's text), `as const` excepted. */
export function findCasts(fileName: string, source: string): string[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !isConstAssertion(node.type)) {
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      found.push(`${fileName}:${line}: ${node.getText(sf).replace(/\s+/g, ' ').slice(0, 100)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function isConstAssertion(type: ts.TypeNode): boolean {
  return ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) && type.typeName.text === 'const';
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

test('examples/database-operator/src has no type assertions (as const and import/export renames aside)', () => {
  const files = sourceFiles(CHECKED_DIR);
  assert.ok(files.length >= 5, `expected the operator's sources under ${CHECKED_DIR}, found ${files.length}`);
  const casts = files.flatMap((f) => findCasts(relative(ROOT, f), readFileSync(f, 'utf8')));
  assert.deepEqual(
    casts,
    [],
    `type assertions in the reference operator (use a typed Kind, a type guard or a typed parse instead):\n${casts.join('\n')}`,
  );
});

test('findCasts finds as-casts and angle-bracket casts, multi-line ones at their first line', () => {
  const source = [
    "import { a as b } from 'x';", // 1: a rename
    'export { b as c };', // 2: a rename
    'const k = { kind: "X" } as const;', // 3: as const
    'const s = "x as y"; // z as T', // 4: string and comment
    'const v = (JSON.parse("1") as number) + 1;', // 5: cast
    'const w = <string>(v as unknown);', // 6: two casts
    'const m = foo(', // 7: a multi-line cast starts here
    '  1,',
    ') as unknown as { x: 1 };', // the outer and the inner cast both start at line 7
    'const n = [1] as const satisfies readonly number[];', // 10: as const + satisfies
  ].join('\n');
  const found = findCasts('f.ts', source).map((s) => s.split(': ')[0]);
  assert.deepEqual(found, ['f.ts:5', 'f.ts:6', 'f.ts:6', 'f.ts:7', 'f.ts:7']);
});
