import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetricsRegistry } from './create-metrics-registry.js';
import { getOrCreateCounter, getOrCreateGauge, getOrCreateHistogram } from './get-or-create-metric.js';
import { MetricConflictError } from './metric-conflict-error.js';

test('asking twice for one metric name returns the same metric instead of throwing', async () => {
  const r = createMetricsRegistry();
  const first = getOrCreateCounter(r, { name: 'reconciles_total', help: 'h', labelNames: ['controller'] });
  const second = getOrCreateCounter(r, { name: 'reconciles_total', help: 'h', labelNames: ['controller'] });
  assert.equal(first, second);
  first.inc({ controller: 'a' });
  second.inc({ controller: 'b' }, 2);
  const text = await r.getSingleMetricAsString('reconciles_total');
  assert.match(text, /^reconciles_total\{controller="a"\} 1$/m);
  assert.match(text, /^reconciles_total\{controller="b"\} 2$/m);
});

test('label names match regardless of order', () => {
  const r = createMetricsRegistry();
  const h = getOrCreateHistogram(r, { name: 'd_seconds', help: 'h', labelNames: ['a', 'b'] });
  assert.equal(getOrCreateHistogram(r, { name: 'd_seconds', help: 'h', labelNames: ['b', 'a'] }), h);
});

test('a name taken by another metric type is a MetricConflictError naming the metric', () => {
  const r = createMetricsRegistry();
  getOrCreateCounter(r, { name: 'depth', help: 'h' });
  assert.throws(
    () => getOrCreateGauge(r, { name: 'depth', help: 'h' }),
    (e: unknown) => e instanceof MetricConflictError && e.code === 'ERR_METRIC_CONFLICT' && e.metricName === 'depth',
  );
});

test('a name taken with other label names is a MetricConflictError', () => {
  const r = createMetricsRegistry();
  getOrCreateGauge(r, { name: 'depth', help: 'h', labelNames: ['name'] });
  assert.throws(
    () => getOrCreateGauge(r, { name: 'depth', help: 'h', labelNames: ['name', 'controller'] }),
    MetricConflictError,
  );
});
