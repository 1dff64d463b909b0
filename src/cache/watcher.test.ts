import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { ApiError } from '../client/api-error.js';
import { InvalidOptionError } from '../core/errors.js';
import { Watcher, type WatcherEvent, type WatcherOptions } from './watcher.js';
import { FakeListerWatcher, apiError, gone } from './testing/fake-lister-watcher.js';
import type { ListerWatcher, ListerWatchEvent } from './lister-watcher.js';

const cm = (name: string, data = '1'): KubeObject & { data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns' },
  data: { v: data },
});

function run(lw: ListerWatcher<KubeObject>, options: WatcherOptions = {}) {
  const clock = new FakeClock(0);
  const events: WatcherEvent<KubeObject>[] = [];
  const watcher = new Watcher(lw, (e) => events.push(e), {
    clock,
    random: () => 0,
    backoff: { jitter: 0 },
    ...options,
  });
  const ac = new AbortController();
  const done = watcher.start(ac.signal);
  const summary = () =>
    events.map((e) =>
      'object' in e
        ? `${e.type}:${e.object.metadata?.name}`
        : e.type === 'LIST_PAGE'
          ? `PAGE:${e.items.length}`
          : e.type,
    );
  const stop = async () => {
    ac.abort();
    await done;
  };
  return { clock, events, watcher, ac, done, summary, stop };
}

test('the first list asks resourceVersion 0 with a page limit, then watches from its resourceVersion with bookmarks and a 5–10 min timeout', async () => {
  const lw = new FakeListerWatcher([cm('a'), cm('b')]);
  const r = run(lw, { pageSize: 7, random: () => 0.5 });
  await r.clock.advance(0);
  assert.deepEqual(lw.listCalls, [{ limit: 7, resourceVersion: '0' }]);
  assert.deepEqual(lw.watchCalls, [
    { resourceVersion: lw.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 450 },
  ]);
  assert.deepEqual(r.summary(), ['LIST_BEGIN', 'PAGE:2', 'LIST_DONE']);
  assert.equal(r.watcher.health().state, 'watching');
  assert.equal(r.watcher.health().synced, true);
  await r.stop();
});

test('watch events reach the sink in order and a clean close resumes from the last resourceVersion a bookmark gave', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const r = run(lw);
  await r.clock.advance(0);
  lw.create(cm('b'));
  lw.update(cm('a', '2'));
  lw.delete('ns/b');
  await r.clock.advance(0);
  assert.deepEqual(r.summary().slice(3), ['ADDED:b', 'MODIFIED:a', 'DELETED:b']);
  lw.bookmark();
  const bookmarkRv = lw.resourceVersion;
  await r.clock.advance(0);
  lw.closeWatches();
  await r.clock.advance(0);
  assert.equal(lw.watchCalls.length, 2);
  assert.equal(lw.watchCalls[1]?.resourceVersion, bookmarkRv);
  assert.equal(lw.listCalls.length, 1, 'a clean close never relists');
  assert.equal(r.watcher.health().restarts, 0);
  await r.stop();
});

test('the watcher relists after 410 with a quorum paged read and emits a fresh list', async () => {
  const lw = new FakeListerWatcher([cm('a'), cm('b'), cm('c')]);
  const r = run(lw, { pageSize: 2 });
  await r.clock.advance(0);
  lw.breakWatches(gone());
  await r.clock.advance(0);
  assert.deepEqual(lw.listCalls, [
    { limit: 2, resourceVersion: '0' },
    { limit: 2, resourceVersion: undefined },
    { limit: 2, continue: 'c1' },
  ]);
  const relist = r.events.slice(3);
  assert.deepEqual(
    relist.map((e) => e.type),
    ['LIST_BEGIN', 'LIST_PAGE', 'LIST_PAGE', 'LIST_DONE'],
  );
  assert.deepEqual(relist[0], { type: 'LIST_BEGIN', quorum: true });
  assert.equal(r.watcher.health().lists, 2);
  assert.equal(lw.watchCalls.length, 2, 'the first 410 is acted on at once, without backoff');
  await r.stop();
});

test('a watch from a compacted resourceVersion gets 410 and the watcher relists instead of retrying it', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const r = run(lw);
  await r.clock.advance(0);
  lw.create(cm('b'));
  lw.silenceWatches(); // b is never seen on this watch
  lw.compact();
  lw.breakWatches(apiError(500, 'connection reset'));
  await r.clock.advance(800);
  assert.equal(lw.watchCalls[1]?.resourceVersion, lw.watchCalls[0]?.resourceVersion, 'resumes from the last RV first');
  assert.equal(lw.listCalls.length, 2, 'then relists after the 410');
  assert.deepEqual(r.summary().slice(-2), ['PAGE:2', 'LIST_DONE']);
  await r.stop();
});

