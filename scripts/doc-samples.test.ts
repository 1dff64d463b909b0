import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSamples, collectSamples, docFiles, extractCommentSamples, extractSamples } from './doc-samples.js';

describe('doc samples', () => {
  it('extracts ts and typescript blocks with the line of their first code line, and honours no-check', () => {
    const md = [
      '# t',
      '```ts',
      'const a = 1;',
      '```',
      '```sh',
      'ls',
      '```',
      '````typescript no-check',
      'x(',
      '```',
      '````',
      '```TS',
      '```',
    ].join('\n');
    assert.deepEqual(extractSamples(md, 'x.md'), [
      { file: 'x.md', line: 3, code: 'const a = 1;', check: true },
      { file: 'x.md', line: 9, code: 'x(\n```', check: false },
      { file: 'x.md', line: 13, code: '', check: true },
    ]);
  });

  it('extracts fenced blocks of doc comments in TypeScript sources, at their line in the file', () => {
    const src = [
      '/**',
      ' * Does x:',
      ' * ```ts',
      ' * const a = 1;',
      ' *   indented();',
      ' * ```',
      ' */',
      'export const y = 1;',
    ].join('\n');
    assert.deepEqual(extractCommentSamples(src, 'src/x.ts'), [
      { file: 'src/x.ts', line: 4, code: 'const a = 1;\n  indented();', check: true },
    ]);
  });

  it('a broken sample fails naming the markdown file and line of the error', () => {
    const md = [
      '# Fixture',
      '',
      '```ts',
      'const ok: number = 1;',
      "const bad: number = 'one';",
      'export { ok, bad };',
      '```',
      '',
      '```ts no-check',
      'this is not TypeScript',
      '```',
    ].join('\n');
    const diagnostics = checkSamples(extractSamples(md, 'fixture.md'));
    assert.equal(diagnostics.length, 1, JSON.stringify(diagnostics));
    assert.equal(diagnostics[0]!.location, 'fixture.md:5');
    assert.match(diagnostics[0]!.message, /not assignable to type 'number'/);
  });

  it('every ts sample in README.md, docs/, src/**/README.md and src/ doc comments type-checks against the package', (t) => {
    const files = docFiles();
    for (const f of ['README.md', 'docs/architecture.md', 'src/helpers/README.md'])
      assert.ok(files.includes(f), `${f} is checked (found: ${files.join(', ')})`);
    const samples = collectSamples();
    const skipped = samples.filter((s) => !s.check);
    // Listed so a reader of the test output sees what is exempt, not only how many.
    t.diagnostic(
      `doc samples: ${samples.length} found, ${samples.length - skipped.length} checked, ${skipped.length} skipped (no-check)`,
    );
    for (const s of skipped) t.diagnostic(`skipped (no-check): ${s.file}:${s.line}`);
    assert.ok(
      samples.some((s) => s.file === 'README.md' && s.check),
      'the README has checked samples',
    );
    assert.ok(
      samples.some((s) => s.file.endsWith('.ts')),
      'doc-comment samples of src/ are collected too',
    );
    const errors = checkSamples(samples);
    assert.deepEqual(
      errors.map((e) => `${e.location}: ${e.message}`),
      [],
    );
  });
});
