import { test } from 'node:test';
import assert from 'node:assert/strict';
import { whenAborted } from '../core/abort.js';
import type { Manager } from './manager.js';
import { runUntilSignal } from './run-until-signal.js';

// Node 24's test runner turns on diagnostic reports for SIGUSR2 in every test process (one more
// listener, and a report file in the working directory per signal); these tests send SIGUSR2 themselves.
process.report.reportOnSignal = false;

/** Sends SIGUSR2 to this process and resolves once it has been delivered (no timing guess). */
async function signalSelf(): Promise<void> {
  // A pending signal is no handle: keep the event loop alive until it arrives.
  const keepAlive = setInterval(() => {}, 60_000);
  const delivered = new Promise<void>((resolve) => process.once('SIGUSR2', () => resolve()));
  process.kill(process.pid, 'SIGUSR2');
  await delivered;
  clearInterval(keepAlive);
  await new Promise((r) => setImmediate(r));
}

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
  await signalSelf();
  assert.equal(resolved, false, 'still draining');
  release();
  assert.equal(await run, 0);
});

test('a second signal during the drain calls the immediate-exit hook', async () => {
  let secondSignal = 0;
  let release!: () => void;
  const drain = new Promise<void>((r) => (release = r));
  const run = runUntilSignal(fakeManager(drain), { signals: ['SIGUSR2'], onSecondSignal: () => secondSignal++ });
  await signalSelf();
  await signalSelf();
  assert.equal(secondSignal, 1);
  release();
  assert.equal(await run, 0);
  assert.equal(process.listenerCount('SIGUSR2'), 0, 'handlers removed afterwards');
});

test('a manager that fails (e.g. leadership lost) makes the exit code 1', async () => {
  const run = runUntilSignal(fakeManager(Promise.resolve(), new Error('lost')), { signals: ['SIGUSR2'] });
  await signalSelf();
  assert.equal(await run, 1);
});
