import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import type { Logger } from '../core/logger.js';
import { objectKey } from '../core/object-key.js';
import { Controller, WORKER_TIME_SLICE_MS } from './controller.js';
import type { ReconcileContext, ReconcileRequest } from './reconciler.js';
import { done, requeueAfter, type Result } from './result.js';
import { TerminalError } from './terminal-error.js';
import { seededRandom } from '../core/seeded-random.js';

type ReconcileFn = (req: ReconcileRequest, ctx: ReconcileContext) => Promise<Result | void>;

function controllerWith(
  fn: ReconcileFn,
  options: {
    workers?: number;
    clock?: FakeClock;
    registry?: Registry;
    reconcileTimeoutMs?: number;
    gracefulShutdownMs?: number;
    logger?: Logger;
    workerTimeSliceMs?: number;
  } = {},
) {
  const clock = options.clock ?? new FakeClock(0);
  const controller = new Controller({
    name: 'test',
    reconciler: { reconcile: fn },
    clock,
    maxConcurrentReconciles: options.workers ?? 1,
    ...(options.registry ? { registry: options.registry } : {}),
    ...(options.reconcileTimeoutMs !== undefined ? { reconcileTimeoutMs: options.reconcileTimeoutMs } : {}),
    ...(options.gracefulShutdownMs !== undefined ? { gracefulShutdownMs: options.gracefulShutdownMs } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.workerTimeSliceMs !== undefined ? { workerTimeSliceMs: options.workerTimeSliceMs } : {}),
  });
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  return { controller, clock, stop, running };
}

test('a key is never reconciled by two workers at once, under random events and many workers', async () => {
  const random = seededRandom(42);
  const clock = new FakeClock(0);
  const inFlight = new Set<string>();
  let overlaps = 0;
  let reconciles = 0;
  const { controller, stop, running } = controllerWith(
    async (req) => {
      const key = objectKey(req);
      if (inFlight.has(key)) overlaps++;
      inFlight.add(key);
      reconciles++;
      // Yield a random number of times so workers interleave.
      for (let i = Math.floor(random() * 5); i > 0; i--) await Promise.resolve();
      if (random() < 0.1) controller.enqueue(req); // an event arrives while in flight
      inFlight.delete(key);
      if (random() < 0.1) throw new Error('flaky');
    },
    { workers: 8, clock },
  );

  for (let round = 0; round < 200; round++) {
    for (let i = 0; i < 10; i++) controller.enqueue({ namespace: 'ns', name: `obj-${Math.floor(random() * 12)}` });
    await clock.advance(Math.floor(random() * 20));
  }
  await clock.advance(60_000);
  stop.abort();
  await running;
  assert.equal(overlaps, 0);
  assert.ok(reconciles > 200, `expected many reconciles, got ${reconciles}`);
});

test('an event for a key in flight makes it run again once, after the current reconcile', async () => {
  const clock = new FakeClock(0);
  let calls = 0;
  let release!: () => void;
  const { controller, stop, running } = controllerWith(
    async () => {
      calls++;
      if (calls === 1) await new Promise<void>((r) => (release = r));
    },
    { clock },
  );
  controller.enqueue({ namespace: 'a', name: 'x' });
  await flushMicrotasks();
  assert.equal(calls, 1);
  controller.enqueue({ namespace: 'a', name: 'x' });
  controller.enqueue({ namespace: 'a', name: 'x' });
  await flushMicrotasks();
  assert.equal(calls, 1, 'not run concurrently');
  release();
  await flushMicrotasks();
  assert.equal(calls, 2, 'run again exactly once');
  await clock.advance(1000);
  assert.equal(calls, 2);
  stop.abort();
  await running;
});

test('requeueAfter requests for one key coalesce and the earliest wins', async () => {
  const clock = new FakeClock(0);
  const times: number[] = [];
  const { controller, stop, running } = controllerWith(
    async () => {
      times.push(clock.now());
      if (times.length === 1) return requeueAfter(10_000);
      return done();
    },
    { clock },
  );
  controller.enqueue({ name: 'k' });
  await flushMicrotasks();
  controller.queue.addAfter('k', 3_000); // an earlier request for the same key
  await clock.advance(20_000);
  assert.deepEqual(times, [0, 3_000], 'one requeue, at the earliest requested time');
  stop.abort();
  await running;
});

