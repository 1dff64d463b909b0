/**
 * The plugin as users run it: ESLint's own class with `configs.recommended` over operators written the
 * wrong way (src/eslint/testing/fixtures/<rule>.wrong.ts, one per rule, each modelled on an
 * anti-pattern) and their corrected twins (<rule>.right.ts); over the reference operator; over the
 * README's sample; and docs/lint.md's config as written. A wrong one is flagged by its own rule and no
 * other, a corrected one by none.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import plugin from './index.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const FIXTURES = join(import.meta.dirname, 'testing', 'fixtures');

/** Only the plugin's rules, parsed as TypeScript: what a user adds to their own config. */
function eslint(): ESLint {
  return new ESLint({
    cwd: REPO_ROOT,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser } },
      plugin.configs.recommended as Linter.Config,
    ],
  });
}

const ruleIds = (results: ESLint.LintResult[]): string[] =>
  results.flatMap((r) => r.messages.map((m) => m.ruleId ?? `fatal: ${m.message}`));

// Besides the fixtures, the folder holds what they share (a custom kind), named otherwise.
const fixtures = readdirSync(FIXTURES).filter((f) => /\.(wrong|right)\.ts$/.test(f));
const rules = Object.keys(plugin.rules);

test('every rule has a wrong fixture and a corrected twin, and no fixture names an unknown rule', () => {
  const named = [...new Set(fixtures.map((f) => f.replace(/\.(wrong|right)\.ts$/, '')))].sort();
  assert.deepEqual(named, [...rules].sort());
  for (const rule of rules) {
    assert.ok(fixtures.includes(`${rule}.wrong.ts`), `${rule}.wrong.ts`);
    assert.ok(fixtures.includes(`${rule}.right.ts`), `${rule}.right.ts`);
  }
});

for (const rule of rules) {
  test(`${rule}: the wrong operator is flagged by ${rule} alone; its corrected twin by nothing`, async () => {
    const lint = eslint();
    const [wrong] = await lint.lintFiles([join(FIXTURES, `${rule}.wrong.ts`)]);
    const ids = ruleIds([wrong!]);
    assert.ok(ids.length > 0, `${rule}.wrong.ts has a finding`);
    assert.deepEqual([...new Set(ids)], [`operator-runtime/${rule}`]);
    const [right] = await lint.lintFiles([join(FIXTURES, `${rule}.right.ts`)]);
    assert.deepEqual(ruleIds([right!]), []);
  });
}

test('the reference operator has no finding with the recommended config', async () => {
  const results = await eslint().lintFiles(['examples/database-operator/src/**/*.ts']);
  assert.ok(results.length > 10, 'the reference operator was linted');
  assert.deepEqual(
    results.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line} ${m.ruleId}`)),
    [],
  );
});

test("the README's sample operator has no finding with the recommended config", async () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const samples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const sample = samples.find((s) => s.includes('.complete('));
  assert.ok(sample, 'README has a sample with a reconciler');
  const results = await eslint().lintText(sample, { filePath: join(REPO_ROOT, 'readme-sample.ts') });
  assert.deepEqual(ruleIds(results), []);
});

test("the README's sample is seen as a reconcile: a synchronous read added to it is flagged", async () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const sample = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((s) => s.includes('.complete('))!;
  const broken = sample.replace(
    'const current = await get();',
    "const current = await get(); readFileSync('page.html');",
  );
  assert.notEqual(broken, sample);
  const results = await eslint().lintText(broken, { filePath: join(REPO_ROOT, 'readme-sample.ts') });
  assert.deepEqual(ruleIds(results), ['operator-runtime/no-blocking-in-reconcile']);
});

test("docs/lint.md's eslint.config.js runs as written and applies the plugin", async () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/lint.md'), 'utf8');
  const config = /```js\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(config, 'docs/lint.md has an eslint.config.js sample');
  // Inside the repository, so `operator-runtime/eslint` resolves through the package's self-reference.
  mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, '.tmp', 'lint-doc-'));
  try {
    const file = join(dir, 'eslint.config.js');
    writeFileSync(file, config);
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'reconciler.ts'), readFileSync(join(FIXTURES, 'requeue-unit.wrong.ts')));
    const results = await new ESLint({ cwd: dir, overrideConfigFile: file }).lintFiles(['src/reconciler.ts']);
    assert.deepEqual(ruleIds(results), ['operator-runtime/requeue-unit']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
