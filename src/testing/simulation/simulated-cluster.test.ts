import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../client/api-error.js';
import type { Client } from '../../client/contracts.js';
import type { WatchEvent } from '../../client/watch-decoder.js';
import { FakeClock, flushMicrotasks } from '../../core/fake-clock.js';
import type { KubeObject } from '../../core/object-key.js';
import { seededRandom } from '../../core/seeded-random.js';
import { FakeClient } from '../fake-client/fake-client.js';
import type { Fault } from './fault.js';
import {
  ProcessDeadError,
  SimulatedCluster,
  SimulatedTimeoutError,
  STALE_RESTART_CATCH_UP_MS,
} from './simulated-cluster.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

function cm(name: string, value = '0'): KubeObject & { data: { v: string } } {
  return { ...CM, metadata: { name, namespace: 'default' }, data: { v: value } };
}

function bed(faults: Fault[] = []) {
  const clock = new FakeClock(0);
  const store = new FakeClient({ clock, objects: [cm('a'), cm('b')] });
  const died: { incarnation: number; fault: Fault }[] = [];
  const leaderChanges: number[] = [];
  const trace: string[] = [];
  const cluster = new SimulatedCluster({
    store,
    clock,
    faults,
    random: seededRandom(1),
    trace: (l) => void trace.push(l),
    hooks: {
      died: (incarnation, fault) => void died.push({ incarnation, fault }),
      leaderChange: (incarnation) => void leaderChanges.push(incarnation),
    },
  });
  /** Runs `fn` while stepping fake time (every call takes 1–3 ms). */
  const settle = async <T>(p: Promise<T>): Promise<T> => {
    let done = false;
    void p.then(
      () => (done = true),
      () => (done = true),
    );
    for (let i = 0; i < 50 && !done; i++) await clock.advance(1);
    return p;
  };
  return { clock, store, cluster, died, leaderChanges, trace, settle };
}

/** Reads `n` events from a watch (stepping time while waiting). */
async function take(
  client: Client,
  clock: FakeClock,
  n: number,
  opts: { resourceVersion: string },
): Promise<{ events: WatchEvent<KubeObject>[]; error?: unknown; it: AsyncIterator<WatchEvent<KubeObject>> }> {
  const it = client.watch<KubeObject>(CM, { namespace: 'default', ...opts })[Symbol.asyncIterator]();
  const events: WatchEvent<KubeObject>[] = [];
  let error: unknown;
  const reading = (async () => {
    try {
      while (events.length < n) {
        const r = await it.next();
        if (r.done) return;
        events.push(r.value);
      }
    } catch (err) {
      error = err;
    }
  })();
  for (let i = 0; i < 40 && events.length < n && error === undefined; i++) await clock.advance(100);
  void reading;
  return { events, error, it };
}

