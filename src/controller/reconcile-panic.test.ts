/**
 * Which counter a thrown value moves: the rule written on `isReconcilePanic` in controller.ts.
 * A panic is a programming fault in user code; the library's own errors (validation, conflicts,
 * timeouts) and the user's ordinary errors are reconcile errors only. Issue 13 item 4: library code
 * threw bare RangeError/TypeError, so `requeueAfter(-1)` or `keyOf({})` counted as user panics.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ApiError } from '../client/api-error.js';
import { AbortedError, InvalidOptionError } from '../core/errors.js';
import { FakeClock } from '../core/fake-clock.js';
import { keyOf } from '../core/object-key.js';
import { Controller } from './controller.js';
import { requeueAfter } from './result.js';
import { TerminalError } from './terminal-error.js';

interface Counts {
  readonly errors: number;
  readonly panics: number;
  readonly terminal: number;
}

async function counter(registry: Registry, name: string): Promise<number> {
  const metric = await registry.getSingleMetric(name)!.get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}

/** Runs one reconcile that throws whatever `fn` throws, and reads the three counters after it. */
async function countsAfter(fn: () => unknown): Promise<Counts> {
  const registry = new Registry();
  const clock = new FakeClock(0);
  let calls = 0;
  const controller = new Controller({
    name: 'panic-rule',
    clock,
    registry,
    reconciler: {
      reconcile: async () => {
        calls++;
        await Promise.resolve();
        fn();
      },
    },
  });
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  controller.enqueue({ name: 'k' });
  // Less than the first backoff (5 ms): exactly one reconcile runs.
  await clock.advance(1);
  assert.equal(calls, 1, 'the reconcile ran once');
  const counts = {
    errors: await counter(registry, 'controller_runtime_reconcile_errors_total'),
    panics: await counter(registry, 'controller_runtime_reconcile_panics_total'),
    terminal: await counter(registry, 'controller_runtime_terminal_reconcile_errors_total'),
  };
  stop.abort();
  await running;
  return counts;
}

const RECONCILE_ERROR: Counts = { errors: 1, panics: 0, terminal: 0 };
const PANIC: Counts = { errors: 1, panics: 1, terminal: 0 };

const throwing = (value: unknown) => (): never => {
  throw value;
};

// --- the library's own errors: reconcile errors, never panics --------------------------------------

test('a library validation error from requeueAfter(-1) is a reconcile error, not a panic (it was a RangeError)', async () => {
  assert.deepEqual(await countsAfter(() => requeueAfter(-1)), RECONCILE_ERROR);
});

test('a library error from keyOf on an object without a name is a reconcile error, not a panic (it was a TypeError)', async () => {
  assert.deepEqual(
    await countsAfter(() => keyOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} })),
    RECONCILE_ERROR,
  );
});

test('an ApiError conflict bubbling out of a client call is a reconcile error, not a panic', async () => {
  assert.deepEqual(
    await countsAfter(
      throwing(new ApiError({ status: 409, reason: 'Conflict', message: 'the object has been modified' })),
    ),
    RECONCILE_ERROR,
  );
});

test('an InvalidOptionError and an AbortedError are reconcile errors, not panics', async () => {
  assert.deepEqual(await countsAfter(throwing(new InvalidOptionError('x', 'bad'))), RECONCILE_ERROR);
  assert.deepEqual(await countsAfter(throwing(new AbortedError())), RECONCILE_ERROR);
});

// --- the user's ordinary errors: reconcile errors -----------------------------------------------

test("a user's plain Error and an Error subclass are reconcile errors, not panics", async () => {
  class BackupNotReady extends Error {}
  assert.deepEqual(await countsAfter(throwing(new Error('backup not ready'))), RECONCILE_ERROR);
  assert.deepEqual(await countsAfter(throwing(new BackupNotReady('later'))), RECONCILE_ERROR);
});

test('a DOMException abort (signal.throwIfAborted with the default reason) is a reconcile error', async () => {
  const abort = new AbortController();
  abort.abort();
  assert.deepEqual(await countsAfter(() => abort.signal.throwIfAborted()), RECONCILE_ERROR);
});

test("undici's TypeError('fetch failed') is a network failure, a reconcile error, not a panic", async () => {
  // The shape Node's fetch rejects with when the connection fails (cause: the socket error).
  const fetchFailed = new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });
  assert.deepEqual(await countsAfter(throwing(fetchFailed)), RECONCILE_ERROR);
});

test('a TerminalError counts as a terminal error (and an error), not a panic', async () => {
  assert.deepEqual(await countsAfter(throwing(new TerminalError('spec cannot be satisfied'))), {
    errors: 1,
    panics: 0,
    terminal: 1,
  });
});

// --- programming faults in user code: panics ---------------------------------------------------

test('a real TypeError (calling undefined) is a panic', async () => {
  assert.deepEqual(await countsAfter(() => (undefined as unknown as { x: () => void }).x()), PANIC);
});

test('a real RangeError (an invalid array length) is a panic', async () => {
  assert.deepEqual(await countsAfter(() => new Array(-1)), PANIC);
});

test('a real SyntaxError (JSON.parse of malformed text) is a panic', async () => {
  assert.deepEqual(await countsAfter(() => JSON.parse('{')), PANIC);
});

test('a ReferenceError is a panic', async () => {
  assert.deepEqual(await countsAfter(throwing(new ReferenceError('replicas is not defined'))), PANIC);
});

test('a TypeError that only mentions fetch is still a panic (the exception is exact)', async () => {
  assert.deepEqual(await countsAfter(throwing(new TypeError('fetch failed: url must be a string'))), PANIC);
});

test('thrown non-Error values (a string, null, undefined, a plain object) are panics', async () => {
  for (const value of ['a string', null, undefined, { message: 'looks like an error' }, 42]) {
    assert.deepEqual(await countsAfter(throwing(value)), PANIC, String(value));
  }
});
