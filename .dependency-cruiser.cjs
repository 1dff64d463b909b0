/**
 * Import rules for src/, checked by `npm run lint` (`depcruise --config .dependency-cruiser.cjs src`).
 * Type-only imports count: a cycle through types still ties modules together.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Imports only point down (docs/architecture.md); a cycle means a contract lives in the wrong file.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-test-imports-from-src',
      severity: 'error',
      comment: 'Library code never imports a test file; test support ships only through operator-runtime/testing.',
      from: { path: '^src/', pathNot: '\\.(test|int\\.test|fuzz\\.test|conformance\\.test)\\.ts$' },
      to: { path: '\\.test\\.ts$' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
  },
};
