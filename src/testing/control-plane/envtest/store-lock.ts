/**
 * A lock folder so two test runs installing at once neither download twice into one folder nor see
 * a half-written one. A lock whose owner process is gone is taken over.
 *
 * The lock is the folder `path` holding one file, `owner-<pid>-<random>`, named uniquely per taking:
 * - **Taking** renames a temp folder already holding that file into place, so no lock ever exists
 *   without its owner. A rename of a folder succeeds only where the target is absent (or an empty
 *   folder, which is a free lock), so of any number of contenders exactly one wins.
 * - **Taking over** a lock whose owner is dead unlinks the owner file by its unique name, then
 *   removes the folder with `rmdir`, which removes only an empty folder. Of two contenders that
 *   judged the same lock stale only one unlink succeeds, and neither can remove a lock taken since:
 *   its owner file has another name and its folder is not empty. The freed path is then contended
 *   for by rename, as above. (Renaming the stale folder away instead would race: a contender that
 *   judged it stale a moment ago can rename away the lock someone took since.)
 * - **Releasing** is the same two steps with our own owner file.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, readdir, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sleep, throwIfAborted } from '../../../core/abort.js';
import { realClock, type Clock } from '../../../core/clock.js';
import { EnvtestError } from './envtest-error.js';

export interface StoreLockOptions {
  /** How long to wait for another holder. @defaultValue {@link DEFAULT_STORE_LOCK_TIMEOUT_MS} */
  readonly timeoutMs?: number;
  /** How often to look again while another holder has it. @defaultValue {@link DEFAULT_STORE_LOCK_POLL_MS} */
  readonly pollMs?: number;
  /** @defaultValue the real clock */
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

/** A download of the archive over a slow link may take this long; then the waiter gives up. */
export const DEFAULT_STORE_LOCK_TIMEOUT_MS = 15 * 60_000;
/** @defaultValue 200 ms */
export const DEFAULT_STORE_LOCK_POLL_MS = 200;

const OWNER_FILE = /^owner-(\d+)-[0-9a-f]+$/;
/** The owner file of locks taken by earlier versions (`mkdir`, then this file), still taken over when stale. */
const LEGACY_OWNER_FILE = 'owner.pid';

type ErrnoCode = string | undefined;
const codeOf = (error: unknown): ErrnoCode => (error as NodeJS.ErrnoException | undefined)?.code;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return codeOf(error) === 'EPERM';
  }
}

function cannotTake(path: string, error: unknown): EnvtestError {
  return new EnvtestError(
    `cannot take the envtest store lock ${path}: ${(error as Error).message}. Is the store folder writable? (OPERATOR_RUNTIME_CACHE_DIR moves it)`,
    { cause: error },
  );
}

/** Removes `path` if it is an empty folder (a free lock); anything else there is left alone. */
async function removeIfEmpty(path: string): Promise<void> {
  try {
    await rmdir(path);
  } catch (error) {
    // Gone already, or someone's lock is in it now: both fine.
    if (!['ENOENT', 'ENOTEMPTY', 'EEXIST', 'EBUSY'].includes(codeOf(error) ?? '')) throw error;
  }
}

/** What is at `path` now. */
type Holder =
  | { readonly kind: 'free' }
  | { readonly kind: 'live'; readonly pid: number | undefined; readonly what: string }
  | { readonly kind: 'stale'; readonly ownerFile: string };

async function holderOf(path: string): Promise<Holder> {
  let entries: string[];
  try {
    entries = await readdir(path);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return { kind: 'free' };
    if (codeOf(error) === 'ENOTDIR') return { kind: 'live', pid: undefined, what: 'a file, not a lock folder' };
    throw cannotTake(path, error);
  }
  if (entries.length === 0) return { kind: 'free' };
  const [name] = entries;
  if (entries.length === 1 && name !== undefined) {
    const match = OWNER_FILE.exec(name);
    let pid = match ? Number(match[1]) : undefined;
    if (name === LEGACY_OWNER_FILE) {
      // Its writer may still be between mkdir and writing it: an empty file is not a dead owner.
      pid = Number((await readFile(join(path, name), 'utf8').catch(() => '')).trim()) || undefined;
    }
    if (pid !== undefined && pid > 0)
      return alive(pid) ? { kind: 'live', pid, what: name } : { kind: 'stale', ownerFile: name };
  }
  return { kind: 'live', pid: undefined, what: entries.slice(0, 3).join(', ') };
}

function heldBy(holder: Holder): string {
  if (holder.kind !== 'live') return 'free, yet it could not be taken';
  return holder.pid === undefined ? `held by an unknown owner: ${holder.what}` : `held by pid ${holder.pid}`;
}

/** Runs `fn` holding the lock at `path`; waits up to `timeoutMs` for another holder. */
export async function withStoreLock<T>(path: string, fn: () => Promise<T>, options: StoreLockOptions = {}): Promise<T> {
  const owner = `owner-${process.pid}-${randomBytes(8).toString('hex')}`;
  await take(path, owner, options);
  try {
    return await fn();
  } finally {
    // Best effort: a lock we fail to release names our pid, and is taken over once we exit.
    await unlink(join(path, owner))
      .then(() => removeIfEmpty(path))
      .catch(() => undefined);
  }
}

async function take(path: string, owner: string, options: StoreLockOptions): Promise<void> {
  const clock = options.clock ?? realClock;
  const timeoutMs = options.timeoutMs ?? DEFAULT_STORE_LOCK_TIMEOUT_MS;
  const deadline = clock.monotonicNow() + timeoutMs;
  throwIfAborted(options.signal);
  const candidate = await mkdtemp(`${path}.new-`).catch((error: unknown) => {
    throw cannotTake(path, error);
  });
  let taken = false;
  try {
    try {
      // mkdtemp's 0700 would hide the owner from other users sharing the store: they could not wait for it.
      await chmod(candidate, 0o755);
      await writeFile(join(candidate, owner), `${process.pid}\n`);
    } catch (error) {
      throw cannotTake(path, error);
    }
    for (;;) {
      throwIfAborted(options.signal);
      try {
        await rename(candidate, path);
        taken = true;
        return;
      } catch (error) {
        const code = codeOf(error);
        // ENOTEMPTY/EEXIST: a lock is there (EPERM/EACCES on Windows, which will not replace a folder).
        if (!['ENOTEMPTY', 'EEXIST', 'ENOTDIR', 'EPERM', 'EACCES', 'EBUSY'].includes(code ?? ''))
          throw cannotTake(path, error);
      }
      let holder: Holder;
      try {
        holder = await holderOf(path);
        if (holder.kind === 'stale') {
          await unlink(join(path, holder.ownerFile)).catch((error: unknown) => {
            // Another contender freed it first.
            if (codeOf(error) !== 'ENOENT') throw error;
          });
        }
        if (holder.kind !== 'live') await removeIfEmpty(path);
      } catch (error) {
        if (error instanceof EnvtestError) throw error;
        throw cannotTake(path, error);
      }
      if (clock.monotonicNow() >= deadline)
        throw new EnvtestError(
          `timed out after ${timeoutMs} ms waiting for the envtest store lock ${path} (${heldBy(holder)}); remove it if no install is running`,
        );
      // Freed: contend again at once.
      if (holder.kind !== 'live') continue;
      await sleep(clock, options.pollMs ?? DEFAULT_STORE_LOCK_POLL_MS, options.signal);
    }
  } finally {
    // Best effort, so that the reason we did not take the lock is what the caller sees.
    if (!taken) await rm(candidate, { recursive: true, force: true }).catch(() => undefined);
  }
}
