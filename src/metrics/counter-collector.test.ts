import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetricsRegistry } from './create-metrics-registry.js';
import { registerCounterCollector } from './counter-collector.js';
import { getOrCreateCounter } from './get-or-create-metric.js';
import { MetricConflictError } from './metric-conflict-error.js';

test("a collected counter reports each collector's running total at every scrape", async () => {
  const r = createMetricsRegistry();
  const config = { name: 'adds_total', help: 'adds', labelNames: ['name'] } as const;
  let a = 0;
  registerCounterCollector(r, config, (c) => c.inc({ name: 'a' }, a));
  const detachB = registerCounterCollector(r, config, (c) => c.inc({ name: 'b' }, 4));
  a = 3;
  assert.match(await r.getSingleMetricAsString('adds_total'), /^adds_total\{name="a"\} 3$/m);
  a = 5; // scraping twice must not double-count
  let text = await r.getSingleMetricAsString('adds_total');
  assert.match(text, /^adds_total\{name="a"\} 5$/m);
  assert.match(text, /^adds_total\{name="b"\} 4$/m);
  detachB();
  text = await r.getSingleMetricAsString('adds_total');
  assert.doesNotMatch(text, /name="b"/);
});

test('a plain counter and a collected one cannot share a name', () => {
  const r = createMetricsRegistry();
  registerCounterCollector(r, { name: 'adds_total', help: 'adds' }, () => {});
  assert.throws(() => getOrCreateCounter(r, { name: 'adds_total', help: 'adds' }), MetricConflictError);
});
