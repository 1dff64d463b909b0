import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkRepository, checkText, pathMentions, scannedFiles, tsComments } from './doc-links.js';

describe('doc links', () => {
  it('finds root, relative and module paths in a line, but not globs, placeholders or URLs', () => {
    assert.deepEqual(pathMentions('see `src/core/clock.ts`, ../README.md and testing/fault-proxy.ts.'), [
      'src/core/clock.ts',
      '../README.md',
      'testing/fault-proxy.ts',
    ]);
    assert.deepEqual(
      pathMentions('src/**/*.test.ts, src/<module>/, https://github.com/x/y/blob/main/src/a.ts, ${dir}/src/b'),
      [],
    );
  });

  it('reads only comments of TypeScript, with the line each starts on', () => {
    const text = "const a = 'src/nowhere.ts';\n/**\n * see src/missing.ts\n */\nconst b = 1; // and docs/gone.md\n";
    assert.deepEqual(
      tsComments(text).map((c) => c.line),
      [2, 5],
    );
    assert.deepEqual(
      checkText('src/x.ts', text).map((d) => `${d.location} ${d.reference}`),
      ['src/x.ts:3 src/missing.ts', 'src/x.ts:5 docs/gone.md'],
    );
  });

  it('a dangling path, a path outside the repository, a citation of the seed and an unknown document each fail naming file:line', () => {
    const md = [
      '# x',
      'See `docs/architecture.md` (exists).',
      'And `docs/no-such-file.md`.',
      'The brief: `../../shared/design/architecture.md`.',
      "The seed's chapter 3 says so.",
      'As control-plane-notes.md shows; see architecture.md and status-body.ts, not store.ts.',
    ].join('\n');
    assert.deepEqual(
      checkText('docs/x.md', md).map((d) => `${d.location} ${d.reason}`),
      [
        'docs/x.md:3 does not exist',
        'docs/x.md:4 points outside the repository',
        'docs/x.md:5 cites the practices seed, which is not in the repository',
        'docs/x.md:6 names a document that is not in the repository',
        'docs/x.md:6 names a file that is not in the repository',
      ],
    );
  });

  it('comments and docs in the repository point only at files that exist in it', () => {
    const files = scannedFiles();
    assert.ok(
      files.includes('README.md') && files.includes('docs/architecture.md') && files.some((f) => f.startsWith('src/')),
      'scans README, docs and src',
    );
    assert.deepEqual(
      checkRepository().map((d) => `${d.location}: ${d.reference} ${d.reason}`),
      [],
    );
  });
});
