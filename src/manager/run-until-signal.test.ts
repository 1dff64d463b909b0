import { test } from 'node:test';
import assert from 'node:assert/strict';
import { whenAborted } from '../core/abort.js';
import type { Manager } from './manager.js';
import { runUntilSignal } from './run-until-signal.js';

/** A stand-in manager whose start() waits for its signal, then for `drain` to finish. */
function fakeManager(drain: Promise<void>, fail?: unknown): Manager {
  return {
    async start(signal: AbortSignal) {
      await whenAborted(signal);
      await drain;
      if (fail) throw fail;
    },
  } as unknown as Manager;
}

test('the first SIGTERM starts a graceful stop and resolves 0 once the manager has drained', async () => {
  let release!: () => void;
  const drain = new Promise<void>((r) => (release = r));
  let resolved = false;
  const run = runUntilSignal(fakeManager(drain), { signals: ['SIGUSR2'] }).then((code) => {
    resolved = true;
    return code;
  });
  process.kill(process.pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(resolved, false, 'still draining');
  release();
  assert.equal(await run, 0);
});

test('a second signal during the drain calls the immediate-exit hook', async () => {
  let secondSignal = 0;
  let release!: () => void;
  const drain = new Promise<void>((r) => (release = r));
  const run = runUntilSignal(fakeManager(drain), { signals: ['SIGUSR2'], onSecondSignal: () => secondSignal++ });
  process.kill(process.pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 20));
  process.kill(process.pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(secondSignal, 1);
  release();
  assert.equal(await run, 0);
  assert.equal(process.listenerCount('SIGUSR2'), 0, 'handlers removed afterwards');
});

test('a manager that fails (e.g. leadership lost) makes the exit code 1', async () => {
  const run = runUntilSignal(fakeManager(Promise.resolve(), new Error('lost')), { signals: ['SIGUSR2'] });
  process.kill(process.pid, 'SIGUSR2');
  assert.equal(await run, 1);
});
