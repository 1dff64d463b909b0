import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { forgetInformerSeries, informerMetrics } from './cache-metrics.js';

test('the per-event series appear once first written, with the latest values at each scrape, one series per informer', async () => {
  const registry = new Registry();
  const a = informerMetrics(registry, 'a');
  const b = informerMetrics(registry, 'b');
  const before = await registry.metrics();
  for (const name of [
    'cache_watch_events_total',
    'cache_last_event_timestamp_seconds',
    'cache_objects',
    'cache_handler_pending_keys',
  ])
    assert.doesNotMatch(before, new RegExp(`^${name}\\{`, 'm'), `${name} has no series before a write`);

  a.event('ADDED');
  a.event('MODIFIED');
  a.event('MODIFIED');
  b.event('DELETED');
  a.setLastEventAt(1_500);
  a.setObjects(3);
  a.setPending('h', 2);
  let text = await registry.metrics();
  assert.match(text, /^cache_watch_events_total\{informer="a",type="ADDED"\} 1$/m);
  assert.match(text, /^cache_watch_events_total\{informer="a",type="MODIFIED"\} 2$/m);
  assert.match(text, /^cache_watch_events_total\{informer="b",type="DELETED"\} 1$/m);
  assert.match(text, /^cache_last_event_timestamp_seconds\{informer="a"\} 1.5$/m);
  assert.match(text, /^cache_objects\{informer="a"\} 3$/m);
  assert.match(text, /^cache_handler_pending_keys\{informer="a",handler="h"\} 2$/m);
  assert.doesNotMatch(text, /^cache_objects\{informer="b"\}/m);

  a.event('MODIFIED');
  a.setObjects(2);
  a.setPending('h', 0);
  text = await registry.metrics();
  assert.match(text, /^cache_watch_events_total\{informer="a",type="MODIFIED"\} 3$/m);
  assert.match(text, /^cache_objects\{informer="a"\} 2$/m);
  assert.match(text, /^cache_handler_pending_keys\{informer="a",handler="h"\} 0$/m);
});

test('an informer started again under the same name counts on; forgetInformerSeries drops the matching informers’ series', async () => {
  const registry = new Registry();
  informerMetrics(registry, 'east/v1 ConfigMap').event('ADDED');
  // A member re-engaged: new informers, same names.
  const again = informerMetrics(registry, 'east/v1 ConfigMap');
  again.event('ADDED');
  again.setObjects(2);
  informerMetrics(registry, 'west/v1 ConfigMap').setObjects(1);
  let text = await registry.metrics();
  assert.match(text, /^cache_watch_events_total\{informer="east\/v1 ConfigMap",type="ADDED"\} 2$/m);

  await forgetInformerSeries(registry, ['east/v1 ConfigMap']);
  text = await registry.metrics();
  assert.doesNotMatch(text, /informer="east\//);
  assert.match(text, /^cache_objects\{informer="west\/v1 ConfigMap"\} 1$/m);
  // Written again after it left (it joined again): from zero.
  informerMetrics(registry, 'east/v1 ConfigMap').event('ADDED');
  assert.match(await registry.metrics(), /^cache_watch_events_total\{informer="east\/v1 ConfigMap",type="ADDED"\} 1$/m);
});

test("forgetInformerSeries removes the named informers exactly, never by prefix: a member named apps keeps the host's apps/v1 Deployment series", async () => {
  const registry = new Registry();
  const host = informerMetrics(registry, 'apps/v1 Deployment');
  host.list();
  host.setSynced(true);
  host.event('ADDED');
  host.setObjects(1);
  const member = informerMetrics(registry, 'apps/v1 ConfigMap');
  member.list();
  member.setSynced(true);
  member.event('ADDED');
  member.setObjects(1);
  await forgetInformerSeries(registry, ['apps/v1 ConfigMap']);
  const text = await registry.metrics();
  assert.doesNotMatch(text, /informer="apps\/v1 ConfigMap"/);
  for (const metric of ['cache_lists_total', 'cache_synced', 'cache_watch_events_total', 'cache_objects'])
    assert.match(text, new RegExp(`^${metric}\\{informer="apps/v1 Deployment"`, 'm'), metric);
});
