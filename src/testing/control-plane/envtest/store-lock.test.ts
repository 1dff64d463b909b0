import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeClock } from '../../../core/fake-clock.js';
import { EnvtestError } from './envtest-error.js';
import { withStoreLock } from './store-lock.js';

const MODULE = fileURLToPath(new URL('./store-lock.ts', import.meta.url));

/**
 * A lock left by a process that died holding it, in whatever layout the lock writes: a child takes
 * the lock and is killed inside.
 */
async function lockOfDeadProcess(path: string): Promise<void> {
  const script = `
    setInterval(() => {}, 1000);
    import(${JSON.stringify(MODULE)}).then((m) =>
      m.withStoreLock(${JSON.stringify(path)}, () => { console.log('inside'); return new Promise(() => {}); }));
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('inside')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the lock holder exited (${code}) before taking the lock`)));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('the envtest store lock', () => {
  let dir: string;
  let staleLock: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'envtest-lock-'));
    staleLock = join(dir, 'stale.lock');
    await lockOfDeadProcess(staleLock);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('never has two holders at once when many contenders take over a lock whose owner died', async () => {
    // Regression: two contenders both judged the lock stale; one removed the lock the other had just
    // taken, so both were inside (and a third saw a raw ENOTEMPTY/ENOENT from the removal).
    const TRIALS = 30;
    const CONTENDERS = 8;
    const overlaps: number[] = [];
    const errors: unknown[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const trialDir = await mkdtemp(join(dir, 'trial-'));
      const path = join(trialDir, '.lock');
      await cp(staleLock, path, { recursive: true });
      let inside = 0;
      let most = 0;
      const results = await Promise.allSettled(
        Array.from({ length: CONTENDERS }, async (_, i) => {
          // Staggered by up to 3 ms, so some judge the lock stale while others are taking it over.
          await new Promise((resolve) => setTimeout(resolve, i % 4));
          return withStoreLock(
            path,
            async () => {
              most = Math.max(most, ++inside);
              // Long enough for a contender that wrongly thinks the lock free to walk in.
              await new Promise((resolve) => setTimeout(resolve, 2));
              inside--;
            },
            { pollMs: 1, timeoutMs: 30_000 },
          );
        }),
      );
      if (most > 1) overlaps.push(trial);
      for (const r of results) if (r.status === 'rejected') errors.push(r.reason);
      assert.deepEqual(await readdir(trialDir), [], 'nothing is left beside the store once all are done');
    }
    assert.deepEqual(
      { trialsWithTwoHolders: overlaps, errors: errors.map((e) => (e as Error).message) },
      { trialsWithTwoHolders: [], errors: [] },
      `of ${TRIALS} trials: none with two holders at once; every contender got the lock in the end, none saw a raw fs error`,
    );
  });

  test('a lock held by a live process is waited for, and on timeout the error names the lock and its holder', async () => {
    const path = join(await mkdtemp(join(dir, 'held-')), '.lock');
    const clock = new FakeClock();
    let release!: () => void;
    const held = withStoreLock(path, () => new Promise<void>((resolve) => (release = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const waiting = withStoreLock(path, () => Promise.resolve('entered'), { clock, timeoutMs: 1000, pollMs: 100 });
    let settled = false;
    waiting.then(
      () => (settled = true),
      () => (settled = true),
    );
    // The waiter's file system calls complete on real time, its polls on the fake clock.
    for (let i = 0; i < 500 && !settled; i++) {
      await clock.advance(100);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await assert.rejects(waiting, (e: unknown) => {
      assert.ok(e instanceof EnvtestError, String(e));
      assert.match(e.message, /timed out after 1000 ms waiting for the envtest store lock/);
      assert.ok(e.message.includes(path), e.message);
      assert.match(e.message, new RegExp(`held by pid ${process.pid}`));
      return true;
    });
    release();
    await held;
  });

  test('a lock that cannot be made (the store is not a folder) is an EnvtestError, not a raw fs error', async () => {
    const notAFolder = join(await mkdtemp(join(dir, 'file-')), 'store');
    await writeFile(notAFolder, 'x');
    await assert.rejects(
      withStoreLock(join(notAFolder, '.lock'), () => Promise.resolve()),
      (e: unknown) =>
        e instanceof EnvtestError && /cannot take the envtest store lock/.test(e.message) && /ENOTDIR/.test(e.message),
    );
  });

  test('an aborted signal is honoured while waiting', async () => {
    const path = join(await mkdtemp(join(dir, 'abort-')), '.lock');
    let release!: () => void;
    const held = withStoreLock(path, () => new Promise<void>((resolve) => (release = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const controller = new AbortController();
    const waiting = withStoreLock(path, () => Promise.resolve(), { signal: controller.signal, pollMs: 5 });
    controller.abort();
    await assert.rejects(waiting);
    release();
    await held;
    assert.deepEqual(await readdir(join(path, '..')), []);
  });
});
