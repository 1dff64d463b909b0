import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AbortedError } from '../core/errors.js';
import { AbortRace } from './abort-race.js';

test('each race settles like its promise while the signal is not aborted', async () => {
  const ac = new AbortController();
  const races = new AbortRace(ac.signal);
  assert.equal(await races.race(Promise.resolve(1)), 1);
  await assert.rejects(races.race(Promise.reject(new Error('boom'))), /boom/);
  assert.equal(await races.race(new Promise((r) => setTimeout(() => r(2), 1))), 2);
  races.dispose();
});

test('an abort rejects the race in progress at once with AbortedError carrying the reason, and every later race', async () => {
  const ac = new AbortController();
  const races = new AbortRace(ac.signal);
  const never = new Promise<never>(() => {});
  const pending = races.race(never);
  ac.abort('stop');
  await assert.rejects(pending, (e: unknown) => e instanceof AbortedError && e.cause === 'stop');
  // Raced after the abort: rejected at once, and the promise's own rejection is not left unhandled.
  await assert.rejects(races.race(Promise.reject(new Error('late'))), AbortedError);
  races.dispose();
});

test('a race on an already aborted signal rejects; dispose removes the one listener', async () => {
  const aborted = AbortSignal.abort('gone');
  await assert.rejects(new AbortRace(aborted).race(Promise.resolve(1)), AbortedError);

  const ac = new AbortController();
  let added = 0;
  let removed = 0;
  const signal = Object.assign(Object.create(ac.signal) as AbortSignal, {
    addEventListener: (...args: Parameters<AbortSignal['addEventListener']>) => {
      added++;
      ac.signal.addEventListener(...args);
    },
    removeEventListener: (...args: Parameters<AbortSignal['removeEventListener']>) => {
      removed++;
      ac.signal.removeEventListener(...args);
    },
  });
  const races = new AbortRace(signal);
  for (let i = 0; i < 3; i++) await races.race(Promise.resolve(i));
  races.dispose();
  assert.deepEqual([added, removed], [1, 1]);
});
