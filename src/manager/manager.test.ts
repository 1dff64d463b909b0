import { test } from 'node:test';
import assert from 'node:assert/strict';
import { whenAborted } from '../core/abort.js';
import { Manager } from './manager.js';
import { FakeClock } from '../core/fake-clock.js';
import { MEMORY_REDUCING_GC_SUPPORTED } from '../core/memory-reducing-gc.js';
import { LeadershipLostError } from '../leader-election/leadership-lost-error.js';
import type { LeaderElection } from './runnable.js';
import { quietClient } from './testing/quiet-client.js';

/** Leader election driven by the test. */
class ManualElection implements LeaderElection {
  private leaderAbort: AbortController | undefined;
  private onLeading: ((s: AbortSignal) => void | Promise<void>) | undefined;
  private fail: ((err: unknown) => void) | undefined;
  released = false;
  isLeader(): boolean {
    return this.leaderAbort !== undefined && !this.leaderAbort.signal.aborted;
  }
  run(signal: AbortSignal, onStartedLeading: (leaderSignal: AbortSignal) => void | Promise<void>): Promise<void> {
    this.onLeading = onStartedLeading;
    return new Promise((resolve, reject) => {
      this.fail = reject;
      signal.addEventListener(
        'abort',
        () => {
          this.released = true;
          resolve();
        },
        { once: true },
      );
    });
  }
  win(): void {
    this.leaderAbort = new AbortController();
    void this.onLeading!(this.leaderAbort.signal);
  }
  lose(): void {
    const lost = new LeadershipLostError('ns/lease', 'renew-deadline-exceeded');
    this.leaderAbort!.abort(lost);
    this.fail!(lost);
  }
}

const tick = () => new Promise((r) => setImmediate(r));

test('leader-only runnables start only once elected; other runnables start after caches sync', async () => {
  const election = new ManualElection();
  const manager = new Manager({ client: quietClient(), metricsPort: 0, healthPort: 0, leaderElection: election });
  manager.cache.informersFor({ apiVersion: 'v1', kind: 'ConfigMap' });
  const events: string[] = [];
  let everyReplicaStarted!: () => void;
  const started = new Promise<void>((resolve) => (everyReplicaStarted = resolve));
  manager.add(
    {
      start: async (s) => {
        events.push('every-replica');
        everyReplicaStarted();
        await whenAborted(s);
      },
    },
    { needLeaderElection: false },
  );
  manager.add({
    start: async (s) => {
      events.push('leader-only');
      await whenAborted(s);
      events.push('leader-only stopped');
    },
  });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  // Awaited, not a fixed number of ticks: the cache's first sync may cross real timers under load.
  await started;
  assert.deepEqual(events, ['every-replica']);
  assert.equal(manager.informers.hasSynced(), true, 'caches synced before any runnable');
  election.win();
  await tick();
  assert.deepEqual(events, ['every-replica', 'leader-only']);
  stop.abort();
  await running;
  assert.deepEqual(events, ['every-replica', 'leader-only', 'leader-only stopped']);
  assert.equal(election.released, true);
});

test('losing leadership stops leader-only work and makes start() reject', async () => {
  const election = new ManualElection();
  const manager = new Manager({ client: quietClient(), metricsPort: 0, healthPort: 0, leaderElection: election });
  let leaderWorkAborted = false;
  manager.add({
    start: async (s) => {
      await whenAborted(s);
      leaderWorkAborted = true;
    },
  });
  const running = manager.start(new AbortController().signal);
  await tick();
  election.win();
  await tick();
  election.lose();
  await assert.rejects(running, LeadershipLostError);
  assert.equal(leaderWorkAborted, true);
});

test('a failing runnable stops the manager with its error', async () => {
  const manager = new Manager({ client: quietClient(), metricsPort: 0, healthPort: 0 });
  let otherStopped = false;
  manager.add({
    start: async (s) => {
      await whenAborted(s);
      otherStopped = true;
    },
  });
  manager.add({
    start: async () => {
      throw new Error('boom');
    },
  });
  await assert.rejects(manager.start(new AbortController().signal), /boom/);
  assert.equal(otherStopped, true);
});

test('two managers in one process share no metrics registry and no cache', () => {
  const a = new Manager({ client: quietClient(), metricsPort: 0, healthPort: 0 });
  const b = new Manager({ client: quietClient(), metricsPort: 0, healthPort: 0 });
  assert.notEqual(a.registry, b.registry);
  assert.notEqual(a.informers, b.informers);
  a.controller('same-name')
    .for({ apiVersion: 'v1', kind: 'ConfigMap' })
    .complete(async () => {});
  // The same controller name on the other manager does not collide on metrics.
  b.controller('same-name')
    .for({ apiVersion: 'v1', kind: 'ConfigMap' })
    .complete(async () => {});
  assert.equal(a.informers.list().length, 1);
  assert.equal(b.informers.list().length, 1);
  assert.notEqual(a.informers.list()[0], b.informers.list()[0]);
});

test('invalid manager options are rejected with the option named', () => {
  assert.throws(() => new Manager({ client: quietClient(), metricsPort: -1 }), /metricsPort/);
  assert.throws(() => new Manager({ client: quietClient(), gracefulShutdownMs: Number.NaN }), /gracefulShutdownMs/);
  assert.throws(() => new Manager({ client: quietClient(), ownWritesWaitMs: -1 }), /ownWritesWaitMs/);
  assert.throws(
    () => new Manager({ client: quietClient(), heapCompaction: { quietPeriodMs: 5 } }),
    /heapCompaction\.quietPeriodMs/,
  );
});

test('idle heap compaction: on by default with the real clock on V8 12+, off with a fake clock, `heapCompaction: false` or V8 11', () => {
  const compacts = (manager: Manager) => manager.registry.getSingleMetric('heap_compactions_total') !== undefined;
  const supported = MEMORY_REDUCING_GC_SUPPORTED;
  assert.equal(compacts(new Manager({ client: quietClient() })), supported);
  assert.equal(compacts(new Manager({ client: quietClient(), heapCompaction: false })), false);
  assert.equal(compacts(new Manager({ client: quietClient(), clock: new FakeClock() })), false);
  assert.equal(compacts(new Manager({ client: quietClient(), clock: new FakeClock(), heapCompaction: {} })), supported);
});