describe('the fault layer', () => {
  test('every call is recorded with its index, process and outcome, and takes 1–3 ms of fake time', async () => {
    const { cluster, clock, settle } = bed();
    const client = cluster.clientFor(0);
    const t0 = clock.monotonicNow();
    const got = await settle(client.get(CM, 'a', { namespace: 'default' }));
    assert.equal((got as { data: { v: string } }).data.v, '0');
    const elapsed = clock.monotonicNow() - t0;
    assert.ok(elapsed >= 1 && elapsed <= 3, `took ${elapsed} ms of fake time`);
    await settle(client.patch(CM, 'a', { data: { v: '1' } }, { type: 'merge', namespace: 'default' }));
    assert.deepEqual(
      cluster.calls.map((c) => [c.at, c.incarnation, c.verb, c.name, c.outcome]),
      [
        [0, 0, 'get', 'a', 'ok'],
        [1, 0, 'patch', 'a', 'ok'],
      ],
    );
    assert.equal(cluster.writes.length, 1);
    const w = cluster.writes[0]!;
    assert.equal(w.observedResourceVersion, w.replacedResourceVersion, 'it wrote the revision it had read');
    assert.notEqual(w.resultResourceVersion, w.replacedResourceVersion);
  });

  test('a crash fires before its call: the call and every later one of that process fail unrecorded; the driver is told', async () => {
    const { cluster, died, settle, store } = bed([{ kind: 'crash', at: 1, restartAfterMs: 100 }]);
    const client = cluster.clientFor(0);
    await settle(client.get(CM, 'a', { namespace: 'default' }));
    await assert.rejects(
      client.patch(CM, 'a', { data: { v: 'x' } }, { type: 'merge', namespace: 'default' }),
      ProcessDeadError,
    );
    assert.equal(store.peek<{ data: { v: string } }>(CM, 'a', 'default')?.data.v, '0', 'the write never happened');
    await assert.rejects(client.get(CM, 'b', { namespace: 'default' }), ProcessDeadError);
    assert.deepEqual(
      cluster.calls.map((c) => c.outcome),
      ['ok', 'crashed'],
      'a dead process makes no calls',
    );
    assert.deepEqual(died, [{ incarnation: 0, fault: { kind: 'crash', at: 1, restartAfterMs: 100 } }]);
    // A new process counts on from there.
    await settle(cluster.clientFor(1).get(CM, 'b', { namespace: 'default' }));
    assert.deepEqual(cluster.calls.at(-1)?.incarnation, 1);
  });

  test('errors are the server answers; a committed timeout applied the write, an uncommitted one did not', async () => {
    const { cluster, settle, store } = bed([
      { kind: 'error', at: 0, status: 409 },
      { kind: 'error', at: 1, status: 429 },
      { kind: 'timeout', at: 2, committed: true },
      { kind: 'timeout', at: 3, committed: false },
    ]);
    const client = cluster.clientFor(0);
    const patch = (v: string) => client.patch(CM, 'a', { data: { v } }, { type: 'merge', namespace: 'default' });
    await assert.rejects(settle(patch('1')), (e: unknown) => e instanceof ApiError && e.status === 409);
    await assert.rejects(settle(patch('2')), (e: unknown) => e instanceof ApiError && e.status === 429);
    await assert.rejects(settle(patch('3')), SimulatedTimeoutError);
    assert.equal(store.peek<{ data: { v: string } }>(CM, 'a', 'default')?.data.v, '3', 'committed');
    await assert.rejects(settle(patch('4')), SimulatedTimeoutError);
    assert.equal(store.peek<{ data: { v: string } }>(CM, 'a', 'default')?.data.v, '3', 'not committed');
    assert.deepEqual(
      cluster.calls.map((c) => c.outcome),
      ['409', '429', 'timeout', 'timeout'],
    );
    assert.equal(cluster.writes.length, 1, 'only the committed write is a write');
    await settle(patch('5'));
    assert.equal(store.peek<{ data: { v: string } }>(CM, 'a', 'default')?.data.v, '5', 'faults fire once');
  });

  test('stopFaults: no fault fires afterwards', async () => {
    const { cluster, settle } = bed([{ kind: 'error', at: 1, status: 500 }]);
    const client = cluster.clientFor(0);
    await settle(client.get(CM, 'a', { namespace: 'default' }));
    cluster.stopFaults();
    await settle(client.get(CM, 'a', { namespace: 'default' }));
    assert.deepEqual(
      cluster.calls.map((c) => c.outcome),
      ['ok', 'ok'],
    );
  });

  test('coalesce: events of an object inside the window arrive as its last one, at the window end', async () => {
    const { cluster, clock, store, settle } = bed([{ kind: 'coalesce', at: 1, forMs: 500 }]);
    const client = cluster.clientFor(0);
    const rv = store.resourceVersion;
    const watching = take(client, clock, 2, { resourceVersion: rv });
    await clock.advance(10); // the watch is open (call 0)
    await settle(client.get(CM, 'b', { namespace: 'default' })); // call 1 opens the window
    for (const v of ['1', '2', '3'])
      await store.patch(CM, 'a', { data: { v } }, { type: 'merge', namespace: 'default' });
    await store.patch(CM, 'b', { data: { v: 'b1' } }, { type: 'merge', namespace: 'default' });
    const { events } = await watching;
    assert.deepEqual(
      events.map((e) => [e.type, e.object.metadata?.name, (e.object as { data?: { v: string } }).data?.v]),
      [
        ['MODIFIED', 'a', '3'],
        ['MODIFIED', 'b', 'b1'],
      ],
    );
    assert.ok(clock.monotonicNow() >= 500, 'held until the window ended');
  });

  test('drop-events: changes inside the window never arrive; then the watch expires (410) and a relist is needed', async () => {
    const { cluster, clock, store, settle } = bed([{ kind: 'drop-events', at: 1, forMs: 300 }]);
    const client = cluster.clientFor(0);
    const watching = take(client, clock, 1, { resourceVersion: store.resourceVersion });
    await clock.advance(10);
    await settle(client.get(CM, 'b', { namespace: 'default' }));
    await store.create(cm('c'));
    await store.delete(CM, 'c', { namespace: 'default' });
    const { events, error } = await watching;
    assert.deepEqual(events, [], 'created and deleted between two looks: never seen');
    assert.ok(error instanceof ApiError && error.status === 410, `410 after the window, got ${String(error)}`);
  });

  test('watch-expiry: every open watch of the operator fails with 410 at once', async () => {
    const { cluster, clock, store, settle } = bed([{ kind: 'watch-expiry', at: 1 }]);
    const client = cluster.clientFor(0);
    const watching = take(client, clock, 1, { resourceVersion: store.resourceVersion });
    await clock.advance(10);
    await settle(client.get(CM, 'b', { namespace: 'default' }));
    const { error } = await watching;
    assert.ok(error instanceof ApiError && error.status === 410);
  });

  test('a stale restart: the first list is served revisions behind, and watches lag until the process is at work', async () => {
    const { cluster, clock, store, settle } = bed();
    for (const v of ['1', '2', '3'])
      await store.patch(CM, 'a', { data: { v } }, { type: 'merge', namespace: 'default' });
    const client = cluster.clientFor(0, 2);
    const first = await settle(client.listPage<{ data: { v: string } } & KubeObject>(CM, { namespace: 'default' }));
    assert.equal(first.items.find((o) => o.metadata?.name === 'a')?.data.v, '1', 'two revisions behind');
    const second = await settle(client.listPage<{ data: { v: string } } & KubeObject>(CM, { namespace: 'default' }));
    assert.equal(second.items.find((o) => o.metadata?.name === 'a')?.data.v, '3', 'later lists are current');
    const events: string[] = [];
    const it = client.watch<KubeObject>(CM, { namespace: 'default', resourceVersion: first.resourceVersion });
    void (async () => {
      for await (const e of it) events.push((e.object as { data?: { v: string } }).data?.v ?? '');
    })().catch(() => {});
    await clock.advance(2_000);
    assert.deepEqual(events, [], 'held while the process is not at work (a leader election still waiting)');
    cluster.atWork(0);
    await clock.advance(STALE_RESTART_CATCH_UP_MS - 1);
    assert.deepEqual(events, [], 'still behind');
    await clock.advance(1);
    assert.deepEqual(events, ['2', '3'], 'caught up from the stale list on');
  });

  test('a leader change tells the driver; a replaced leader cannot write its Lease', async () => {
    const { cluster, leaderChanges, settle } = bed([{ kind: 'leader-change', at: 0, overlapMs: 1_000 }]);
    const client = cluster.clientFor(0);
    await settle(client.get(CM, 'a', { namespace: 'default' }));
    assert.deepEqual(leaderChanges, [0]);
    cluster.failLeaseWrites(0);
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l', namespace: 'default' },
      spec: {},
    };
    await assert.rejects(settle(client.create(lease)), (e: unknown) => e instanceof ApiError && e.status === 500);
    assert.equal(cluster.usesLeases(0), true);
    assert.equal(cluster.isReplacedLeader(0), true);
    await flushMicrotasks();
  });
});
