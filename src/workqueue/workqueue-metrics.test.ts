import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Registry } from 'prom-client';
import { FakeClock } from '../core/fake-clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { Workqueue } from './workqueue.js';
import { WORKQUEUE_DURATION_BUCKETS_SECONDS } from './workqueue-metrics.js';

/** The value of one series (matching every given label), read through prom-client's JSON export. */
async function valueOf(
  registry: Registry,
  metricName: string,
  labels: Record<string, string | number>,
  seriesName = metricName,
): Promise<number | undefined> {
  const family = (await registry.getMetricsAsJSON()).find((m) => m.name === metricName);
  const series = family?.values.find(
    (v) =>
      ((v as { metricName?: string }).metricName ?? metricName) === seriesName &&
      Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want),
  );
  return series?.value;
}

test('workqueue metrics follow a known sequence of adds, gets, dones and retries', async () => {
  const clock = new FakeClock(0);
  const registry = createMetricsRegistry();
  const q = new Workqueue({ name: 'widgets', controller: 'widget-controller', registry, clock });
  const l = { name: 'widgets', controller: 'widget-controller' };

  q.add('a');
  q.add('b');
  q.add('a'); // duplicate: not an add
  assert.equal(await valueOf(registry, 'workqueue_adds_total', l), 2);
  assert.equal(await valueOf(registry, 'workqueue_depth', l), 2);

  await clock.advance(10);
  await q.get(); // a waited 10 ms
  await clock.advance(5);
  await q.get(); // b waited 15 ms
  assert.equal(await valueOf(registry, 'workqueue_depth', l), 0);
  q.add('a'); // in flight: dirty, counted in depth as client-go does
  assert.equal(await valueOf(registry, 'workqueue_adds_total', l), 3);
  assert.equal(await valueOf(registry, 'workqueue_depth', l), 1);

  await clock.advance(20);
  // a has run 25 ms, b 20 ms
  assert.equal(await valueOf(registry, 'workqueue_unfinished_work_seconds', l), 0.045);
  assert.equal(await valueOf(registry, 'workqueue_longest_running_processor_seconds', l), 0.025);

  q.done('a'); // work 25 ms; a is queued again
  q.done('b'); // work 20 ms
  assert.equal(await valueOf(registry, 'workqueue_unfinished_work_seconds', l), 0);
  assert.equal(await valueOf(registry, 'workqueue_longest_running_processor_seconds', l), 0);

  q.addAfter('c', 100);
  q.addRateLimited('d');
  q.addAfter('e', 0);
  assert.equal(await valueOf(registry, 'workqueue_retries_total', l), 3);

  const queue = (le: number | string): Promise<number | undefined> =>
    valueOf(registry, 'workqueue_queue_duration_seconds', { ...l, le }, 'workqueue_queue_duration_seconds_bucket');
  assert.equal(
    await valueOf(registry, 'workqueue_queue_duration_seconds', l, 'workqueue_queue_duration_seconds_count'),
    2,
  );
  assert.ok(
    Math.abs(
      (await valueOf(registry, 'workqueue_queue_duration_seconds', l, 'workqueue_queue_duration_seconds_sum'))! - 0.025,
    ) < 1e-12,
  );
  assert.equal(await queue(0.001), 0);
  assert.equal(await queue(0.01), 1, '10 ms is in the ≤ 0.01 s bucket');
  assert.equal(await queue(0.1), 2);
  assert.equal(await queue('+Inf'), 2);
  assert.equal(
    await valueOf(registry, 'workqueue_work_duration_seconds', l, 'workqueue_work_duration_seconds_count'),
    2,
  );
  assert.ok(
    Math.abs(
      (await valueOf(registry, 'workqueue_work_duration_seconds', l, 'workqueue_work_duration_seconds_sum'))! - 0.045,
    ) < 1e-12,
  );
});

