import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { TerminalError, isTerminalError } from '../controller/terminal-error.js';
import { done, requeueAfter, type Result } from '../core/result.js';
import { FakeClock } from '../core/fake-clock.js';
import type { Logger } from '../core/logger.js';
import { runActions, type Action } from './actions.js';

/** What an action returns: the one Result, or nothing to go on. */
const CONTINUE = undefined;

interface Ctx {
  readonly ran: string[];
  readonly clock: FakeClock;
}

const step = (name: string, result: Result | undefined | Error, tookMs = 0): Action<Ctx> => ({
  name,
  async run(ctx) {
    ctx.ran.push(name);
    ctx.clock.step(tookMs);
    if (result instanceof Error) throw result;
    return result;
  },
});

function recordingLogger(lines: { level: string; obj: Record<string, unknown>; msg?: string }[]): Logger {
  const log: Logger = {
    debug: (obj, msg) => void lines.push({ level: 'debug', obj, msg }),
    info: (obj, msg) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void lines.push({ level: 'error', obj, msg }),
    child: () => log,
  };
  return log;
}

test('all actions continuing runs the whole chain in order and ends done', async () => {
  const clock = new FakeClock();
  const ctx = { ran: [], clock };
  const report = await runActions([step('a', CONTINUE), step('b', CONTINUE)], ctx, { controller: 'c', clock });
  assert.deepEqual(ctx.ran, ['a', 'b']);
  assert.deepEqual(report.result, { kind: 'done' });
  assert.equal(report.stoppedBy, undefined);
  assert.deepEqual(
    report.actions.map((r) => [r.action, r.result]),
    [
      ['a', 'continue'],
      ['b', 'continue'],
    ],
  );
});

test('a requeue stops the chain and becomes the reconcile result', async () => {
  const clock = new FakeClock();
  const ctx = { ran: [], clock };
  const report = await runActions(
    [step('a', CONTINUE), step('wait', requeueAfter(30_000)), step('never', CONTINUE)],
    ctx,
    { controller: 'c', clock },
  );
  assert.deepEqual(ctx.ran, ['a', 'wait']);
  const result: Result = report.result;
  assert.deepEqual(result, { kind: 'requeueAfter', requeueAfterMs: 30_000 });
  assert.equal(report.stoppedBy, 'wait');
});

test('done stops the chain successfully', async () => {
  const clock = new FakeClock();
  const ctx = { ran: [], clock };
  const report = await runActions([step('check', done()), step('never', CONTINUE)], ctx, { controller: 'c', clock });
  assert.deepEqual(ctx.ran, ['check']);
  assert.deepEqual(report.result, { kind: 'done' });
  assert.equal(report.stoppedBy, 'check');
});

test('an error stops the chain, is logged, and is rethrown unchanged so TerminalError stays terminal', async () => {
  const clock = new FakeClock();
  const ctx = { ran: [], clock };
  const lines: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const boom = new TerminalError('spec cannot be satisfied');
  await assert.rejects(
    runActions([step('a', CONTINUE), step('bad', boom), step('never', CONTINUE)], ctx, {
      controller: 'c',
      clock,
      logger: recordingLogger(lines),
    }),
    (err) => err === boom && isTerminalError(err),
  );
  assert.deepEqual(ctx.ran, ['a', 'bad']);
  const errLine = lines.find((l) => l.level === 'error');
  assert.equal(errLine?.obj.action, 'bad');
  assert.equal(errLine?.obj.controller, 'c');
});

test('each action is measured in operator_action_duration_seconds{controller,action,result}', async () => {
  const clock = new FakeClock();
  const registry = new Registry();
  const ctx = { ran: [], clock };
  await runActions([step('fast', CONTINUE, 2), step('slow', requeueAfter(1), 1_500)], ctx, {
    controller: 'db',
    clock,
    registry,
  });
  await assert.rejects(runActions([step('broken', new Error('x'), 20)], ctx, { controller: 'db', clock, registry }));
  const metric = await registry.getSingleMetricAsString('operator_action_duration_seconds');
  assert.match(
    metric,
    /operator_action_duration_seconds_sum\{controller="db",action="fast",result="continue"\} 0\.002/,
  );
  assert.match(metric, /operator_action_duration_seconds_sum\{controller="db",action="slow",result="requeue"\} 1\.5/);
  assert.match(metric, /operator_action_duration_seconds_count\{controller="db",action="broken",result="error"\} 1/);
  const report = await runActions([step('fast', CONTINUE, 7)], ctx, { controller: 'db', clock, registry });
  assert.equal(report.actions[0]!.durationMs, 7);
});

test('no further action runs once the reconcile signal is aborted', async () => {
  const clock = new FakeClock();
  const ctx = { ran: [], clock };
  const ac = new AbortController();
  const abortIt: Action<Ctx> = { name: 'abort', run: async () => (ac.abort(), CONTINUE) };
  await assert.rejects(
    runActions([abortIt, step('never', CONTINUE)], ctx, { controller: 'c', clock, signal: ac.signal }),
    { code: 'ERR_ABORTED' },
  );
  assert.deepEqual(ctx.ran, []);
});

test('requeueAfter refuses a negative or infinite delay', () => {
  assert.throws(() => requeueAfter(-1), { code: 'ERR_INVALID_ARGUMENT' });
  assert.throws(() => requeueAfter(Infinity), { code: 'ERR_INVALID_ARGUMENT' });
});
