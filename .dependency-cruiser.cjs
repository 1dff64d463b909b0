/**
 * Import rules for src/, checked by `npm run lint` (`depcruise --config .dependency-cruiser.cjs src`).
 * Type-only imports count: a cycle or an upward import through types still ties modules together.
 *
 * LAYERS is docs/architecture.md's module table as data: the src/ modules each module's library code
 * may import. scripts/architecture-doc.test.ts reads the `layer-*` rules back and holds the table to
 * them (same sets, no cycle between modules, a row for every folder under src/), so a new import across modules changes both in one
 * reviewed diff. Tests (`*.test.ts`, `*.bench.ts`) and test support (`src/<module>/testing/`,
 * `src/testing/<tool>/test-support/`, `*.test-support.ts`, `src/<module>/bench/`) may import any
 * module: a test of the RBAC generator runs a manager.
 *
 * TESTING_TOOLS does the same one floor down, inside src/testing/: each test tool (one folder, one
 * entry) imports only the tools listed for it, never the `operator-runtime/testing` entry file.
 */

/** Module → the modules its library code imports (besides itself). Order: lower layers first. */
const LAYERS = {
  core: [],
  metrics: ['core'],
  logging: ['core'],
  client: ['core'],
  crd: ['core', 'client'],
  rbac: ['core', 'client'],
  workqueue: ['core', 'metrics'],
  cache: ['core', 'client', 'metrics'],
  cluster: ['core', 'client', 'cache'],
  helpers: ['core', 'client', 'metrics'],
  'leader-election': ['core', 'client', 'metrics', 'rbac'],
  controller: ['core', 'client', 'cache', 'cluster', 'workqueue', 'metrics', 'rbac'],
  console: ['core', 'logging', 'cache', 'controller'],
  webhook: ['core', 'client', 'cache', 'metrics', 'logging'],
  sharding: ['core', 'client', 'cache', 'controller', 'leader-election', 'metrics'],
  fleet: ['core', 'client', 'metrics', 'cache', 'cluster', 'controller', 'rbac', 'leader-election', 'sharding'],
  // Lifecycle and wiring: the host cluster, controllers, endpoints and the features it runs.
  manager: [
    'core',
    'metrics',
    'client',
    'rbac',
    'cache',
    'cluster',
    'leader-election',
    'controller',
    'console',
    'helpers',
    'webhook',
    'sharding',
    'fleet',
  ],
  testing: ['core', 'client', 'cache', 'helpers', 'controller', 'logging', 'webhook', 'manager', 'fleet'],
  codegen: ['core', 'client', 'crd', 'rbac', 'webhook', 'sharding', 'manager'],
  cli: ['core', 'client', 'crd', 'rbac', 'manager', 'codegen', 'testing', 'eslint'],
  // Lint rules read source text; they import nothing of the runtime, so linting never loads it.
  eslint: [],
};

/** Test tool (folder of src/testing/) → the other tools its library code imports. Lower floors first. */
const TESTING_TOOLS = {
  'control-plane': [],
  'fake-client': [],
  conformance: [],
  chaos: ['control-plane'],
  simulation: ['fake-client', 'chaos'],
  fleet: ['control-plane', 'chaos'],
};

/** What the root entry (src/index.ts) never re-exports: test tools and the tools' own entries. */
const NOT_IN_ROOT = ['testing', 'codegen', 'cli', 'eslint'];

/** Files that are tests or test support, not library code. */
const TEST_OR_SUPPORT = [
  '\\.test\\.ts$',
  '\\.bench\\.ts$',
  '\\.test-support\\.ts$',
  '^src/.+/testing/',
  '^src/[^/]+/bench/',
  '^src/testing/[^/]+/test-support/',
];

/**
 * Upward imports silenced one by one (file → file), while one is being removed; depcruise prints how
 * many it ignored. Empty: the layers hold with no exception. (The last, webhook-server.ts taking its
 * fallback certificate from src/manager/, went when self-signed-certificate.ts moved to src/webhook/.)
 */
const UPWARD_IMPORTS_BEING_REMOVED = [];

const layerRules = Object.entries(LAYERS).map(([module, allowed]) => ({
  name: `layer-${module}`,
  severity: 'error',
  comment:
    `${module}/ imports ${allowed.length === 0 ? 'nothing of ours' : `only ${allowed.join(', ')}`} ` +
    '(docs/architecture.md, Modules): imports point down, never up, and never at the root entry.',
  from: { path: `^src/${module}/`, pathNot: TEST_OR_SUPPORT },
  to: { path: '^src/', pathNot: `^src/(${[module, ...allowed].join('|')})/` },
}));

const testingToolRules = Object.entries(TESTING_TOOLS).map(([tool, allowed]) => ({
  name: `testing-${tool}`,
  severity: 'error',
  comment:
    `testing/${tool}/ imports ${allowed.length === 0 ? 'no other test tool' : `only the test tools ${allowed.join(', ')}`} ` +
    '(src/testing/README.md): one tool per folder and entry, imports point down.',
  from: { path: `^src/testing/${tool}/`, pathNot: TEST_OR_SUPPORT },
  to: { path: '^src/testing/', pathNot: `^src/testing/(${[tool, ...allowed].join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    ...testingToolRules,
    {
      name: 'layer-root',
      severity: 'error',
      comment: 'The root entry is what writing an operator needs: no test tools, no CLI or codegen.',
      from: { path: '^src/index\\.ts$' },
      to: { path: `^src/(${NOT_IN_ROOT.join('|')})/` },
    },
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
    {
      name: 'no-test-support-in-library',
      severity: 'error',
      comment:
        'Test support (src/<module>/testing/, *.test-support.ts, src/<module>/bench/) is left out of the ' +
        'package (package.json files): library code that imports it breaks for users.',
      from: { path: '^src/', pathNot: TEST_OR_SUPPORT },
      to: { path: TEST_OR_SUPPORT.slice(2) },
    },
    {
      name: 'no-repo-folders-in-library',
      severity: 'error',
      comment:
        'The package ships src/ and dist/ only: library code and test support never import examples/, ' +
        "chaos/, bench/ or scripts/. Test files may (a test of the reference operator's kind, a benchmark).",
      from: { path: '^src/', pathNot: TEST_OR_SUPPORT.slice(0, 2) },
      to: { path: '^(examples|chaos|bench|scripts)/' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    knownViolations: UPWARD_IMPORTS_BEING_REMOVED.map(([rule, from, to]) => ({
      type: 'dependency',
      from,
      to,
      rule: { name: rule, severity: 'error' },
    })),
  },
};