test('a failing key backs off exponentially and success resets its backoff', async () => {
  const clock = new FakeClock(0);
  const times: number[] = [];
  let failuresLeft = 4;
  const { controller, stop, running } = controllerWith(
    async () => {
      times.push(clock.now());
      if (failuresLeft-- > 0) throw new Error('not yet');
    },
    { clock },
  );
  controller.enqueue({ name: 'k' });
  await clock.advance(1_000);
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  assert.deepEqual(gaps, [5, 10, 20, 40]);
  assert.equal(controller.queue.numRequeues('k'), 0, 'success forgets the backoff');

  failuresLeft = 1;
  times.length = 0;
  controller.enqueue({ name: 'k' });
  await clock.advance(1_000);
  assert.deepEqual(
    times.slice(1).map((t, i) => t - times[i]!),
    [5],
    'backoff starts over after a success',
  );
  stop.abort();
  await running;
});

test('a TerminalError is counted and not retried', async () => {
  const registry = new Registry();
  const clock = new FakeClock(0);
  let calls = 0;
  const { controller, stop, running } = controllerWith(
    async () => {
      calls++;
      throw new TerminalError('spec cannot be satisfied');
    },
    { clock, registry },
  );
  controller.enqueue({ name: 'k' });
  await clock.advance(60_000);
  assert.equal(calls, 1);
  const terminal = await registry.getSingleMetric('controller_runtime_terminal_reconcile_errors_total')!.get();
  assert.equal(terminal.values[0]!.value, 1);
  stop.abort();
  await running;
});

test('a reconciler that throws anything leaves the controller healthy and keeps processing', async () => {
  const registry = new Registry();
  const clock = new FakeClock(0);
  const seen: string[] = [];
  const { controller, stop, running } = controllerWith(
    async (req) => {
      seen.push(req.name);
      if (req.name === 'type-error') (undefined as unknown as { x: () => void }).x();
      if (req.name === 'string') throw 'a string';
      if (req.name === 'null') throw null;
    },
    { clock, registry },
  );
  for (const name of ['type-error', 'string', 'null', 'fine']) controller.enqueue({ name });
  await clock.advance(1);
  assert.deepEqual(seen.slice(0, 4), ['type-error', 'string', 'null', 'fine']);
  const panics = await registry.getSingleMetric('controller_runtime_reconcile_panics_total')!.get();
  assert.ok(panics.values[0]!.value >= 3);
  controller.enqueue({ name: 'after' });
  await clock.advance(1);
  assert.ok(seen.includes('after'));
  stop.abort();
  await running;
});

test('reconcileTimeoutMs aborts the reconcile signal', async () => {
  const clock = new FakeClock(0);
  let reason: unknown;
  const { controller, stop, running } = controllerWith(
    (_req, ctx) =>
      new Promise<void>((resolve) =>
        ctx.signal.addEventListener('abort', () => {
          reason = ctx.signal.reason;
          resolve();
        }),
      ),
    { clock, reconcileTimeoutMs: 5_000 },
  );
  controller.enqueue({ name: 'slow' });
  await clock.advance(4_999);
  assert.equal(reason, undefined);
  await clock.advance(1);
  assert.equal((reason as unknown as { code?: string }).code, 'ERR_RECONCILE_TIMEOUT');
  stop.abort();
  await running;
});

test('stopping waits for an in-flight reconcile to finish (graceful drain)', async () => {
  const clock = new FakeClock(0);
  let finished = false;
  let release!: () => void;
  const { controller, stop, running } = controllerWith(
    async (_req, ctx) => {
      await new Promise<void>((r) => (release = r));
      finished = !ctx.signal.aborted;
    },
    { clock, gracefulShutdownMs: 30_000 },
  );
  controller.enqueue({ name: 'k' });
  await flushMicrotasks();
  stop.abort();
  let stopped = false;
  void running.then(() => (stopped = true));
  await clock.advance(10_000);
  assert.equal(stopped, false, 'still draining');
  controller.enqueue({ name: 'new' }); // intake is closed
  release();
  await flushMicrotasks();
  await running;
  assert.equal(finished, true);
  assert.equal(stopped, true);
});

