import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetricsRegistry } from './create-metrics-registry.js';
import { registerGaugeCollector } from './gauge-collector.js';
import { getOrCreateGauge } from './get-or-create-metric.js';
import { MetricConflictError } from './metric-conflict-error.js';

test('two components sharing a gauge each set their own series at scrape time, until detached', async () => {
  const r = createMetricsRegistry();
  let a = 1;
  const config = { name: 'queue_depth', help: 'h', labelNames: ['name'] } as const;
  registerGaugeCollector(r, config, (g) => g.set({ name: 'a' }, a));
  const detachB = registerGaugeCollector(r, config, (g) => g.set({ name: 'b' }, 7));
  a = 5;
  let text = await r.getSingleMetricAsString('queue_depth');
  assert.match(text, /^queue_depth\{name="a"\} 5$/m);
  assert.match(text, /^queue_depth\{name="b"\} 7$/m);

  detachB();
  a = 6;
  text = await r.getSingleMetricAsString('queue_depth');
  assert.match(text, /^queue_depth\{name="a"\} 6$/m);
  assert.doesNotMatch(text, /name="b"/, 'a detached collector leaves no stale series');
});

test('a collector cannot attach to a plain gauge whose collect callback it would never run', () => {
  const r = createMetricsRegistry();
  getOrCreateGauge(r, { name: 'plain', help: 'h' });
  assert.throws(() => registerGaugeCollector(r, { name: 'plain', help: 'h' }, () => {}), MetricConflictError);
});
