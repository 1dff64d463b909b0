import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ControllerMetrics } from '../src/controller/controller-metrics.js';

// Regression: the series first appeared at their first error/panic. increase() and rate() need a
// previous sample, so OperatorReconcilePanics missed the first panic after every start, and a
// healthy controller had no reconcile error ratio at all (an empty panel instead of 0).
test("a controller's reconcile counters and latency histogram exist at zero before its first reconcile", async () => {
  const registry = new Registry();
  new ControllerMetrics(registry, 'database', 4);
  const text = await registry.metrics();
  for (const series of [
    'controller_runtime_reconcile_total{controller="database",result="success"} 0',
    'controller_runtime_reconcile_total{controller="database",result="error"} 0',
    'controller_runtime_reconcile_errors_total{controller="database"} 0',
    'controller_runtime_terminal_reconcile_errors_total{controller="database"} 0',
    'controller_runtime_reconcile_panics_total{controller="database"} 0',
    'controller_runtime_reconcile_time_seconds_count{controller="database"} 0',
  ]) {
    assert.ok(text.includes(series), `missing: ${series}`);
  }
});