test("the text format has controller-runtime's names, labels and buckets", async () => {
  const registry = createMetricsRegistry();
  new Workqueue({ name: 'q', registry, clock: new FakeClock(0) });
  const text = await registry.metrics();
  for (const name of [
    'workqueue_depth',
    'workqueue_adds_total',
    'workqueue_queue_duration_seconds',
    'workqueue_work_duration_seconds',
    'workqueue_unfinished_work_seconds',
    'workqueue_longest_running_processor_seconds',
    'workqueue_retries_total',
  ]) {
    assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `${name} is exported before anything happened`);
  }
  assert.match(text, /^workqueue_adds_total\{name="q",controller="q"\} 0$/m, 'controller defaults to the queue name');
  assert.match(text, /^workqueue_work_duration_seconds_bucket\{le="1e-8",name="q",controller="q"\} 0$/m);
  assert.match(text, /^workqueue_work_duration_seconds_bucket\{le="1000",name="q",controller="q"\} 0$/m);
  assert.deepEqual(
    WORKQUEUE_DURATION_BUCKETS_SECONDS,
    [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000],
  );
});

test('two queues with different names share one registry, each with its own series', async () => {
  const clock = new FakeClock(0);
  const registry = createMetricsRegistry();
  const a = new Workqueue({ name: 'a', registry, clock });
  const b = new Workqueue({ name: 'b', registry, clock });
  a.add('x');
  a.add('y');
  b.add('x');
  assert.equal(await valueOf(registry, 'workqueue_adds_total', { name: 'a' }), 2);
  assert.equal(await valueOf(registry, 'workqueue_adds_total', { name: 'b' }), 1);
  assert.equal(await valueOf(registry, 'workqueue_depth', { name: 'a' }), 2);
  assert.equal(await valueOf(registry, 'workqueue_depth', { name: 'b' }), 1);
});

test('two registries are independent: a queue on one leaves the other untouched', async () => {
  const clock = new FakeClock(0);
  const r1 = createMetricsRegistry();
  const r2 = createMetricsRegistry();
  new Workqueue({ name: 'same', registry: r1, clock }).add('x');
  const q2 = new Workqueue({ name: 'same', registry: r2, clock });
  q2.add('x');
  q2.add('y');
  assert.equal(await valueOf(r1, 'workqueue_adds_total', { name: 'same' }), 1);
  assert.equal(await valueOf(r2, 'workqueue_adds_total', { name: 'same' }), 2);
});

test('a queue without a registry keeps no metrics and works the same', async () => {
  const q = new Workqueue({ name: 'plain', clock: new FakeClock(0) });
  assert.equal((q as unknown as { metrics: unknown }).metrics, undefined);
  q.add('a');
  const next = await q.get();
  assert.deepEqual(next, { shutdown: false, key: 'a' });
  q.done('a');
});

test('dropping queued keys at shutdown empties the depth gauge', async () => {
  const registry = createMetricsRegistry();
  const q = new Workqueue({ name: 'q', registry, clock: new FakeClock(0) });
  q.add('a');
  q.add('b');
  await q.shutdown();
  assert.equal(await valueOf(registry, 'workqueue_depth', { name: 'q' }), 0);
});

test('a second queue with the same name on one registry is refused instead of merging series', () => {
  const registry = createMetricsRegistry();
  new Workqueue({ name: 'dup', registry });
  assert.throws(
    () => new Workqueue({ name: 'dup', registry }),
    (e: unknown) => e instanceof InvalidOptionError && e.option === 'name',
  );
  new Workqueue({ name: 'dup', controller: 'other', registry }); // other labels: fine
  new Workqueue({ name: 'dup', registry: createMetricsRegistry() }); // other registry: fine
});

test('a key added while in flight counts its queue time from that add, as client-go does', async () => {
  const clock = new FakeClock(0);
  const registry = createMetricsRegistry();
  const q = new Workqueue({ name: 'q', registry, clock });
  q.add('a');
  await q.get(); // 0 ms in the queue
  await clock.advance(10);
  q.add('a');
  await clock.advance(20);
  q.done('a');
  await clock.advance(5);
  await q.get(); // dirty since t=10: 25 ms
  const sum = await valueOf(
    registry,
    'workqueue_queue_duration_seconds',
    { name: 'q' },
    'workqueue_queue_duration_seconds_sum',
  );
  assert.ok(Math.abs(sum! - 0.025) < 1e-12, `sum ${sum}`);
  assert.equal(await valueOf(registry, 'workqueue_adds_total', { name: 'q' }), 2);
});
