/**
 * Reconcile spans with the real OpenTelemetry SDK (an in-memory exporter behind a simple
 * processor): outcomes, errors and requeues recorded, causes linked, child spans of the client
 * seam, and nothing from a controller with `tracing: false`. The Database operator's end-to-end
 * trace over OTLP/HTTP is examples/database-operator/tracing.int.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { Controller } from './controller.js';
import type { ReconcileContext, ReconcileRequest } from './reconciler.js';
import { requeueAfter, type Result } from './result.js';
import { TerminalError } from './terminal-error.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

before(() => provider.register());
after(() => provider.shutdown());

function run(
  reconcile: (req: ReconcileRequest, ctx: ReconcileContext) => Promise<Result | void>,
  options: { tracing?: boolean } = {},
) {
  exporter.reset();
  const clock = new FakeClock(0);
  const logger = recordingLogger();
  const controller = new Controller({ name: 'things', reconciler: { reconcile }, clock, logger, ...options });
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  return {
    controller,
    clock,
    logger,
    spans: () => exporter.getFinishedSpans(),
    reconcileSpans: () => exporter.getFinishedSpans().filter((s) => s.name === 'reconcile things'),
    async stop() {
      stop.abort();
      await running;
    },
  };
}

test('a reconcile span carries its trigger, outcome and reconcileID, and the log lines its trace id', async () => {
  const t = run(async (_req, ctx) => ctx.log.info({}, 'working'));
  const user = trace.getTracer('user').startSpan('webhook');
  context.with(trace.setSpan(context.active(), user), () => t.controller.enqueue({ namespace: 'ns', name: 'a' }));
  user.end();
  await flushMicrotasks();
  await t.stop();
  const [span] = t.reconcileSpans();
  assert.ok(span);
  assert.equal(span.parentSpanContext, undefined, 'a root span');
  assert.equal(span.attributes['operator_runtime.trigger.type'], 'enqueue');
  assert.equal(span.attributes['operator_runtime.reconcile.outcome'], 'success');
  assert.equal(span.attributes['k8s.namespace.name'], 'ns');
  assert.equal(span.attributes['operator_runtime.object.name'], 'a');
  // The enqueue became a cause span under the caller's span; the reconcile links to it.
  const cause = t.spans().find((s) => s.name === 'enqueue things');
  assert.ok(cause);
  assert.equal(cause.parentSpanContext?.spanId, user.spanContext().spanId);
  assert.deepEqual(
    span.links.map((l) => l.context.spanId),
    [cause.spanContext().spanId],
  );
  const line = t.logger.entries.find((e) => e.msg === 'working');
  assert.equal(line?.bindings.reconcileID, span.attributes['operator_runtime.reconcile_id']);
  assert.equal(line?.bindings.traceID, span.spanContext().traceId);
});

test('an error is recorded and its backoff requeue links the next reconcile to the failed one', async () => {
  let calls = 0;
  const t = run(async () => {
    if (++calls === 1) throw new Error('backup service down');
  });
  t.controller.enqueue({ namespace: 'ns', name: 'a' });
  await flushMicrotasks();
  await t.clock.advance(1_000);
  await flushMicrotasks();
  await t.stop();
  const [failed, retried] = t.reconcileSpans();
  assert.ok(failed && retried, `two reconciles, got ${t.reconcileSpans().length}`);
  assert.equal(failed.status.code, SpanStatusCode.ERROR);
  assert.equal(failed.status.message, 'backup service down');
  assert.equal(failed.attributes['operator_runtime.reconcile.outcome'], 'error');
  assert.equal(failed.events[0]?.name, 'exception');
  assert.equal(failed.events[0]?.attributes?.['exception.message'], 'backup service down');
  assert.equal(retried.attributes['operator_runtime.trigger.type'], 'requeue');
  assert.equal(retried.attributes['operator_runtime.trigger.reason'], 'error_backoff');
  assert.deepEqual(
    retried.links.map((l) => l.context.spanId),
    [failed.spanContext().spanId],
  );
});

test('requeueAfter and terminal errors are recorded as such', async () => {
  let calls = 0;
  const t = run(async () => {
    if (++calls === 1) return requeueAfter(500);
    throw new TerminalError('spec is invalid');
  });
  t.controller.enqueue({ name: 'a' });
  await flushMicrotasks();
  await t.clock.advance(500);
  await flushMicrotasks();
  await t.stop();
  const [first, second] = t.reconcileSpans();
  assert.equal(first?.attributes['operator_runtime.reconcile.outcome'], 'requeue_after');
  assert.equal(first?.attributes['operator_runtime.reconcile.requeue_after_ms'], 500);
  assert.equal(second?.attributes['operator_runtime.trigger.reason'], 'requeue_after');
  assert.equal(second?.attributes['operator_runtime.reconcile.outcome'], 'terminal_error');
  assert.equal(second?.status.code, SpanStatusCode.ERROR);
});

test('spans started inside a reconcile are its children', async () => {
  const t = run(async () => {
    trace.getTracer('client').startSpan('get Thing').end();
  });
  t.controller.enqueue({ name: 'a' });
  await flushMicrotasks();
  await t.stop();
  const [reconcile] = t.reconcileSpans();
  const child = t.spans().find((s) => s.name === 'get Thing');
  assert.equal(child?.parentSpanContext?.spanId, reconcile?.spanContext().spanId);
  assert.equal(child?.spanContext().traceId, reconcile?.spanContext().traceId);
});

test('coalesced causes are counted, and linked up to a bound', async () => {
  const t = run(async () => {});
  // Queued before the workers take the key: all 20 coalesce into one reconcile.
  for (let i = 0; i < 20; i++) t.controller.recordTrigger('ns/a', { type: 'external' });
  t.controller.enqueue({ namespace: 'ns', name: 'a' });
  await flushMicrotasks();
  await t.stop();
  const [span] = t.reconcileSpans();
  assert.equal(span?.attributes['operator_runtime.trigger.type'], 'external');
  assert.equal(span?.attributes['operator_runtime.trigger.count'], 21);
  assert.equal(span?.links.length, 8);
});

test('tracing: false makes no spans and binds no trace id', async () => {
  const t = run(async (_req, ctx) => ctx.log.info({}, 'working'), { tracing: false });
  assert.equal(t.controller.traced, false);
  t.controller.enqueue({ name: 'a' });
  await flushMicrotasks();
  await t.stop();
  assert.deepEqual(t.spans(), []);
  assert.equal(t.logger.entries.find((e) => e.msg === 'working')?.bindings.traceID, undefined);
});

test('without @opentelemetry/api installed, controllers, the client and the HTTP client run untraced', () => {
  // A child process where the package cannot be resolved, as in an application that never installed it.
  const script = fileURLToPath(new URL('./testing/untraced-without-api.ts', import.meta.url));
  const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout.trim().split('\n').at(-1)!), {
    apiLoaded: false,
    traced: false,
    reconciled: 1,
    traceIDBound: false,
  });
});
