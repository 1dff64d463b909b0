/**
 * docs/architecture.md's module tables are checked, not trusted: the Modules table has a row for
 * every folder under src/ and its imports column is exactly the `layer-*` rules lint runs
 * (.dependency-cruiser.cjs); the Contracts table names every module and test files that exist.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from './doc-samples.js';

const doc = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');

/** The rows of the first table after `heading`, as cells (the first row after the separator on). */
function tableRows(markdown: string, heading: string): string[][] {
  const at = markdown.indexOf(`\n${heading}`);
  assert.ok(at >= 0, `docs/architecture.md has a "${heading}" section`);
  const lines = markdown
    .slice(at + 1)
    .split('\n')
    .slice(1);
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** `cache/` → cache */
const moduleName = (cell: string): string => cell.replace(/^`|\/`$/g, '');

/** Module → the modules it may import, read from a table's imports column ("—" for none). */
function importsColumn(rows: string[][]): Map<string, string[]> {
  return new Map(rows.map((r) => [moduleName(r[0]!), r[2] === '—' ? [] : r[2]!.split(',').map((m) => m.trim())]));
}

/** Module → the modules its `layer-<module>` rule lets it import, read back from the rule itself. */
function layerRules(): Map<string, string[]> {
  const config = createRequire(import.meta.url)('../.dependency-cruiser.cjs') as {
    forbidden: { name: string; from: { path?: string }; to: { pathNot?: string } }[];
  };
  const out = new Map<string, string[]>();
  for (const rule of config.forbidden) {
    const module = /^layer-(.+)$/.exec(rule.name)?.[1];
    if (module === undefined || module === 'root') continue;
    const allowed = /^\^src\/\((.*)\)\/$/.exec(rule.to.pathNot ?? '');
    assert.ok(allowed, `${rule.name}: to.pathNot is ^src/(<module>|<allowed>…)/`);
    assert.equal(rule.from.path, `^src/${module}/`, `${rule.name} applies to src/${module}/`);
    out.set(
      module,
      allowed[1]!.split('|').filter((m) => m !== module),
    );
  }
  return out;
}

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const difference = (a: Iterable<string>, b: Iterable<string>): string[] =>
  sorted([...a].filter((x) => !new Set(b).has(x)));

const srcModules = readdirSync(join(REPO_ROOT, 'src'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const modulesTable = tableRows(doc, '## Modules');
const contractsTable = tableRows(doc, '## Contracts');

test('the module table has one row for every folder under src/, and no other', () => {
  const rows = modulesTable.map((r) => moduleName(r[0]!));
  assert.deepEqual(
    {
      missing: difference(srcModules, rows),
      extra: difference(rows, srcModules),
      repeated: rows.filter((m, i) => rows.indexOf(m) !== i),
    },
    { missing: [], extra: [], repeated: [] },
  );
});

test('the imports column is the layer rules lint runs (.dependency-cruiser.cjs), module by module', () => {
  const table = importsColumn(modulesTable);
  const rules = layerRules();
  const mismatches: string[] = [];
  for (const module of new Set([...table.keys(), ...rules.keys()])) {
    const doc = table.get(module);
    const rule = rules.get(module);
    if (doc === undefined) mismatches.push(`${module}: a layer rule but no row in docs/architecture.md`);
    else if (rule === undefined)
      mismatches.push(`${module}: a row in docs/architecture.md but no layer-${module} rule`);
    else {
      const onlyDoc = difference(doc, rule);
      const onlyRule = difference(rule, doc);
      if (onlyDoc.length + onlyRule.length > 0)
        mismatches.push(`${module}: only in the doc [${onlyDoc}], only in the rule [${onlyRule}]`);
    }
  }
  assert.deepEqual(mismatches, []);
});

test('the imports column has no cycle: every module can be placed above all it imports', () => {
  const table = importsColumn(modulesTable);
  const unknown = [...table].flatMap(([m, deps]) => deps.filter((d) => !table.has(d)).map((d) => `${m} → ${d}`));
  assert.deepEqual(unknown, [], 'every module imported has a row');
  const placed = new Set<string>();
  let progress = true;
  while (progress) {
    progress = false;
    for (const [m, deps] of table) {
      if (!placed.has(m) && deps.every((d) => placed.has(d))) {
        placed.add(m);
        progress = true;
      }
    }
  }
  assert.deepEqual(difference(table.keys(), placed), [], 'modules on a cycle of the imports column');
});

test('the contracts table states a contract for every module and names test files that exist', () => {
  const rows = contractsTable.map((r) => moduleName(r[0]!));
  assert.deepEqual(
    { missing: difference(srcModules, rows), extra: difference(rows, srcModules) },
    { missing: [], extra: [] },
  );
  const problems: string[] = [];
  for (const [cell, contract, heldBy] of contractsTable) {
    const files = [...(heldBy ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    if ((contract ?? '').length < 20) problems.push(`${cell}: no contract sentence`);
    if (files.length === 0) problems.push(`${cell}: no test file named`);
    for (const f of files) {
      if (!/\.test\.ts$/.test(f)) problems.push(`${cell}: ${f} is not a test file`);
      else if (!existsSync(join(REPO_ROOT, f))) problems.push(`${cell}: ${f} does not exist`);
    }
  }
  assert.deepEqual(problems, []);
});

test('every repository path the architecture doc names exists', () => {
  const paths = [
    ...doc.matchAll(/(?<![\w./-])((?:src|docs|scripts|examples|chaos|bench)\/[\w./-]*[\w-])(?![\w*<])/g),
  ].map((m) => m[1]!);
  assert.ok(paths.length > 20, 'finds the paths');
  assert.deepEqual(sorted(new Set(paths.filter((p) => !existsSync(join(REPO_ROOT, p))))), []);
});
