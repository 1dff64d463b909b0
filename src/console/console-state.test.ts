import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller } from '../controller/controller.js';
import { TerminalError } from '../controller/terminal-error.js';
import { requeueAfter } from '../controller/result.js';
import { FakeClock } from '../core/fake-clock.js';
import type { InformerHealth } from '../cache/informer.js';
import { ConsoleState } from './console-state.js';

function setup(
  reconcile: (name: string) => Promise<unknown>,
  options: { recentReconciles?: number; maxFailingKeys?: number } = {},
) {
  const clock = new FakeClock();
  const state = new ConsoleState({ clock, ...options });
  const view = state.trackController('db');
  const controller = new Controller({
    name: 'db',
    clock,
    maxConcurrentReconciles: 2,
    observer: view,
    reconciler: { reconcile: async (req) => (await reconcile(req.name)) as void },
  });
  view.attach(controller.queue, controller.workerCount);
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  return { clock, state, controller, finish: async () => (stop.abort(), await running) };
}

describe('ConsoleState', () => {
  test('a failing key shows with its redacted error, failure count and next retry, and leaves the list when it succeeds', async () => {
    let fail = true;
    const { clock, state, controller, finish } = setup(async (name) => {
      if (name === 'bad' && fail) throw new Error('backup at http://admin:s3cret@backup.local/ refused; token=abc123');
    });
    controller.enqueue({ namespace: 'ns', name: 'bad' });
    controller.enqueue({ namespace: 'ns', name: 'good' });
    await clock.advance(1);
    let db = state.snapshot().controllers[0]!;
    assert.deepEqual(
      db.failing.keys.map((k) => [k.key, k.failures, k.result]),
      [['ns/bad', 1, 'error']],
    );
    assert.ok(
      !db.failing.keys[0]!.lastError.includes('s3cret') && !db.failing.keys[0]!.lastError.includes('abc123'),
      db.failing.keys[0]!.lastError,
    );
    assert.equal(db.backoff.total, 1);
    assert.equal(db.backoff.keys[0]!.key, 'ns/bad');
    assert.ok(db.backoff.keys[0]!.retryAtMs > clock.now(), 'the retry is in the future');
    assert.equal(db.workers, 2);
    // Backoff grows: after the second failure the key has failed twice in a row.
    await clock.advance(db.backoff.keys[0]!.retryAtMs - clock.now());
    db = state.snapshot().controllers[0]!;
    assert.equal(db.failing.keys[0]!.failures, 2);
    assert.equal(db.backoff.keys[0]!.requeues, 2);
    fail = false;
    await clock.advance(db.backoff.keys[0]!.retryAtMs - clock.now());
    db = state.snapshot().controllers[0]!;
    assert.equal(db.failing.total, 0);
    assert.equal(db.backoff.total, 0);
    assert.deepEqual(db.recent.map((r) => [r.key, r.result]).slice(0, 2), [
      ['ns/bad', 'success'],
      ['ns/bad', 'error'],
    ]);
    assert.equal(db.summary.count, 4);
    assert.equal(db.summary.errors, 2);
    await finish();
  });

  test('terminal errors are failing keys without a retry; requeueAfter is not backoff', async () => {
    const { clock, state, controller, finish } = setup(async (name) => {
      if (name === 'terminal') throw new TerminalError('unsupported version');
      if (name === 'poll') return requeueAfter(5_000);
      return undefined;
    });
    controller.enqueue({ namespace: 'ns', name: 'terminal' });
    controller.enqueue({ namespace: 'ns', name: 'poll' });
    await clock.advance(1);
    const db = state.snapshot().controllers[0]!;
    assert.deepEqual(
      db.failing.keys.map((k) => [k.key, k.result]),
      [['ns/terminal', 'terminal_error']],
    );
    assert.equal(db.backoff.total, 0, 'neither a terminal error nor requeueAfter is backoff');
    assert.equal(db.delayed, 1, 'the requeueAfter key waits');
    await finish();
  });

  test('memory stays bounded: last N reconciles, at most maxFailingKeys failing keys (oldest forgotten)', async () => {
    const { clock, state, controller, finish } = setup(
      async () => {
        throw new TerminalError('no');
      },
      { recentReconciles: 5, maxFailingKeys: 3 },
    );
    for (let i = 0; i < 20; i++) controller.enqueue({ namespace: 'ns', name: `k${i}` });
    await clock.advance(1);
    const db = state.snapshot().controllers[0]!;
    assert.equal(db.recent.length, 5);
    assert.equal(db.failing.total, 3);
    assert.deepEqual(
      db.failing.keys.map((k) => k.key),
      ['ns/k19', 'ns/k18', 'ns/k17'],
      'newest failure first',
    );
    await finish();
  });

  test('events are redacted and bounded; informer health and leadership are reported', () => {
    const clock = new FakeClock();
    const health = {
      name: 'example.com/v1/Database',
      state: 'watching',
      synced: true,
      objects: 3,
      estimatedBytesPerObject: 1300,
      resourceVersion: '5',
      lastEventAtMs: clock.now(),
      lastSyncAtMs: clock.now(),
      restarts: 4,
      stalls: 1,
      lists: 3,
      consecutiveFailures: 0,
      events: 10,
      listMode: 'list',
      lastError: { message: 'Unauthorized: Bearer abc.def', code: undefined, status: 401, atMs: clock.now() },
      handlers: [{ name: 'h', pendingKeys: 2, synced: true }],
    } satisfies InformerHealth;
    const state = new ConsoleState({
      clock,
      recentEvents: 2,
      informers: () => [health],
      leaderElection: { identity: 'replica-a', isLeader: () => false, getLeader: () => 'replica-b' },
    });
    for (const reason of ['A', 'B', 'C'])
      state.recordEvent({
        atMs: clock.now(),
        type: 'Warning',
        reason,
        message: `password=hunter2 ${reason}`,
        involvedObject: { kind: 'Database', namespace: 'ns', name: 'x' },
      });
    const s = state.snapshot();
    assert.deepEqual(
      s.events.map((e) => e.reason),
      ['C', 'B'],
    );
    state.recordEvent({
      atMs: clock.now() + 5,
      type: 'Warning',
      reason: 'C',
      message: 'password=hunter2 C',
      involvedObject: { kind: 'Database', namespace: 'ns', name: 'x' },
    });
    assert.deepEqual(
      state.snapshot().events.map((e) => [e.reason, e.count]),
      [
        ['C', 2],
        ['B', 1],
      ],
      'a repeat in a row is folded',
    );
    assert.ok(s.events.every((e) => !e.message.includes('hunter2')));
    assert.deepEqual(s.leader, { enabled: true, identity: 'replica-a', isLeader: false, holder: 'replica-b' });
    assert.deepEqual(
      { relists: s.informers[0]!.relists, stalls: s.informers[0]!.stalls, pending: s.informers[0]!.pendingKeys },
      { relists: 2, stalls: 1, pending: 2 },
    );
    assert.deepEqual(
      { perObject: s.informers[0]!.estimatedBytesPerObject, total: s.informers[0]!.estimatedBytes },
      { perObject: 1300, total: 3900 },
      'capacity: the estimate per object and times the object count',
    );
    assert.ok(!s.informers[0]!.lastError!.message.includes('abc.def'));
  });

  test("a fleet's member clusters are listed by name with their caches, and their informers join the host's", () => {
    const informer = (name: string, objects: number, estimatedBytesPerObject: number | undefined): InformerHealth => ({
      name,
      state: 'watching',
      synced: true,
      objects,
      estimatedBytesPerObject,
      resourceVersion: '1',
      lastEventAtMs: undefined,
      lastSyncAtMs: undefined,
      restarts: 0,
      stalls: 0,
      lists: 1,
      consecutiveFailures: 0,
      events: 0,
      listMode: 'list',
      lastError: undefined,
      handlers: [],
    });
    const state = new ConsoleState({
      informers: () => [informer('example.com/v1/DatabaseFleet', 1, 2000)],
      clusters: () => [
        { name: 'west', state: 'unhealthy', synced: false, connectFailures: 3, informers: [] },
        {
          name: 'east',
          state: 'ready',
          synced: true,
          connectFailures: 0,
          informers: [informer('east/example.com/v1/Database', 10, 1000), informer('east/v1/Secret', 0, undefined)],
        },
      ],
    });
    const s = state.snapshot();
    assert.deepEqual(s.clusters, [
      {
        name: 'east',
        state: 'ready',
        synced: true,
        connectFailures: 0,
        informers: 2,
        objects: 10,
        estimatedBytes: 10_000,
      },
      {
        name: 'west',
        state: 'unhealthy',
        synced: false,
        connectFailures: 3,
        informers: 0,
        objects: 0,
        estimatedBytes: undefined,
      },
    ]);
    assert.deepEqual(
      s.informers.map((i) => i.name),
      ['example.com/v1/DatabaseFleet', 'east/example.com/v1/Database', 'east/v1/Secret'],
    );
    assert.deepEqual(new ConsoleState().snapshot().clusters, [], 'no fleet: no clusters');
  });

  test('the same Event in two member clusters is two rows, each with its cluster', () => {
    const state = new ConsoleState();
    const event = {
      atMs: 1,
      type: 'Normal' as const,
      reason: 'Upgraded',
      message: 'to 16',
      involvedObject: { kind: 'Database', namespace: 'ns', name: 'db' },
    };
    state.recordEvent({ ...event, cluster: 'east' });
    state.recordEvent({ ...event, cluster: 'west' });
    state.recordEvent({ ...event, cluster: 'west' });
    assert.deepEqual(
      state.snapshot().events.map((e) => [e.cluster, e.count]),
      [
        ['west', 2],
        ['east', 1],
      ],
    );
  });

  test('rejects nonsense limits and a controller tracked twice', () => {
    assert.throws(() => new ConsoleState({ recentReconciles: 0 }), { code: 'ERR_INVALID_OPTION' });
    const state = new ConsoleState();
    state.trackController('a');
    assert.throws(() => state.trackController('a'), { code: 'ERR_INVALID_OPTION' });
  });
});
