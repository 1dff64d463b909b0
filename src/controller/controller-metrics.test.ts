import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ControllerMetrics } from './controller-metrics.js';

test('every series exists at zero from the start; counts, active workers and durations are exported at scrape', async () => {
  const registry = new Registry();
  const metrics = new ControllerMetrics(registry, 'c', 4);
  const zero = await registry.metrics();
  assert.match(zero, /^controller_runtime_reconcile_total\{controller="c",result="error"\} 0$/m);
  assert.match(zero, /^controller_runtime_reconcile_panics_total\{controller="c"\} 0$/m);
  assert.match(zero, /^controller_runtime_active_workers\{controller="c"\} 0$/m);
  assert.match(zero, /^controller_runtime_reconcile_time_seconds_count\{controller="c"\} 0$/m);

  metrics.reconcileStarted();
  metrics.reconcileStarted();
  metrics.reconcileFinished('error', 0.02, { panic: true });
  let text = await registry.metrics();
  assert.match(text, /^controller_runtime_active_workers\{controller="c"\} 1$/m);
  metrics.reconcileFinished('success', 0.005);
  text = await registry.metrics();
  assert.match(text, /^controller_runtime_active_workers\{controller="c"\} 0$/m);
  assert.match(text, /^controller_runtime_reconcile_total\{controller="c",result="success"\} 1$/m);
  assert.match(text, /^controller_runtime_reconcile_total\{controller="c",result="error"\} 1$/m);
  assert.match(text, /^controller_runtime_reconcile_errors_total\{controller="c"\} 1$/m);
  assert.match(text, /^controller_runtime_reconcile_panics_total\{controller="c"\} 1$/m);
  assert.match(text, /^controller_runtime_terminal_reconcile_errors_total\{controller="c"\} 0$/m);
  // `le` buckets as prom-client's histogram fills them: 0.005 is in le=0.005, 0.02 first in le=0.025.
  assert.match(text, /^controller_runtime_reconcile_time_seconds_bucket\{le="0.005",controller="c"\} 1$/m);
  assert.match(text, /^controller_runtime_reconcile_time_seconds_bucket\{le="0.01",controller="c"\} 1$/m);
  assert.match(text, /^controller_runtime_reconcile_time_seconds_bucket\{le="0.025",controller="c"\} 2$/m);
  assert.match(text, /^controller_runtime_reconcile_time_seconds_count\{controller="c"\} 2$/m);
  assert.match(text, /^controller_runtime_reconcile_time_seconds_sum\{controller="c"\} 0.025$/m);
  assert.match(text, /^controller_runtime_max_concurrent_reconciles\{controller="c"\} 4$/m);
});
