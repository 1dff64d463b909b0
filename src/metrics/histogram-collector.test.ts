import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram } from 'prom-client';
import { createMetricsRegistry } from './create-metrics-registry.js';
import { HistogramAccumulator } from './histogram-accumulator.js';
import { registerHistogramCollector } from './histogram-collector.js';
import { getOrCreateHistogram } from './get-or-create-metric.js';
import { MetricConflictError } from './metric-conflict-error.js';

const buckets = [0.001, 0.01, 0.1, 1];
const samples = [0, 0.0005, 0.001, 0.002, 0.05, 0.5, 0.5, 3, 1e9];

test("a collected histogram exports exactly what prom-client's own histogram would", async () => {
  const reference = createMetricsRegistry();
  const h = new Histogram({ name: 'op_seconds', help: 'op', labelNames: ['name'], buckets, registers: [reference] });
  for (const v of samples) h.observe({ name: 'q' }, v);

  const collected = createMetricsRegistry();
  const acc = new HistogramAccumulator(buckets);
  registerHistogramCollector(collected, { name: 'op_seconds', help: 'op', labelNames: ['name'], buckets }, (emit) =>
    emit({ name: 'q' }, acc),
  );
  for (const v of samples) acc.observe(v);

  assert.equal(
    await collected.getSingleMetricAsString('op_seconds'),
    await reference.getSingleMetricAsString('op_seconds'),
  );
  // Exemplars (null/undefined in prom-client's output) are not used here.
  const withoutExemplars = (json: unknown): unknown =>
    JSON.parse(JSON.stringify(json, (k, v: unknown) => (k === 'exemplar' ? undefined : v)));
  assert.deepEqual(
    withoutExemplars(await collected.getMetricsAsJSON()),
    withoutExemplars(await reference.getMetricsAsJSON()),
  );
});

test('two accumulators on one collected histogram export two series; detaching one removes it', async () => {
  const r = createMetricsRegistry();
  const config = { name: 'op_seconds', help: 'op', labelNames: ['name'], buckets };
  const a = new HistogramAccumulator(buckets);
  const b = new HistogramAccumulator(buckets);
  registerHistogramCollector(r, config, (emit) => emit({ name: 'a' }, a));
  const detachB = registerHistogramCollector(r, config, (emit) => emit({ name: 'b' }, b));
  a.observe(0.5);
  b.observe(0.005);
  b.observe(0.005);
  let text = await r.getSingleMetricAsString('op_seconds');
  assert.match(text, /^op_seconds_count\{name="a"\} 1$/m);
  assert.match(text, /^op_seconds_bucket\{le="0.01",name="b"\} 2$/m);
  detachB();
  text = await r.getSingleMetricAsString('op_seconds');
  assert.doesNotMatch(text, /name="b"/);
});

test('an accumulator with other buckets than the histogram is refused at scrape time', async () => {
  const r = createMetricsRegistry();
  registerHistogramCollector(r, { name: 'op_seconds', help: 'op', buckets }, (emit) =>
    emit({}, new HistogramAccumulator([1, 2])),
  );
  await assert.rejects(r.getSingleMetricAsString('op_seconds'), MetricConflictError);
});

test('a plain histogram and a collected one cannot share a name', () => {
  const r = createMetricsRegistry();
  getOrCreateHistogram(r, { name: 'op_seconds', help: 'op', buckets });
  assert.throws(
    () => registerHistogramCollector(r, { name: 'op_seconds', help: 'op', buckets }, () => {}),
    MetricConflictError,
  );
});

test('accumulator buckets must increase strictly', () => {
  assert.throws(() => new HistogramAccumulator([1, 1]), /buckets/);
});
