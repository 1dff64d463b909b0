import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock } from '../core/fake-clock.js';
import { InvalidOptionError, OperatorRuntimeError } from '../core/errors.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { HeapCompactor, type HeapCompactionOptions } from './heap-compactor.js';
import { MEMORY_REDUCING_GC_SUPPORTED, collectGarbageAndShrinkHeap } from '../core/memory-reducing-gc.js';

const MiB = 1024 * 1024;
const QUIET_MS = 1_000;

/** A compactor on a fake clock, a fake heap and a fake event loop; `heap` is the committed MiB. */
function bed(options: HeapCompactionOptions = {}) {
  const clock = new FakeClock(0);
  const registry = new Registry();
  const logger = recordingLogger();
  const state = { ready: false, busy: 0, heap: 10, collections: 0, heapAfterCollect: 20 };
  const compactor = new HeapCompactor(
    { quietPeriodMs: QUIET_MS, minIntervalMs: 5_000, minGrowthBytes: 8 * MiB, ...options },
    {
      clock,
      registry,
      logger,
      ready: () => state.ready,
      utilization: () => state.busy,
      committedHeapBytes: () => state.heap * MiB,
      collect: () => {
        state.collections += 1;
        state.heap = state.heapAfterCollect;
      },
    },
  );
  const stop = new AbortController();
  const running = compactor.start(stop.signal);
  return { clock, registry, logger, state, stop, running };
}

test('compacts once the caches are synced, the loop was quiet for a period and the heap grew past the bound', async () => {
  const { clock, state, stop, running, registry, logger } = bed();
  state.heap = 50; // the initial lists
  clock.step(QUIET_MS);
  assert.equal(state.collections, 0, 'not before the caches are synced');
  state.ready = true;
  state.busy = 0.4; // the reconcile wave
  clock.step(QUIET_MS);
  assert.equal(state.collections, 0, 'not while the event loop is busy');
  state.busy = 0.01;
  clock.step(QUIET_MS);
  assert.equal(state.collections, 1);
  const line = logger.entries.find((e) => e.msg === 'idle: heap compacted');
  assert.deepEqual({ ...line?.obj, ms: 0 }, { committedBeforeMiB: 50, committedAfterMiB: 20, ms: 0 });
  assert.match(await registry.metrics(), /^heap_compactions_total 1$/m);
  assert.match(await registry.metrics(), /^heap_compaction_duration_seconds_count 1$/m);
  stop.abort();
  await running;
});

test('the first compaction needs no growth: the initial lists leave their pages behind', async () => {
  const { clock, state, stop, running } = bed();
  state.ready = true;
  state.heap = 12;
  clock.step(QUIET_MS);
  assert.equal(state.collections, 1);
  stop.abort();
  await running;
});

test('does not compact again until the heap grew by minGrowthBytes over the compacted size, and not within minIntervalMs', async () => {
  const { clock, state, stop, running } = bed();
  state.ready = true;
  state.heap = 40;
  clock.step(QUIET_MS);
  assert.equal(state.collections, 1);
  state.heap = 27; // grew 7 MiB over the 20 left after the compaction
  clock.step(10 * QUIET_MS);
  assert.equal(state.collections, 1, 'growth below the bound');
  state.heap = 29;
  clock.step(QUIET_MS);
  assert.equal(state.collections, 2, 'growth of 9 MiB, 11 s after the last');
  state.heap = 60;
  clock.step(QUIET_MS);
  assert.equal(state.collections, 2, 'within minIntervalMs of the last');
  clock.step(4 * QUIET_MS);
  assert.equal(state.collections, 3);
  stop.abort();
  await running;
});

test('a collection that throws is logged once and not tried again; the process goes on', async () => {
  const clock = new FakeClock(0);
  const logger = recordingLogger();
  let attempts = 0;
  const stop = new AbortController();
  const running = new HeapCompactor(
    { quietPeriodMs: QUIET_MS, minIntervalMs: 0, minGrowthBytes: 0 },
    {
      clock,
      logger,
      registry: new Registry(),
      ready: () => true,
      utilization: () => 0,
      committedHeapBytes: () => 50 * MiB,
      collect: () => {
        attempts += 1;
        throw new Error('no gc here');
      },
    },
  ).start(stop.signal);
  clock.step(QUIET_MS);
  clock.step(5 * QUIET_MS);
  assert.equal(attempts, 1);
  assert.deepEqual(
    logger.entries.map((e) => [e.level, e.msg]),
    [['warn', 'idle heap compaction failed; not trying again']],
  );
  stop.abort();
  await running;
});

test('stops checking once its signal aborts', async () => {
  const { clock, state, stop, running } = bed();
  state.ready = true;
  state.heap = 100;
  stop.abort();
  await running;
  clock.step(10 * QUIET_MS);
  assert.equal(state.collections, 0);
  assert.equal(clock.nextTimerInMs(), undefined, 'no timer left behind');
});

test('bad options name the option', () => {
  const deps = { clock: new FakeClock(0), registry: new Registry(), logger: recordingLogger(), ready: () => true };
  assert.throws(() => new HeapCompactor({ quietPeriodMs: 10 }, deps), InvalidOptionError);
  assert.throws(() => new HeapCompactor({ idleUtilization: 2 }, deps), /heapCompaction\.idleUtilization/);
  assert.throws(() => new HeapCompactor({ minGrowthBytes: -1 }, deps), /heapCompaction\.minGrowthBytes/);
});

test('the real collection gives the old generation back at once on V8 12+, and is refused with a code on V8 11', () => {
  if (!MEMORY_REDUCING_GC_SUPPORTED) {
    // Node 20: nothing to ask for, and the manager never calls it there.
    assert.throws(
      collectGarbageAndShrinkHeap,
      (e: unknown) => e instanceof OperatorRuntimeError && e.code === 'ERR_UNSUPPORTED_RUNTIME',
    );
    return;
  }
  // Grow the old generation with objects that survive young collections, then drop them.
  const grown = ((): number => {
    const held = Array.from({ length: 300_000 }, (_, i) => ({ name: `object-${i}`, n: i }));
    return held.length > 0 ? process.memoryUsage().heapTotal : 0;
  })();
  collectGarbageAndShrinkHeap();
  const { heapTotal, heapUsed } = process.memoryUsage();
  assert.ok(heapUsed < grown / 2, `heap used ${heapUsed} after collecting, grown to ${grown}`);
  assert.ok(heapTotal < grown / 2, `committed ${heapTotal} after the collection, ${grown} before`);
});
