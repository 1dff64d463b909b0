import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { ResponseTooLargeError } from '../client/body-limit.js';
import { Watcher, type WatcherEvent } from './watcher.js';
import { FakeListerWatcher } from './testing/fake-lister-watcher.js';

const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } });

test('a resourceVersion=0 list too large for maxResponseBytes is retried as a paged quorum list, which syncs', async () => {
  const lw = new FakeListerWatcher([cm('a'), cm('b'), cm('c')]);
  // The watch cache answers resourceVersion=0 whole, ignoring the limit: past the client's limit it fails.
  lw.failNext('list', new ResponseTooLargeError('GET', '/api/v1/configmaps?limit=2&resourceVersion=0', 1024), 1);
  const clock = new FakeClock(0);
  const events: WatcherEvent<KubeObject>[] = [];
  const watcher = new Watcher(lw, (e) => events.push(e), {
    clock,
    random: () => 0,
    backoff: { jitter: 0 },
    pageSize: 2,
  });
  const ac = new AbortController();
  const done = watcher.start(ac.signal);
  for (let i = 0; i < 10 && !watcher.health().synced; i++) await clock.advance(clock.nextTimerInMs() ?? 0);
  assert.equal(watcher.health().synced, true);
  assert.deepEqual(lw.listCalls[0], { limit: 2, resourceVersion: '0' });
  assert.equal(lw.listCalls[1]?.resourceVersion, undefined, 'the retry is a quorum read');
  assert.equal(lw.listCalls[1]?.limit, 2, 'and paged');
  assert.equal(
    events.filter((e) => e.type === 'LIST_PAGE').reduce((n, e) => n + (e.type === 'LIST_PAGE' ? e.items.length : 0), 0),
    3,
  );
  ac.abort();
  await done;
});
