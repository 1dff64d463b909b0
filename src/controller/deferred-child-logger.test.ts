import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { createLogger } from '../logging/create-logger.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { Controller } from './controller.js';
import { DeferredChildLogger } from './deferred-child-logger.js';

/** A pino logger (as createLogger makes) writing to `lines`, counting the children made from it. */
function countingPino(level: 'info' | 'debug') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level,
    base: {},
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const counted = { children: 0 };
  // Children inherit `child` from the root (pino makes them with Object.create), so `this` is the one asked.
  const child = logger.child;
  logger.child = function (this: typeof logger, ...args: Parameters<typeof logger.child>) {
    counted.children++;
    return child.apply(this, args);
  } as typeof logger.child;
  return { logger, lines, counted };
}

test('a line at a level the parent does not write builds no child and writes nothing', () => {
  const { logger, lines, counted } = countingPino('info');
  const log = new DeferredChildLogger(logger, { name: 'a', reconcileID: 'r1' });
  log.debug({ step: 1 }, 'quiet');
  assert.equal(counted.children, 0);
  assert.deepEqual(lines, []);
});

test('the first written line builds the child once; every line carries the bindings as a child would', () => {
  const { logger, lines, counted } = countingPino('debug');
  const log = new DeferredChildLogger(logger, { name: 'a', reconcileID: 'r1' });
  log.debug({ step: 1 }, 'one');
  log.info({ step: 2 }, 'two');
  log.child({ extra: true }).warn({}, 'three');
  assert.equal(counted.children, 2, 'one reconcile child, plus the one asked for');
  assert.deepEqual(
    lines.map(({ name, reconcileID, step, extra, msg, level }) => ({ name, reconcileID, step, extra, msg, level })),
    [
      { name: 'a', reconcileID: 'r1', step: 1, extra: undefined, msg: 'one', level: 'debug' },
      { name: 'a', reconcileID: 'r1', step: 2, extra: undefined, msg: 'two', level: 'info' },
      { name: 'a', reconcileID: 'r1', step: undefined, extra: true, msg: 'three', level: 'warn' },
    ],
  );
});

test('a logger without a level check (a recording logger) records every line with the bindings', () => {
  const parent = recordingLogger({ controller: 'c' });
  const log = new DeferredChildLogger(parent, { name: 'a', reconcileID: 'r1' });
  log.debug({ step: 1 }, 'one');
  log.error({});
  assert.deepEqual(
    parent.entries.map((e) => ({ level: e.level, bindings: e.bindings, msg: e.msg })),
    [
      { level: 'debug', bindings: { controller: 'c', name: 'a', reconcileID: 'r1' }, msg: 'one' },
      { level: 'error', bindings: { controller: 'c', name: 'a', reconcileID: 'r1' }, msg: undefined },
    ],
  );
});

test('a reconcile that writes no line at the enabled level builds no per-reconcile child logger (~10 µs each)', async () => {
  const { logger, counted } = countingPino('info');
  const clock = new FakeClock(0);
  let reconciles = 0;
  const controller = new Controller({
    name: 'quiet',
    clock,
    logger,
    maxConcurrentReconciles: 2,
    reconciler: {
      reconcile: async (_req, { log }) => {
        reconciles++;
        log.debug({}, 'not written at info');
      },
    },
  });
  const childrenBefore = counted.children;
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  for (let i = 0; i < 5; i++) controller.enqueue({ namespace: 'default', name: `o-${i}` });
  await clock.advance(1);
  stop.abort();
  await running;
  assert.equal(reconciles, 5);
  assert.equal(counted.children, childrenBefore);
});
