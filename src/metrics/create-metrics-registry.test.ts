import { test } from 'node:test';
import assert from 'node:assert/strict';
import { register as globalRegistry } from 'prom-client';
import { createMetricsRegistry } from './create-metrics-registry.js';
import { getOrCreateCounter } from './get-or-create-metric.js';

test('each registry is fresh and independent of the others and of the global one', async () => {
  const a = createMetricsRegistry();
  const b = createMetricsRegistry();
  assert.notEqual(a, b);
  getOrCreateCounter(a, { name: 'things_total', help: 'things' }).inc(3);
  getOrCreateCounter(b, { name: 'things_total', help: 'things' }).inc(1);
  assert.match(await a.getSingleMetricAsString('things_total'), /^things_total 3$/m);
  assert.match(await b.getSingleMetricAsString('things_total'), /^things_total 1$/m);
  assert.equal(globalRegistry.getSingleMetric('things_total'), undefined);
});

test('a registry has no process metrics unless asked, and has them when asked', async () => {
  assert.equal((await createMetricsRegistry().getMetricsAsJSON()).length, 0);
  const withDefaults = createMetricsRegistry({ defaultMetrics: true });
  const text = await withDefaults.metrics();
  assert.match(text, /^process_cpu_user_seconds_total /m);
  assert.match(text, /^nodejs_heap_size_used_bytes /m);
  assert.equal(globalRegistry.getSingleMetric('process_cpu_user_seconds_total'), undefined);
});

test('default labels are added to every series of the registry', async () => {
  const r = createMetricsRegistry({ defaultLabels: { pod: 'op-0' } });
  getOrCreateCounter(r, { name: 'x_total', help: 'x' }).inc();
  assert.match(await r.metrics(), /^x_total\{pod="op-0"\} 1$/m);
});