test('any other error backs off 800 ms doubling to 30 s and retries forever, resuming from the last resourceVersion', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const r = run(lw);
  await r.clock.advance(0);
  const rv = lw.resourceVersion;
  lw.failNext('watch', apiError(503), 12);
  lw.breakWatches(apiError(500, 'reset'));
  await r.clock.advance(0);
  const delays: number[] = [];
  for (let i = 0; i < 13; i++) {
    delays.push(r.clock.nextTimerInMs()!);
    await r.clock.advance(r.clock.nextTimerInMs()!);
  }
  assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000, 30000, 30000, 30000, 30000]);
  assert.equal(lw.watchCalls.length, 14);
  assert.ok(
    lw.watchCalls.every((c) => c.resourceVersion === rv),
    'every retry resumes from the same RV',
  );
  assert.equal(lw.listCalls.length, 1, 'no relist for a non-410 error');
  assert.equal(lw.openWatches, 1, 'finally watching again');
  const h = r.watcher.health();
  assert.equal(h.state, 'watching');
  assert.equal(h.restarts, 13);
  assert.equal(h.lastError?.status, 503);
  await r.stop();
});

test('the backoff starts over after 2 min of health', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const r = run(lw);
  await r.clock.advance(0);
  lw.failNext('watch', apiError(500), 3);
  lw.breakWatches(apiError(500));
  await r.clock.advance(0);
  for (let i = 0; i < 3; i++) await r.clock.advance(r.clock.nextTimerInMs()!);
  lw.bookmark(); // healthy from here
  await r.clock.advance(60_000);
  lw.breakWatches(apiError(500));
  await r.clock.advance(0);
  assert.equal(r.clock.nextTimerInMs(), 12_800, 'one minute of health is not enough');
  await r.clock.advance(12_800);
  lw.bookmark();
  await r.clock.advance(120_000);
  lw.breakWatches(apiError(500));
  await r.clock.advance(0);
  assert.equal(r.clock.nextTimerInMs(), 800);
  await r.stop();
});

test('a silent watch is torn down after its timeout plus the margin and resumed', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const r = run(lw, { minWatchTimeoutMs: 300_000, stallMarginMs: 30_000 });
  await r.clock.advance(0);
  lw.silenceWatches();
  lw.create(cm('b'));
  await r.clock.advance(329_999);
  assert.equal(lw.watchCalls.length, 1);
  await r.clock.advance(1);
  assert.equal(lw.watchCalls.length, 2, 'resumed at once');
  assert.equal(r.watcher.health().lastError?.code, 'ERR_WATCH_STALLED');
  assert.equal(lw.openWatches, 1, 'the stalled watch was closed');
  assert.deepEqual(r.summary().slice(-1), ['ADDED:b'], 'the resumed watch delivers what the silent one held back');
  await r.stop();
});

test('a watch that keeps receiving bookmarks is never considered stalled', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const r = run(lw);
  await r.clock.advance(0);
  for (let i = 0; i < 20; i++) {
    await r.clock.advance(60_000);
    lw.bookmark();
  }
  assert.equal(lw.watchCalls.length, 1);
  await r.stop();
});

test('a source that ignores the abort signal still cannot keep a stalled watch open', async () => {
  const lw: ListerWatcher<KubeObject> = {
    list: () => Promise.resolve({ items: [], resourceVersion: '7' }),
    watch: () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<ListerWatchEvent<KubeObject>>>(() => {}),
      }),
    }),
  };
  let watches = 0;
  const counting: ListerWatcher<KubeObject> = { list: (o) => lw.list(o), watch: (o) => (watches++, lw.watch(o)) };
  const r = run(counting, { minWatchTimeoutMs: 1_000, stallMarginMs: 500 });
  await r.clock.advance(0);
  await r.clock.advance(1_500);
  assert.equal(watches, 2);
  await r.stop();
});

test('a watch the server closes at once without events backs off instead of spinning', async () => {
  let watches = 0;
  const lw: ListerWatcher<KubeObject> = {
    list: () => Promise.resolve({ items: [], resourceVersion: 'x' }),
    watch: () => {
      watches++;
      return (async function* () {})();
    },
  };
  const r = run(lw);
  await r.clock.advance(0);
  assert.equal(watches, 1);
  assert.equal(r.clock.nextTimerInMs(), 800);
  assert.equal(r.watcher.health().lastError?.code, 'ERR_WATCH_CLOSED_EARLY');
  await r.clock.advance(800);
  assert.equal(watches, 2);
  await r.stop();
});

