import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep, whenAborted } from '../core/abort.js';
import { FakeClock } from '../core/fake-clock.js';
import { RunnableGroup, type GroupMember } from './runnable-group.js';

/** A member that records its start and stop in `events`; with `stopMs`, stopping takes that long on `clock`. */
function recorded(
  name: string,
  events: string[],
  options: { clock?: FakeClock; stopMs?: number; ready?: () => Promise<void> } = {},
): GroupMember {
  return {
    name,
    ...(options.ready ? { ready: options.ready } : {}),
    runnable: {
      async start(signal) {
        events.push(`start ${name}`);
        await whenAborted(signal);
        events.push(`stopping ${name}`);
        if (options.clock && options.stopMs) await sleep(options.clock, options.stopMs);
        events.push(`stopped ${name}`);
      },
    },
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const noFailure = (err: unknown): void => assert.fail(`unexpected failure: ${String(err)}`);

test('a group starts its members in the order added, each only once the previous one is ready', async () => {
  const events: string[] = [];
  const firstReady = deferred();
  const group = new RunnableGroup('servers', { onFailure: noFailure }).add(
    recorded('a', events, { ready: () => firstReady.promise }),
    recorded('b', events),
    recorded('c', events),
  );
  let started = false;
  const starting = group.start().then(() => (started = true));
  await Promise.resolve();
  assert.deepEqual(events, ['start a'], 'b waits for a to be ready');
  firstReady.resolve();
  await starting;
  assert.equal(started, true);
  assert.deepEqual(events, ['start a', 'start b', 'start c']);
  await group.stop();
});

test('stop() stops the members in reverse order, each stopped before the next is asked', async () => {
  const clock = new FakeClock(0);
  const events: string[] = [];
  const group = new RunnableGroup('servers', { onFailure: noFailure }).add(
    recorded('webhook', events, { clock, stopMs: 1_000 }),
    recorded('metrics', events, { clock, stopMs: 1_000 }),
    recorded('health', events, { clock, stopMs: 1_000 }),
  );
  await group.start();
  events.length = 0;
  let stopped = false;
  const stopping = group.stop().then(() => (stopped = true));
  for (let i = 0; i < 3; i++) await clock.advance(1_000);
  await stopping;
  assert.equal(stopped, true);
  assert.deepEqual(events, [
    'stopping health',
    'stopped health',
    'stopping metrics',
    'stopped metrics',
    'stopping webhook',
    'stopped webhook',
  ]);
});

test("one member's failure is reported with its name, and stops every member with that error when the owner aborts on it", async () => {
  const stopAll = new AbortController();
  const failures: { err: unknown; member: string }[] = [];
  const boom = new Error('boom');
  const reasons: unknown[] = [];
  const waiting: GroupMember = {
    name: 'waiting',
    runnable: {
      start: async (s) => {
        await whenAborted(s);
        reasons.push(s.reason);
      },
    },
  };
  const failing: GroupMember = {
    name: 'failing',
    runnable: {
      start: async () => {
        throw boom;
      },
    },
  };
  const group = new RunnableGroup('every-replica', {
    onFailure: (err, member) => {
      failures.push({ err, member });
      stopAll.abort(err);
    },
  }).add(waiting, failing, { ...waiting, name: 'waiting too' });
  await group.start(stopAll.signal);
  await whenAborted(stopAll.signal);
  await group.stop();
  assert.deepEqual(failures, [{ err: boom, member: 'failing' }]);
  assert.deepEqual(reasons, [boom, boom], 'the others saw the failure as their reason');
});

test('start() rejects when a member fails before it is ready, or its readiness rejects; later members never start', async () => {
  const listenFailed = new Error('EADDRINUSE');
  const events: string[] = [];
  const failures: string[] = [];
  const failsToListen: GroupMember = {
    name: 'metrics',
    ready: () => new Promise<void>(() => {}),
    runnable: {
      start: async () => {
        throw listenFailed;
      },
    },
  };
  const group = new RunnableGroup('servers', { onFailure: (_err, member) => failures.push(member) }).add(
    recorded('webhook', events),
    failsToListen,
    recorded('health', events),
  );
  await assert.rejects(group.start(), listenFailed);
  await group.stop();
  assert.deepEqual(events, ['start webhook', 'stopping webhook', 'stopped webhook']);
  assert.deepEqual(failures, ['metrics']);

  const timedOut = new Error('caches did not sync');
  const caches = new RunnableGroup('caches', { onFailure: noFailure }).add(
    recorded('informers', events, { ready: () => Promise.reject(timedOut) }),
  );
  await assert.rejects(caches.start(), timedOut);
  await caches.stop();
});

test('a started group refuses another start and more members', async () => {
  const group = new RunnableGroup('terms', { onFailure: noFailure });
  await group.start();
  await assert.rejects(group.start(), { code: 'ERR_ALREADY_STARTED' });
  assert.throws(() => group.add(recorded('late', [])), { code: 'ERR_ALREADY_STARTED' });
  await group.stop();
});
