/**
 * The docs show the right way: every checked TypeScript sample of README.md, docs/ and the sources'
 * doc comments has no finding from operator-runtime/eslint's recommended rules, and every custom kind
 * a sample defines passes the custom-kind conventions (`operator-runtime lint` runs both).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint, type Linter } from 'eslint';
import ts from 'typescript';
import tseslint from 'typescript-eslint';
import { Type, defineCustomKind, k8s, type AnyCustomKind } from '../src/crd/index.js';
import { kindConventionFindings } from '../src/crd/kind-conventions.js';
import plugin from '../src/eslint/index.js';
import { REPO_ROOT, collectSamples, type DocSample } from './doc-samples.js';

const samples = collectSamples().filter((s) => s.check);

test('every checked doc sample has no finding from the recommended reconciler rules', async () => {
  const eslint = new ESLint({
    cwd: REPO_ROOT,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser } },
      plugin.configs.recommended as Linter.Config,
    ],
  });
  const findings: string[] = [];
  for (const sample of samples) {
    const [result] = await eslint.lintText(sample.code, { filePath: join(REPO_ROOT, 'doc-sample.ts') });
    for (const m of result!.messages)
      findings.push(`${sample.file}:${sample.line + m.line - 1} ${m.ruleId}: ${m.message}`);
  }
  assert.ok(
    samples.some((s) => s.code.includes('.complete(')),
    'some samples have reconcilers',
  );
  assert.deepEqual(findings, []);
});

/**
 * The kinds a sample defines, evaluated from its top-level declarations up to the last
 * `defineCustomKind` (schemas, the kind; nothing after it runs, so no client is made).
 */
function kindsOf(sample: DocSample): AnyCustomKind[] {
  const source = ts.createSourceFile('sample.ts', sample.code, ts.ScriptTarget.Latest, true);
  const declarations = source.statements.filter(
    (s): s is ts.VariableStatement => ts.isVariableStatement(s) && !s.getText().includes('await '),
  );
  const last = declarations.findLastIndex((s) => s.getText().includes('defineCustomKind('));
  if (last < 0) return [];
  const kept = declarations.slice(0, last + 1);
  const names = kept.flatMap((s) =>
    s.declarationList.declarations
      .filter((d) => d.initializer?.getText().startsWith('defineCustomKind('))
      .map((d) => d.name.getText()),
  );
  const code = kept.map((s) => s.getText().replace(/^export\s+/, '')).join('\n');
  const js = ts.transpileModule(code, { compilerOptions: { target: ts.ScriptTarget.ES2022 } }).outputText;
  const evaluate = new Function('Type', 'k8s', 'defineCustomKind', `${js}\nreturn [${names.join(', ')}];`) as (
    ...args: unknown[]
  ) => AnyCustomKind[];
  return evaluate(Type, k8s, defineCustomKind);
}

test('every custom kind a checked doc sample defines follows the custom-kind conventions', () => {
  const findings: string[] = [];
  let kinds = 0;
  for (const sample of samples.filter((s) => s.code.includes('defineCustomKind('))) {
    for (const kind of kindsOf(sample)) {
      kinds++;
      for (const f of kindConventionFindings(kind))
        findings.push(`${sample.file}:${sample.line} ${f.kind} ${f.apiVersion} ${f.path} ${f.check}`);
    }
  }
  assert.ok(kinds >= 5, `the docs' kinds were evaluated (${kinds})`);
  assert.deepEqual(findings, []);
});