test('a reconcile that outlives the graceful shutdown has its signal aborted', async () => {
  const clock = new FakeClock(0);
  let abortedAt: number | undefined;
  const { controller, stop, running } = controllerWith(
    (_req, ctx) =>
      new Promise<void>((resolve) =>
        ctx.signal.addEventListener('abort', () => {
          abortedAt = clock.now();
          resolve();
        }),
      ),
    { clock, gracefulShutdownMs: 1_000 },
  );
  controller.enqueue({ name: 'k' });
  await flushMicrotasks();
  stop.abort();
  await clock.advance(1_000);
  await running;
  assert.equal(abortedAt, 1_000);
});

test('every reconcile log line carries controller, namespace, name and a unique reconcileID', async () => {
  const lines: Record<string, unknown>[] = [];
  const logger = (bindings: Record<string, unknown>): Logger => ({
    debug: (obj) => lines.push({ ...bindings, ...obj }),
    info: (obj) => lines.push({ ...bindings, ...obj }),
    warn: (obj) => lines.push({ ...bindings, ...obj }),
    error: (obj) => lines.push({ ...bindings, ...obj }),
    child: (more) => logger({ ...bindings, ...more }),
  });
  const clock = new FakeClock(0);
  const { controller, stop, running } = controllerWith(
    async (_req, ctx) => {
      ctx.log.info({ step: 'inside' });
    },
    { clock, logger: logger({}) },
  );
  controller.enqueue({ namespace: 'ns', name: 'a' });
  controller.enqueue({ namespace: 'ns', name: 'b' });
  await clock.advance(1);
  stop.abort();
  await running;
  const inside = lines.filter((l) => l.step === 'inside');
  assert.equal(inside.length, 2);
  for (const l of inside) {
    assert.equal(l.controller, 'test');
    assert.equal(l.namespace, 'ns');
    assert.match(String(l.reconcileID), /^[0-9a-f-]{36}$/);
  }
  assert.notEqual(inside[0]!.reconcileID, inside[1]!.reconcileID);
});

test('reconcile metrics count outcomes with controller-runtime names', async () => {
  const registry = new Registry();
  const clock = new FakeClock(0);
  let n = 0;
  const { controller, stop, running } = controllerWith(
    async () => {
      n++;
      if (n === 1) throw new Error('once');
      if (n === 2) return requeueAfter(100);
      return done();
    },
    { clock, registry },
  );
  controller.enqueue({ name: 'k' });
  await clock.advance(1_000);
  const total = await registry.getSingleMetric('controller_runtime_reconcile_total')!.get();
  const byResult = Object.fromEntries(total.values.map((v) => [v.labels.result, v.value]));
  assert.deepEqual(byResult, { success: 1, error: 1, requeue_after: 1 });
  const max = await registry.getSingleMetric('controller_runtime_max_concurrent_reconciles')!.get();
  assert.equal(max.values[0]!.value, 1);
  assert.ok(registry.getSingleMetric('workqueue_adds_total'), 'the queue reports on the same registry');
  stop.abort();
  await running;
});

test('losing leadership aborts in-flight reconciles at once instead of draining gracefully', async () => {
  const clock = new FakeClock(0);
  let abortedAt: number | undefined;
  const { controller, stop, running } = controllerWith(
    (_req, ctx) =>
      new Promise<void>((resolve) =>
        ctx.signal.addEventListener('abort', () => {
          abortedAt = clock.now();
          resolve();
        }),
      ),
    { clock, gracefulShutdownMs: 30_000 },
  );
  controller.enqueue({ name: 'k' });
  await clock.advance(5);
  stop.abort(Object.assign(new Error('lease lost'), { code: 'ERR_LEADERSHIP_LOST' }));
  await clock.advance(0);
  await running;
  assert.equal(abortedAt, 5, 'aborted when leadership ended, not after 30 s');
});

test('abortInFlight aborts the signal of every reconcile in flight with the reason, and no later one', async () => {
  const clock = new FakeClock(0);
  const signals = new Map<string, AbortSignal>();
  const { controller, stop, running } = controllerWith(
    (req, ctx) => {
      signals.set(req.name, ctx.signal);
      if (req.name === 'later') return Promise.resolve();
      return new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    },
    { clock, workers: 2 },
  );
  controller.enqueue({ name: 'a' });
  controller.enqueue({ name: 'b' });
  await clock.advance(1);
  const reason = new Error('fenced');
  controller.abortInFlight(reason);
  await clock.advance(1);
  controller.enqueue({ name: 'later' });
  await clock.advance(1);
  assert.equal(signals.get('a')?.reason, reason);
  assert.equal(signals.get('b')?.reason, reason);
  assert.equal(signals.get('later')?.aborted, false);
  stop.abort();
  await running;
});

