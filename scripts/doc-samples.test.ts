import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSamples, collectSamples, docFiles, extractSamples } from './doc-samples.js';

describe('doc samples', () => {
  it('extracts ts and typescript blocks with the line of their first code line, and honours no-check', () => {
    const md = ['# t', '```ts', 'const a = 1;', '```', '```sh', 'ls', '```', '````typescript no-check', 'x(', '```', '````', '```TS', '```'].join('\n');
    assert.deepEqual(extractSamples(md, 'x.md'), [
      { file: 'x.md', line: 3, code: 'const a = 1;', check: true },
      { file: 'x.md', line: 9, code: 'x(\n```', check: false },
      { file: 'x.md', line: 13, code: '', check: true },
    ]);
  });

  it('a broken sample fails naming the markdown file and line of the error', () => {
    const diagnostics = checkSamples([
      { file: 'fixture.md', line: 10, code: "const ok: number = 1;\nconst bad: number = 'one';\nexport { ok, bad };", check: true },
      { file: 'fixture.md', line: 20, code: 'this is not TypeScript', check: false },
    ]);
    assert.equal(diagnostics.length, 1, JSON.stringify(diagnostics));
    assert.equal(diagnostics[0]!.location, 'fixture.md:11');
    assert.match(diagnostics[0]!.message, /not assignable to type 'number'/);
  });

  it('every ts sample in README.md, docs/ and src/**/README.md type-checks against the package', () => {
    const files = docFiles();
    assert.ok(files.includes('README.md') && files.some((f) => f.startsWith('docs/')), `doc files: ${files.join(', ')}`);
    const samples = collectSamples();
    const skipped = samples.filter((s) => !s.check);
    // Listed so a reader of the test output sees what is exempt, not only how many.
    console.log(`doc samples: ${samples.length} found, ${samples.length - skipped.length} checked, ${skipped.length} skipped (no-check)${skipped.map((s) => `\n  skipped ${s.file}:${s.line}`).join('')}`);
    assert.ok(samples.some((s) => s.file === 'README.md' && s.check), 'the README has checked samples');
    const errors = checkSamples(samples);
    assert.deepEqual(errors.map((e) => `${e.location}: ${e.message}`), []);
  });
});
