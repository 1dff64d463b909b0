// Lint is part of the test command: an unawaited promise in an async runtime is a silent failure.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // dist/ is tsc's output (npm run build), .tmp/ holds builds in progress and test scratch.
  // src/eslint/testing/fixtures/ holds operators written the wrong way on purpose, for the plugin's
  // own test (src/eslint/fixtures.test.ts); they still typecheck with the rest.
  {
    ignores: [
      'node_modules/**',
      '**/dist/**',
      '.tmp/**',
      '.dist-build.*/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
      'src/eslint/testing/fixtures/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test()/describe() return promises the runner itself tracks.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
);
