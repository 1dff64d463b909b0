import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliUsageError } from './cli-error.js';
import { createFolderAtomically, writeFilesAtomically } from './write-files.js';

describe('writing generated files all-or-nothing', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'operator-runtime-write-files-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test('creates a missing folder with every file, and leaves no temporary folder', async () => {
    const target = join(root, 'fresh/config');
    await writeFilesAtomically(target, [
      { path: 'a.yaml', content: 'a: 1\n' },
      { path: 'sub/b.yaml', content: 'b: 2\n' },
    ]);
    assert.equal(await readFile(join(target, 'a.yaml'), 'utf8'), 'a: 1\n');
    assert.equal(await readFile(join(target, 'sub/b.yaml'), 'utf8'), 'b: 2\n');
    assert.deepEqual(await readdir(join(root, 'fresh')), ['config']);
  });

  test('replaces files of the same name and keeps every other file in an existing folder', async () => {
    const target = join(root, 'existing');
    await mkdir(target);
    await writeFile(join(target, 'a.yaml'), 'old\n');
    await writeFile(join(target, 'Dockerfile'), 'FROM x\n');
    await writeFilesAtomically(target, [{ path: 'a.yaml', content: 'new\n' }]);
    assert.equal(await readFile(join(target, 'a.yaml'), 'utf8'), 'new\n');
    assert.equal(await readFile(join(target, 'Dockerfile'), 'utf8'), 'FROM x\n');
    assert.deepEqual(
      (await readdir(root)).filter((n) => n.includes('operator-runtime-')),
      [],
    );
  });

  test('a failure halfway through the renames puts back the files already replaced', async () => {
    const target = join(root, 'halfway');
    await mkdir(target);
    await writeFile(join(target, 'a.yaml'), 'old\n');
    await writeFile(join(target, 'sub'), 'a file where the second output needs a folder\n');
    await assert.rejects(
      writeFilesAtomically(target, [
        { path: 'a.yaml', content: 'new\n' },
        { path: 'sub/b.yaml', content: 'b\n' },
      ]),
      (error: unknown) => error instanceof CliUsageError && /cannot write to .*halfway/.test(error.message),
    );
    assert.equal(await readFile(join(target, 'a.yaml'), 'utf8'), 'old\n', 'the first file was restored');
    assert.deepEqual((await readdir(target)).sort(), ['a.yaml', 'sub']);
    assert.deepEqual(
      (await readdir(root)).filter((n) => n.includes('operator-runtime-')),
      [],
    );
  });

  test('a target below a regular file is refused before anything is written', async () => {
    await writeFile(join(root, 'plain-file'), 'x');
    await assert.rejects(
      writeFilesAtomically(join(root, 'plain-file/config'), [{ path: 'a.yaml', content: '' }]),
      /cannot write to .*plain-file\/config \((ENOTDIR|EEXIST)\)/,
    );
  });

  test('paths outside the target are refused', async () => {
    await assert.rejects(
      writeFilesAtomically(join(root, 'x'), [{ path: '../escape.yaml', content: '' }]),
      /outside the target folder: \.\.\/escape\.yaml/,
    );
    await assert.rejects(
      writeFilesAtomically(join(root, 'x'), [{ path: '/etc/passwd', content: '' }]),
      /outside the target folder/,
    );
  });

  test('createFolderAtomically fills an empty folder and refuses a non-empty one untouched', async () => {
    const empty = join(root, 'empty');
    await mkdir(empty);
    await createFolderAtomically(empty, [{ path: 'README.md', content: '# hi\n' }]);
    assert.deepEqual(await readdir(empty), ['README.md']);
    await assert.rejects(createFolderAtomically(empty, [{ path: 'other.md', content: '' }]), /cannot write to .*empty/);
    assert.deepEqual(await readdir(empty), ['README.md']);
    assert.deepEqual(
      (await readdir(root)).filter((n) => n.includes('operator-runtime-')),
      [],
    );
  });

  test('a set naming one path twice is refused before anything is written (the later would silently replace the earlier)', async () => {
    for (const write of [writeFilesAtomically, createFolderAtomically]) {
      const target = join(root, `duplicate-${write.name}`);
      await assert.rejects(
        write(target, [
          { path: 'src/main.ts', content: 'the kind\n' },
          { path: 'README.md', content: '' },
          { path: './src//main.ts', content: 'the process entry\n' },
        ]),
        (error: unknown) =>
          error instanceof CliUsageError &&
          /refusing to write \.\/src\/\/main\.ts twice in one set of files; nothing was written/.test(error.message),
      );
      await assert.rejects(readdir(target), { code: 'ENOENT' });
    }
    await assert.rejects(
      createFolderAtomically(join(root, 'file-and-folder'), [
        { path: 'config', content: '' },
        { path: 'config/crd.yaml', content: '' },
      ]),
      /refusing to write config both as a file and as the folder of config\/crd\.yaml/,
    );
    assert.deepEqual(
      (await readdir(root)).filter(
        (n) => n.includes('operator-runtime-') || n.startsWith('duplicate-') || n === 'file-and-folder',
      ),
      [],
    );
  });
});