test('a failed list page is asked again with the same continue token', async () => {
  const lw2 = new FakeListerWatcher([cm('a'), cm('b'), cm('c')], { ignoreLimitForRv0: false });
  const first = lw2.list.bind(lw2);
  const asked: (string | undefined)[] = [];
  lw2.list = (o) => {
    asked.push(o.continue);
    return asked.length === 2 ? Promise.reject(apiError(503)) : first(o);
  };
  const r2 = run(lw2, { pageSize: 2 });
  await r2.clock.advance(0);
  assert.deepEqual(asked, [undefined, 'c1']);
  await r2.clock.advance(800);
  assert.deepEqual(asked, [undefined, 'c1', 'c1']);
  assert.deepEqual(r2.summary(), ['LIST_BEGIN', 'PAGE:2', 'PAGE:1', 'LIST_DONE']);
  await r2.stop();
});

test('an expired continue token restarts the list from scratch with a quorum read', async () => {
  const lw = new FakeListerWatcher([cm('a'), cm('b'), cm('c')], { ignoreLimitForRv0: false });
  const orig = lw.list.bind(lw);
  let n = 0;
  lw.list = (o) => {
    if (++n === 2) {
      // a write, then compaction, while we page: the continue token's snapshot is gone
      lw.create(cm('d'));
      lw.compact();
    }
    return orig(o);
  };
  const r = run(lw, { pageSize: 2 });
  await r.clock.advance(0);
  assert.deepEqual(lw.listCalls, [
    { limit: 2, resourceVersion: '0' },
    { limit: 2, continue: 'c1' },
    { limit: 2, resourceVersion: undefined },
    { limit: 2, continue: 'c2' },
  ]);
  assert.deepEqual(r.summary(), ['LIST_BEGIN', 'PAGE:2', 'LIST_BEGIN', 'PAGE:2', 'PAGE:2', 'LIST_DONE']);
  await r.stop();
});

test('"too large resource version" relists with a quorum read, as client-go does', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  lw.failNext(
    'list',
    new ApiError({
      status: 504,
      reason: 'Timeout',
      message: 'Too large resource version: 9, current: 3',
      details: { causes: [{ reason: 'ResourceVersionTooLarge' }] },
    }),
  );
  const r = run(lw);
  await r.clock.advance(0);
  assert.deepEqual(
    lw.listCalls.map((c) => c.resourceVersion),
    ['0', undefined],
  );
  assert.equal(r.watcher.health().synced, true);
  await r.stop();
});

test('a watch that fails with 410 at once every time backs off instead of relisting in a hot loop', async () => {
  let watches = 0;
  const lw: ListerWatcher<KubeObject> = {
    list: () => Promise.resolve({ items: [], resourceVersion: '5' }),
    watch: () => {
      watches++;
      return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(gone()) }) };
    },
  };
  const r = run(lw);
  await r.clock.advance(0);
  assert.equal(watches, 2, 'the first 410 relists at once, the second (no event in between) waits');
  assert.equal(r.clock.nextTimerInMs(), 800);
  await r.clock.advance(800);
  assert.equal(watches, 3);
  assert.equal(r.clock.nextTimerInMs(), 1600);
  await r.stop();
});

test('a list page that never answers is abandoned after the list timeout and asked again', async () => {
  let calls = 0;
  const aborted: boolean[] = [];
  const lw: ListerWatcher<KubeObject> = {
    list: (o) => {
      calls++;
      if (calls === 1) {
        return new Promise((_, reject) =>
          o.signal?.addEventListener('abort', () => (aborted.push(true), reject(new Error('aborted')))),
        );
      }
      return Promise.resolve({ items: [], resourceVersion: '1' });
    },
    watch: () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<ListerWatchEvent<KubeObject>>>(() => {}),
      }),
    }),
  };
  const r = run(lw, { listTimeoutMs: 10_000 });
  await r.clock.advance(9_999);
  assert.equal(calls, 1);
  await r.clock.advance(1);
  assert.deepEqual(aborted, [true], 'the hung request was aborted');
  assert.equal(r.watcher.health().lastError?.code, 'ERR_LIST_TIMEOUT');
  await r.clock.advance(800);
  assert.equal(calls, 2);
  assert.equal(r.watcher.health().synced, true);
  await r.stop();
});

