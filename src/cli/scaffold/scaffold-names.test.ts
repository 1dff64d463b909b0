/**
 * The names `init` derives: the operator's from the folder (or `--name`), the kind's files and
 * identifiers from `--kind`, and kinds that would collide with what the scaffold writes refused.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CliUsageError } from '../cli-error.js';
import { projectFiles } from './project-files.js';
import { nameFromFolder, scaffoldNames } from './scaffold-names.js';
import { sourceFiles } from './source-files.js';

const base = { group: 'example.com', kind: 'Widget', folder: 'my-operator' };

describe('scaffold names', () => {
  test('the operator is named after the folder, not the kind', () => {
    const n = scaffoldNames({ ...base, kind: 'CronJob', folder: 'batch-tools' });
    assert.equal(n.name, 'batch-tools');
    assert.equal(n.namespace, 'batch-tools-system');
    assert.equal(n.file, 'cron-job');
    assert.equal(n.controller, 'cronjob');
    assert.equal(nameFromFolder('My_Operator.v2'), 'my-operator-v2');
    assert.equal(scaffoldNames({ ...base, folder: '--Cron Operator--' }).name, 'cron-operator');
  });

  test('--name wins over the folder', () => {
    assert.equal(scaffoldNames({ ...base, name: 'widgets', folder: 'whatever' }).name, 'widgets');
  });

  test('a folder name that gives no DNS label asks for --name', () => {
    for (const folder of ['___', 'ü', 'x'.repeat(57)]) {
      assert.throws(
        () => scaffoldNames({ ...base, folder }),
        (error: unknown) =>
          error instanceof CliUsageError &&
          /cannot derive the operator name from the folder name .*: pass --name <name>/.test(error.message),
        folder,
      );
    }
  });

  test('kinds whose file the scaffold writes itself are refused, naming the kind and the file', () => {
    assert.throws(
      () => scaffoldNames({ ...base, kind: 'Main' }),
      /^CliUsageError: --kind Main is reserved: its file src\/main\.ts is src\/main\.ts, which the scaffold writes itself; choose another kind name$/,
    );
    assert.throws(
      () => scaffoldNames({ ...base, kind: 'Operator' }),
      /--kind Operator is reserved: its file src\/operator\.ts is src\/operator\.ts/,
    );
  });

  test('every source file the scaffold writes besides the kind’s own is reserved (the list cannot go stale)', () => {
    const n = scaffoldNames(base);
    const own = new Set([`src/${n.file}.ts`, `src/${n.file}-reconciler.ts`]);
    const generated = [...sourceFiles(n), ...projectFiles(n)].map((f) => f.path).filter((p) => !own.has(p));
    const bases = generated
      .map((p) => /^src\/([a-z0-9]+(?:-[a-z0-9]+)*)\.ts$/.exec(p)?.[1])
      .filter((b): b is string => b !== undefined);
    assert.deepEqual(bases.sort(), ['main', 'operator']);
    for (const file of bases) {
      const kind = file
        .split('-')
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('');
      assert.throws(
        () => scaffoldNames({ ...base, kind }),
        new RegExp(`--kind ${kind} is reserved: its file src/${file}\\.ts`),
      );
    }
  });

  test('kinds whose identifiers would break the generated code are refused', () => {
    const cases: [string, RegExp][] = [
      ['New', /--kind New is reserved: its variable name "new" is a JavaScript reserved word/],
      ['Class', /reserved word/],
      [
        'Manager',
        /--kind Manager is reserved: its variable name "manager" is already used by the generated reconciler or test/,
      ],
      ['Client', /"client" is already used/],
      ['Get', /"get" is already used/],
      ['Type', /--kind Type is reserved: its type name Type is already imported/],
      ['ControllerName', /--kind ControllerName is reserved: its constant CONTROLLER_NAME is already declared/],
    ];
    for (const [kind, message] of cases) assert.throws(() => scaffoldNames({ ...base, kind }), message, kind);
  });

  test('ordinary kinds, including ones near the reserved names, are accepted', () => {
    for (const kind of ['Widget', 'MainConfig', 'OperatorPolicy', 'Newsletter', 'ConfigMap', 'Managed']) {
      assert.equal(scaffoldNames({ ...base, kind }).kind, kind);
    }
  });
});
