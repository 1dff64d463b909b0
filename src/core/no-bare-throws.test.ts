/**
 * Library code throws `OperatorRuntimeError` subclasses, never a bare `Error`/`TypeError`/
 * `RangeError`…: the controller counts built-in TypeErrors and RangeErrors as user panics
 * (controller.ts `isReconcilePanic`), so a bare one from the library would pass for a bug in the
 * user's reconciler, and callers could not branch on a `code`. This scans the same files the build
 * ships (tsconfig.build.json: no tests, test support, benchmarks or `src/<module>/testing`) with
 * the TypeScript parser, so a throw split over lines is found and a `throw` inside a string (the
 * console page's browser script) is not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const BUILT_IN_ERRORS = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'ReferenceError',
  'SyntaxError',
  'EvalError',
  'URIError',
  'AggregateError',
]);

/** The tsconfig.build.json excludes, as a predicate on a path relative to src/. */
function isShipped(rel: string): boolean {
  if (!rel.endsWith('.ts') || rel.endsWith('.d.ts')) return false;
  if (/\.(test|test-support|bench)\.ts$/.test(rel) || /\.test\./.test(rel)) return false;
  const parts = rel.split(path.sep);
  // src/*/testing and src/*/bench are per-module test support; src/testing itself ships, all but
  // the test tools' own support (src/testing/*/test-support).
  if (parts.length > 2 && (parts[1] === 'testing' || parts[1] === 'bench')) return false;
  if (parts.length > 3 && parts[0] === 'testing' && parts[2] === 'test-support') return false;
  return true;
}

function shippedFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...shippedFiles(full));
    else if (isShipped(path.relative(SRC, full))) out.push(full);
  }
  return out;
}

/** `line:col  text` of every `throw new Error(…)`/`throw TypeError(…)`… in `source`. */
function bareThrows(fileName: string, source: string): { line: number; text: string }[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isThrowStatement(node)) {
      let e: ts.Expression = node.expression;
      while (ts.isParenthesizedExpression(e)) e = e.expression;
      if (
        (ts.isNewExpression(e) || ts.isCallExpression(e)) &&
        ts.isIdentifier(e.expression) &&
        BUILT_IN_ERRORS.has(e.expression.text)
      ) {
        const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
        found.push({ line: line + 1, text: node.getText(sf).split('\n')[0]!.slice(0, 120) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

test('the scanner finds bare built-in throws, also split over lines, and ignores strings and comments', () => {
  const src = [
    "if (x) throw new TypeError('a');",
    'throw (new RangeError(`b`));',
    'throw Error("c");',
    'throw new',
    "  Error('d');",
    "const page = `if (!res.ok) throw new Error('HTTP ' + res.status);`;",
    "// throw new Error('in a comment')",
    "throw new InvalidArgumentError('fine');",
    "throw Object.assign(new Error('fs-shaped'), { code: 'ERR_X' });",
  ].join('\n');
  assert.deepEqual(
    bareThrows('sample.ts', src).map((f) => f.line),
    [1, 2, 3, 4],
  );
});

test('the file selection matches the build: tests, test support, benchmarks and module testing folders are out; src/testing is in', () => {
  const j = (...p: string[]): string => p.join(path.sep);
  assert.equal(isShipped(j('core', 'errors.ts')), true);
  assert.equal(isShipped(j('testing', 'control-plane', 'test-env.ts')), true);
  assert.equal(isShipped(j('testing', 'simulation', 'test-support', 'widget-operator.ts')), false);
  assert.equal(isShipped(j('core', 'errors.test.ts')), false);
  assert.equal(isShipped(j('cache', 'informer.int.test.ts')), false);
  assert.equal(isShipped(j('helpers', 'int-env.test-support.ts')), false);
  assert.equal(isShipped(j('cache', 'bench', 'relist-memory.bench.ts')), false);
  assert.equal(isShipped(j('cache', 'testing', 'tcp-proxy.ts')), false);
});

test('library code in src/ throws no bare Error, TypeError or RangeError (OperatorRuntimeError subclasses with a code instead)', () => {
  const files = shippedFiles(SRC);
  assert.ok(files.length > 50, `scanned ${files.length} files: the walk found the sources`);
  const offenders: string[] = [];
  for (const file of files) {
    for (const f of bareThrows(file, readFileSync(file, 'utf8')))
      offenders.push(`src/${path.relative(SRC, file)}:${f.line}  ${f.text}`);
  }
  assert.deepEqual(
    offenders,
    [],
    `throw an OperatorRuntimeError subclass (src/core/errors.ts) instead:\n${offenders.join('\n')}`,
  );
});

/** Codes that have their own class: `class X extends … { declare readonly code: 'ERR_…' }`. */
function codesWithClass(sources: readonly { file: string; text: string }[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const { text } of sources) {
    for (const m of text.matchAll(/class (\w+) extends \w+ \{\s*declare readonly code: '(ERR_\w+)'/g))
      out.set(m[2]!, m[1]!);
  }
  return out;
}

test('a code that has its own error class is thrown as that class, never as new OperatorRuntimeError(code)', () => {
  const sources = shippedFiles(SRC).map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  const classes = codesWithClass(sources);
  assert.equal(classes.get('ERR_ALREADY_STARTED'), 'AlreadyStartedError', 'the scan finds the error classes');
  const offenders: string[] = [];
  for (const { file, text } of sources) {
    for (const m of text.matchAll(/new OperatorRuntimeError\(\s*'(ERR_\w+)'/g)) {
      const own = classes.get(m[1]!);
      // A class's own constructor spells its code once, in super(); that is not a `new`.
      if (own) offenders.push(`src/${path.relative(SRC, file)}: ${m[1]!} — throw new ${own}(…)`);
    }
  }
  assert.deepEqual(offenders, [], offenders.join('\n'));
});
