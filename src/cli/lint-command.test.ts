/**
 * `operator-runtime lint` in-process: the reference operator is clean (both halves), and a project
 * written the wrong way gets one line per finding — `file:line:column` for the reconciler rules, the
 * kind and schema path for the custom-kind checks — and exit 1; an allowance in the config drops
 * what it names; bad input is exit 2.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { runCli } from './program.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(REPO_ROOT, 'src');

async function lint(args: string[], cwd: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['lint', ...args], {
    cwd,
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
  });
  return { code, stdout, stderr };
}

/** A kind breaking three conventions; the config imports the runtime from source by path. */
const config = (allow = '') => `import { defineCustomKind, Type } from '${SRC}/crd/index.ts';
import { Manager } from '${SRC}/manager/manager.ts';
import { offlineClient } from '${SRC}/rbac/offline-client.ts';
const GADGET = defineCustomKind({
  group: 'example.com',
  names: { kind: 'Gadget', plural: 'gadgets' },
  scope: 'Namespaced',
  versions: [{ name: 'v1', served: true, storage: true, schema: {
    spec: Type.Object({ ratio: Type.Number(), url: Type.String({ maxLength: 10 }), mode: Type.Union([Type.Literal('fast')]) }),
    status: Type.Object({ ready: Type.Optional(Type.Integer()) }),
  }, subresources: { status: {} } }],
});
export default {
  name: 'gadget-operator',
  namespace: 'gadget-system',
  image: 'example.com/gadget-operator:1.0.0',
  kinds: [GADGET],
  manager: () => new Manager({ client: offlineClient() }),
  lint: { allow: [${allow}] },
};
`;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'operator-runtime-lint-'));
  await mkdir(join(dir, 'src'));
  const wrong = await readFile(
    join(SRC, 'eslint/testing/fixtures/owned-create-with-controller-reference.wrong.ts'),
    'utf8',
  );
  await writeFile(join(dir, 'src', 'reconciler.ts'), wrong);
  // Tests are left out: they may sleep and read fixtures synchronously.
  await writeFile(join(dir, 'src', 'reconciler.test.ts'), wrong);
});
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the reference operator has no finding: its sources and its two kinds', async () => {
  const { code, stdout, stderr } = await lint(['--timing'], join(REPO_ROOT, 'examples/database-operator'));
  assert.equal(stderr, '');
  assert.equal(code, 0, stdout);
  assert.match(
    stdout,
    /^timing: \d+ files through the reconciler rules in \d+ ms; 2 kinds through the custom-kind checks in \d+ ms\n$/,
  );
});

test('a project written the wrong way: a line per finding with file:line or the schema path, exit 1', async () => {
  await writeFile(join(dir, 'operator-runtime.config.ts'), config());
  const { code, stdout, stderr } = await lint([], dir);
  assert.equal(code, 1);
  assert.equal(stderr, 'error: lint found 2 errors\n');
  const lines = stdout.trimEnd().split('\n');
  assert.equal(lines.length, 4, stdout);
  assert.match(
    lines[0]!,
    /^src\/reconciler\.ts:23:35 {2}error {2}This controller `owns\(ConfigMap\)`.* {2}operator-runtime\/owned-create-with-controller-reference$/,
  );
  assert.match(lines[1]!, /^Gadget example\.com\/v1 \.spec\.ratio {2}error {2}a floating-point field.* {2}no-floats$/);
  assert.match(
    lines[2]!,
    /^Gadget example\.com\/v1 \.spec\.mode {2}warning {2}enum value "fast" is not PascalCase.* {2}enum-pascal-case$/,
  );
  assert.equal(lines[3], '3 problems (2 errors, 1 warning)');
});

test('an allowance drops the finding it names; warnings alone exit 0; --no-kinds skips the kinds', async () => {
  // Another file: a config once imported stays in the module cache.
  await writeFile(
    join(dir, 'allowing.config.ts'),
    config(`{ check: 'no-floats', kind: 'Gadget', path: '.spec.ratio', reason: 'a ratio the API has always had' }`),
  );
  const { code, stdout } = await lint(['--no-kinds', 'src/reconciler.ts'], dir);
  assert.equal(code, 1);
  assert.doesNotMatch(stdout, /Gadget/);
  await writeFile(join(dir, 'src', 'reconciler.ts'), '// nothing yet\n');
  const clean = await lint(['--config', 'allowing.config.ts'], dir);
  assert.equal(clean.code, 0, clean.stdout);
  assert.match(clean.stdout, /^Gadget example\.com\/v1 \.spec\.mode {2}warning/);
});

test('bad input is exit 2 with one line: a path that does not exist, an allowance without a reason', async () => {
  const missing = await lint(['--no-kinds', 'lib'], dir);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^error: nothing to lint at lib \(in .*\)\n$/);
  await writeFile(join(dir, 'no-reason.config.ts'), config(`{ check: 'no-floats', path: '.spec.ratio' }`));
  const noReason = await lint(['--config', 'no-reason.config.ts'], dir);
  assert.equal(noReason.code, 2);
  assert.match(
    noReason.stderr,
    /^error: config .*: invalid option config\.lint\.allow\[0\]: needs a check .*, a path and a reason, got \{"check":"no-floats","path":".spec.ratio"\}\n$/,
  );
});