test('start resolves promptly when the signal aborts, whether watching, listing or backing off', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const watching = run(lw);
  await watching.clock.advance(0);
  await watching.stop();
  assert.equal(watching.watcher.health().state, 'stopped');
  assert.equal(lw.openWatches, 0, 'the watch was closed');

  const lw2 = new FakeListerWatcher([cm('a')]);
  lw2.failNext('list', apiError(500));
  const backingOff = run(lw2);
  await backingOff.clock.advance(0);
  assert.equal(backingOff.watcher.health().state, 'backoff');
  await backingOff.stop();
  assert.equal(backingOff.clock.pendingTimers, 0, 'no timer left behind');

  const hanging: ListerWatcher<KubeObject> = {
    list: () => new Promise(() => {}),
    watch: () => (async function* () {})(),
  };
  const listing = run(hanging);
  await listing.clock.advance(0);
  assert.equal(listing.watcher.health().state, 'listing');
  await listing.stop();
});

test('the watcher never rejects, even when the source throws synchronously', async () => {
  const lw: ListerWatcher<KubeObject> = {
    list: () => {
      throw new TypeError('boom');
    },
    watch: () => (async function* () {})(),
  };
  const r = run(lw);
  await r.clock.advance(10_000);
  assert.ok(r.watcher.health().restarts >= 3);
  assert.equal(r.watcher.health().lastError?.message, 'boom');
  await r.stop();
});

test('resourceVersions are passed back verbatim, never interpreted', async () => {
  const lw: ListerWatcher<KubeObject> & { watched: (string | undefined)[] } = {
    watched: [],
    list: () => Promise.resolve({ items: [], resourceVersion: 'opaque-b' }),
    watch(o) {
      this.watched.push(o.resourceVersion);
      const n = this.watched.length;
      return (async function* () {
        if (n === 1) yield { type: 'BOOKMARK' as const, object: { metadata: { resourceVersion: 'opaque-a' } } };
        await new Promise(() => {});
      })();
    },
  };
  const r = run(lw, { minWatchTimeoutMs: 1000, stallMarginMs: 0 });
  await r.clock.advance(0);
  await r.clock.advance(1000);
  assert.deepEqual(lw.watched, ['opaque-b', 'opaque-a'], 'a "smaller" RV from a bookmark is still the newest');
  await r.stop();
});

test('a 403 on list and watch (RBAC not granted yet) is retried with backoff until permission arrives, then the watcher syncs by itself', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  lw.failNext('list', apiError(403, 'configmaps is forbidden'), 5);
  const r = run(lw);
  await r.clock.advance(0);
  assert.equal(r.watcher.health().synced, false);
  assert.equal(r.watcher.health().lastError?.status, 403);
  await r.clock.advance(800 + 1600 + 3200 + 6400 + 12800);
  assert.equal(r.watcher.health().synced, true);
  await r.clock.advance(120_000); // healthy long enough for the backoff to start over
  lw.failNext('watch', apiError(403), 2);
  lw.breakWatches(apiError(403));
  await r.clock.advance(800 + 1600 + 3200);
  assert.equal(lw.openWatches, 1, 'watching again without a relist');
  assert.equal(lw.listCalls.length, 6);
  await r.stop();
});

test('invalid watcher options are refused at construction, naming the option', () => {
  const lw = new FakeListerWatcher<KubeObject>([]);
  for (const [option, value] of [
    ['pageSize', -1],
    ['pageSize', 1.5],
    ['minWatchTimeoutMs', 999],
    ['stallMarginMs', -1],
    ['listTimeoutMs', 0],
  ] as const) {
    assert.throws(
      () => new Watcher(lw, () => {}, { [option]: value }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === option,
      option,
    );
  }
  for (const [option, backoff] of [
    ['backoff.maxMs', { maxMs: 1 }],
    ['backoff.maxAttempts', { maxAttempts: 3 }],
  ] as const) {
    assert.throws(
      () => new Watcher(lw, () => {}, { backoff }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === option,
      option,
    );
  }
});

test('watcher metrics go to the registry passed in, labelled by informer', async () => {
  const registry = new Registry();
  const lw = new FakeListerWatcher([cm('a')]);
  const r = run(lw, { registry, name: 'configmaps' });
  await r.clock.advance(0);
  lw.create(cm('b'));
  await r.clock.advance(0);
  lw.breakWatches(gone());
  await r.clock.advance(0);
  const text = await registry.metrics();
  assert.match(text, /cache_watch_events_total\{informer="configmaps",type="ADDED"\} 1/);
  assert.match(text, /cache_watch_restarts_total\{informer="configmaps",reason="gone"\} 1/);
  assert.match(text, /cache_lists_total\{informer="configmaps"\} 2/);
  assert.match(text, /cache_synced\{informer="configmaps"\} 1/);
  assert.match(text, /cache_watcher_state\{informer="configmaps",state="watching"\} 1/);
  await r.stop();
  await flushMicrotasks();
});
