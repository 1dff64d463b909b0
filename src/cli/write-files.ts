/**
 * Writes a set of files into a folder all-or-nothing: every file is first written to a temporary
 * folder beside the target (same filesystem, so renames are atomic), then renamed into place. A
 * failure before the renames leaves the target untouched; a failure during them puts back what was
 * there. Either way the temporary folder is removed.
 */
import { mkdir, mkdtemp, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, normalize } from 'node:path';
import { CliUsageError } from './cli-error.js';

export interface FileToWrite {
  /** Relative to the target folder; may contain subfolders. */
  readonly path: string;
  readonly content: string;
  /** File mode. @defaultValue 0o644 */
  readonly mode?: number;
}

function checkRelative(path: string): void {
  const normalized = normalize(path);
  if (isAbsolute(path) || normalized === '.' || normalized.startsWith('..')) {
    throw new CliUsageError(`refusing to write outside the target folder: ${path}`);
  }
}

/**
 * Refuses a write set naming one path twice (or a file that another path needs as its folder):
 * written one after the other, the later would silently replace the earlier.
 */
function checkUnique(files: readonly FileToWrite[]): void {
  const seen = new Set<string>();
  for (const file of files) {
    const path = normalize(file.path);
    if (seen.has(path))
      throw new CliUsageError(`refusing to write ${file.path} twice in one set of files; nothing was written`);
    seen.add(path);
  }
  for (const path of seen) {
    for (let folder = dirname(path); folder !== '.' && folder !== dirname(folder); folder = dirname(folder)) {
      if (seen.has(folder))
        throw new CliUsageError(
          `refusing to write ${folder} both as a file and as the folder of ${path}; nothing was written`,
        );
    }
  }
}

function checkFiles(files: readonly FileToWrite[]): void {
  files.forEach((f) => checkRelative(f.path));
  checkUnique(files);
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

function unwritable(target: string, error: unknown): CliUsageError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return new CliUsageError(`cannot write to ${target} (${code}); nothing was written`, { cause: error });
}

/** Makes a temporary folder beside `target` (creating `target`'s parent if needed). */
async function tempBeside(target: string): Promise<string> {
  const parent = dirname(target);
  try {
    await mkdir(parent, { recursive: true });
    return await mkdtemp(join(parent, `.${basename(target)}.operator-runtime-`));
  } catch (error) {
    throw unwritable(target, error);
  }
}

async function writeAll(dir: string, files: readonly FileToWrite[]): Promise<void> {
  for (const file of files) {
    const path = join(dir, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.content, { mode: file.mode ?? 0o644 });
  }
}

/**
 * Puts `files` into the folder `target` (created if missing), replacing files of the same name and
 * leaving every other file there alone.
 */
export async function writeFilesAtomically(target: string, files: readonly FileToWrite[]): Promise<void> {
  checkFiles(files);
  const temp = await tempBeside(target);
  try {
    try {
      await writeAll(join(temp, 'new'), files);
    } catch (error) {
      throw unwritable(target, error);
    }
    if (!(await exists(target))) {
      await rename(join(temp, 'new'), target).catch((error: unknown) => {
        throw unwritable(target, error);
      });
      return;
    }
    // Existing folder: move each old file aside, then the new one in; undo in reverse on failure.
    const done: { path: string; hadOld: boolean }[] = [];
    try {
      for (const file of files) {
        const destination = join(target, file.path);
        const old = join(temp, 'old', file.path);
        const hadOld = await exists(destination);
        await mkdir(dirname(destination), { recursive: true });
        if (hadOld) {
          await mkdir(dirname(old), { recursive: true });
          await rename(destination, old);
        }
        done.push({ path: file.path, hadOld });
        await rename(join(temp, 'new', file.path), destination);
      }
    } catch (error) {
      for (const { path, hadOld } of done.reverse()) {
        await rm(join(target, path), { force: true });
        if (hadOld) await rename(join(temp, 'old', path), join(target, path));
      }
      throw unwritable(target, error);
    }
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/** Creates the folder `target` holding exactly `files`; it must not exist, or be empty. */
export async function createFolderAtomically(target: string, files: readonly FileToWrite[]): Promise<void> {
  checkFiles(files);
  const temp = await tempBeside(target);
  try {
    try {
      await writeAll(join(temp, 'new'), files);
    } catch (error) {
      throw unwritable(target, error);
    }
    // An empty target folder is replaced; a non-empty one makes rename fail (ENOTEMPTY), never merged.
    if (await exists(target)) await rmdir(target).catch(() => undefined);
    await rename(join(temp, 'new'), target).catch((error: unknown) => {
      throw unwritable(target, error);
    });
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