test('maxConcurrentReconcilesPerGroup caps one fairness group below the workers; invalid values are refused by name', async () => {
  const byGroup = (key: string): string => key.slice(0, key.indexOf('-'));
  let hanging = 0;
  const finished: string[] = [];
  const controller = new Controller({
    name: 'capped',
    clock: new FakeClock(0),
    maxConcurrentReconciles: 3,
    maxConcurrentReconcilesPerGroup: 1,
    fairnessKey: byGroup,
    reconciler: {
      reconcile: async (req, ctx) => {
        if (req.name.startsWith('stuck-')) {
          hanging++;
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
          return;
        }
        finished.push(req.name);
      },
    },
  });
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  for (let i = 0; i < 5; i++) controller.enqueue({ namespace: '', name: `stuck-${i}` });
  for (let i = 0; i < 5; i++) controller.enqueue({ namespace: '', name: `ok-${i}` });
  await flushMicrotasks();
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
  assert.equal(hanging, 1);
  assert.equal(finished.length, 5);
  stop.abort();
  controller.abortInFlight(new Error('test over'));
  await running;

  const invalid = (options: object) =>
    new Controller({ name: 'x', reconciler: { reconcile: async () => {} }, maxConcurrentReconciles: 2, ...options });
  for (const perGroup of [0, 3, 1.5])
    assert.throws(
      () => invalid({ fairnessKey: byGroup, maxConcurrentReconcilesPerGroup: perGroup }),
      (e: unknown) => (e as { option?: string }).option === 'maxConcurrentReconcilesPerGroup',
    );
  assert.throws(
    () => invalid({ maxConcurrentReconcilesPerGroup: 1 }),
    (e: unknown) => (e as { option?: string }).option === 'maxConcurrentReconcilesPerGroup',
  );
});

/** How many of `keys` back-to-back ~1 ms reconciles ran before the event loop first turned. */
async function reconciledBeforeTheLoopTurned(keys: number, workerTimeSliceMs?: number): Promise<number> {
  let reconciled = 0;
  let reconciledWhenLoopTurned: number | undefined;
  const { controller, stop, running } = controllerWith(
    async () => {
      // A reconcile that reads only the cache: synchronous work, no I/O, ~1 ms of it.
      const until = performance.now() + 1;
      while (performance.now() < until);
      reconciled++;
    },
    workerTimeSliceMs === undefined ? {} : { workerTimeSliceMs },
  );
  for (let i = 0; i < keys; i++) controller.enqueue({ namespace: 'ns', name: `k${i}` });
  // Queued behind the whole backlog: without a time slice it runs only once the queue is empty.
  setImmediate(() => (reconciledWhenLoopTurned = reconciled));
  while (reconciled < keys) await new Promise((r) => setImmediate(r));
  stop.abort();
  await running;
  assert.ok(reconciledWhenLoopTurned !== undefined);
  return reconciledWhenLoopTurned;
}

test('regression (issue 35): a backlog of cache-only reconciles lets the event loop turn every WORKER_TIME_SLICE_MS (the real clock default), so sockets and timers are served while it drains', async () => {
  const first = await reconciledBeforeTheLoopTurned(200, WORKER_TIME_SLICE_MS);
  assert.ok(first < 100, `the event loop first turned after ${first} of 200 back-to-back reconciles`);
});

test('with an injected clock the worker takes no time slice (a simulation must not depend on the machine): the backlog drains in one chain; a negative slice is refused', async () => {
  // controllerWith runs on a FakeClock: the default slice is off.
  assert.equal(await reconciledBeforeTheLoopTurned(50), 50);
  assert.throws(
    () => new Controller({ name: 'bad', reconciler: { reconcile: async () => undefined }, workerTimeSliceMs: -1 }),
    (err: unknown) => err instanceof Error && /workerTimeSliceMs/.test(err.message),
  );
});
