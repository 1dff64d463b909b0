/**
 * A lock folder (`mkdir` is atomic) so two test runs installing at once neither download twice into
 * one folder nor see a half-written one. A lock whose owner process is gone is taken over.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EnvtestError } from './envtest-error.js';

const POLL_MS = 200;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `fn` holding the lock at `path`; waits up to `timeoutMs` for another holder. */
export async function withStoreLock<T>(
  path: string,
  fn: () => Promise<T>,
  options: { readonly timeoutMs?: number; readonly signal?: AbortSignal } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000);
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      await mkdir(path);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(await readFile(join(path, 'owner.pid'), 'utf8').catch(() => ''));
    // No pid yet: its owner is between mkdir and writeFile; give it a poll.
    if (owner > 0 && !alive(owner)) {
      await rm(path, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new EnvtestError(
        `timed out waiting for the envtest store lock ${path} (held by pid ${owner || 'unknown'}); remove it if no install is running`,
      );
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    await writeFile(join(path, 'owner.pid'), String(process.pid));
    return await fn();
  } finally {
    await rm(path, { recursive: true, force: true });
  }
}
