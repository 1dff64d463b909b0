import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { Watcher, type WatcherEvent, type WatcherOptions } from './watcher.js';
import { SharedInformer } from './informer.js';
import { FakeListerWatcher, apiError, gone } from './testing/fake-lister-watcher.js';
import type { Logger } from '../core/logger.js';
import { ApiError } from '../client/api-error.js';
import { TransportError } from '../client/transport.js';
import { INITIAL_EVENTS_END_ANNOTATION, type ListerWatcher, type ListerWatchEvent } from './lister-watcher.js';

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
  return { clock, events, watcher, summary, stop };
}

const watchListCall = {
  sendInitialEvents: true,
  resourceVersionMatch: 'NotOlderThan',
  allowWatchBookmarks: true,
  timeoutSeconds: 300,
};

test('watch-list: the first sync is one watch with sendInitialEvents, done at the initial-events-end bookmark, and the same stream goes on with changes', async () => {
  const lw = new FakeListerWatcher([cm('a'), cm('b'), cm('c')], { watchList: 'supported' });
  const r = run(lw);
  await r.clock.advance(0);
  assert.deepEqual(lw.listCalls, [], 'no list request at all');
  assert.deepEqual(lw.watchCalls, [watchListCall]);
  assert.deepEqual(r.summary(), ['LIST_BEGIN', 'PAGE:3', 'LIST_DONE']);
  const done = r.events.at(-1) as Extract<WatcherEvent<KubeObject>, { type: 'LIST_DONE' }>;
  assert.equal(done.resourceVersion, lw.resourceVersion, 'the sync ends at the bookmark’s resourceVersion');
  assert.equal(r.watcher.health().listMode, 'watch-list');
  assert.equal(r.watcher.health().synced, true);
  assert.equal(r.watcher.health().state, 'watching');

  lw.create(cm('d'));
  lw.delete('ns/a');
  await r.clock.advance(0);
  assert.deepEqual(r.summary().slice(3), ['ADDED:d', 'DELETED:a']);
  assert.equal(lw.watchCalls.length, 1, 'changes arrive on the stream that synced');
  await r.stop();
});

test('watch-list: initial events are handed to the store in pages of pageSize', async () => {
  const lw = new FakeListerWatcher(
    ['a', 'b', 'c', 'd', 'e'].map((n) => cm(n)),
    { watchList: 'supported' },
  );
  const r = run(lw, { pageSize: 2 });
  await r.clock.advance(0);
  assert.deepEqual(r.summary(), ['LIST_BEGIN', 'PAGE:2', 'PAGE:2', 'PAGE:1', 'LIST_DONE']);
  await r.stop();
});

test('watch-list: a server that rejects it (422, as before Kubernetes 1.27) gets list+watch at once and is never asked again, relists included', async () => {
  const lw = new FakeListerWatcher([cm('a')], { watchList: 'rejected' });
  const r = run(lw, { pageSize: 7 });
  await r.clock.advance(0);
  assert.deepEqual(lw.watchCalls[0], watchListCall);
  assert.deepEqual(lw.listCalls, [{ limit: 7, resourceVersion: '0' }]);
  assert.deepEqual(r.summary(), ['LIST_BEGIN', 'PAGE:1', 'LIST_DONE'], 'the rejected attempt emitted nothing');
  const h = r.watcher.health();
  assert.equal(h.listMode, 'list');
  assert.equal(h.restarts, 0, 'a rejection is a capability answer, not a failure');
  assert.equal(h.lists, 1);

  lw.compact();
  r.events.length = 0;
  lw.breakWatches(gone());
  await r.clock.advance(0);
  assert.deepEqual(r.summary(), ['LIST_BEGIN', 'PAGE:1', 'LIST_DONE']);
  assert.equal(
    lw.watchCalls.filter((c) => c.sendInitialEvents).length,
    1,
    'only the very first request was a watch-list',
  );
  assert.deepEqual(
    lw.listCalls.at(-1),
    { limit: 7, resourceVersion: undefined },
    'the relist after 410 is a quorum list',
  );
  await r.stop();
});

test('watch-list: another failure before the bookmark falls back to one list+watch; the next sync (after a 410) tries watch-list again', async () => {
  const lw = new FakeListerWatcher([cm('a')], { watchList: 'supported' });
  lw.failNext('watch', apiError(500));
  const r = run(lw);
  await r.clock.advance(0);
  assert.equal(lw.listCalls.length, 1, 'fell back to a list without waiting');
  assert.equal(r.watcher.health().listMode, 'list');
  assert.equal(r.watcher.health().synced, true);

  lw.compact();
  lw.breakWatches(gone());
  await r.clock.advance(0);
  assert.equal(lw.listCalls.length, 1, 'no second list');
  assert.deepEqual(lw.watchCalls.at(-1), watchListCall);
  assert.equal(r.watcher.health().listMode, 'watch-list');
  await r.stop();
});

test("watch-list: a 429 (the API server's storage still initializing, as 1.36 answers right after a start) asks the watch-list again after the backoff instead of listing", async () => {
  const lw = new FakeListerWatcher([cm('a')], { watchList: 'supported' });
  lw.failNext(
    'watch',
    new ApiError({ status: 429, reason: 'TooManyRequests', message: 'storage is (re)initializing' }),
    2,
  );
  const r = run(lw);
  await r.clock.advance(0);
  assert.deepEqual(lw.listCalls, [], 'no list while the server is not ready');
  assert.equal(r.clock.nextTimerInMs(), 800, 'backs off');
  await r.clock.advance(800 + 1600);
  assert.deepEqual(lw.listCalls, [], 'still no list');
  assert.deepEqual(lw.watchCalls, [watchListCall, watchListCall, watchListCall]);
  const h = r.watcher.health();
  assert.equal(h.synced, true);
  assert.equal(h.listMode, 'watch-list');
  assert.equal(h.lists, 1, 'the refused attempts emitted nothing');
  assert.equal(h.restarts, 2);
  await r.stop();
});

test('watch-list: a refused connection asks the watch-list again after the backoff instead of listing', async () => {
  const lw = new FakeListerWatcher([cm('a')], { watchList: 'supported' });
  lw.failNext(
    'watch',
    new TransportError('WATCH', '/api/v1/configmaps', 'connect failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    }),
  );
  const r = run(lw);
  await r.clock.advance(800);
  assert.deepEqual(lw.listCalls, []);
  assert.deepEqual(lw.watchCalls, [watchListCall, watchListCall]);
  assert.equal(r.watcher.health().listMode, 'watch-list');
  await r.stop();
});

test('watch-list: after the bookmark, a broken stream resumes as an ordinary watch from the last resourceVersion (no relist)', async () => {
  const lw = new FakeListerWatcher([cm('a')], { watchList: 'supported' });
  const r = run(lw);
  await r.clock.advance(0);
  lw.create(cm('b'));
  await r.clock.advance(0);
  const rv = lw.resourceVersion;
  lw.breakWatches(apiError(500));
  await r.clock.advance(800);
  assert.equal(lw.watchCalls.length, 2);
  assert.equal(lw.watchCalls[1]?.resourceVersion, rv);
  assert.equal(lw.watchCalls[1]?.sendInitialEvents, undefined);
  assert.deepEqual(lw.listCalls, []);
  assert.equal(r.watcher.health().lists, 1);
  await r.stop();
});

test('watch-list: a stream that ends before the initial-events-end bookmark does not count as synced; a list+watch sync follows', async () => {
  const inner = new FakeListerWatcher([cm('a'), cm('b')]);
  let watchLists = 0;
  const lw: ListerWatcher<KubeObject> = {
    watchList: true,
    list: (opts) => inner.list(opts),
    watch(opts) {
      if (!opts.sendInitialEvents) return inner.watch(opts);
      watchLists++;
      // A server that streams some state and hangs up, never sending the bookmark.
      return (async function* (): AsyncGenerator<ListerWatchEvent<KubeObject>> {
        yield { type: 'ADDED', object: cm('a') };
        yield { type: 'BOOKMARK', object: { metadata: { resourceVersion: '1' } } }; // not the end marker
      })();
    },
  };
  const r = run(lw);
  await r.clock.advance(0);
  assert.equal(watchLists, 1);
  assert.deepEqual(
    r.summary(),
    ['LIST_BEGIN', 'LIST_BEGIN', 'PAGE:2', 'LIST_DONE'],
    'the unfinished watch-list is abandoned by a new LIST_BEGIN',
  );
  assert.equal(r.watcher.health().lastError?.code, 'ERR_WATCH_LIST_PROTOCOL');
  assert.equal(r.watcher.health().listMode, 'list');
  await r.stop();
});

test('watch-list: watchList: false keeps list+watch even where the server has watch-list', async () => {
  const lw = new FakeListerWatcher([cm('a')], { watchList: 'supported' });
  const r = run(lw, { watchList: false });
  await r.clock.advance(0);
  assert.equal(lw.listCalls.length, 1);
  assert.ok(lw.watchCalls.every((c) => !c.sendInitialEvents));
  await r.stop();
});

test('watch-list: an informer synced by watch-list holds the objects and, after a 410, the watch-list relist emits the delete it missed', async () => {
  const lw = new FakeListerWatcher([cm('a'), cm('b')], { watchList: 'supported' });
  const clock = new FakeClock(0);
  const informer = new SharedInformer(lw, { clock, random: () => 0 });
  const seen: string[] = [];
  informer.addEventHandler({
    add: (o) => void seen.push(`add:${o.metadata?.name}`),
    update: (_o, n) => void seen.push(`update:${n.metadata?.name}`),
    delete: (o) => void seen.push(`delete:${('lastKnown' in o ? o.lastKnown : o).metadata?.name}`),
  });
  const ac = new AbortController();
  const done = informer.start(ac.signal);
  await clock.advance(0);
  assert.equal(informer.hasSynced(), true);
  assert.deepEqual(
    informer.reader
      .list()
      .map((o) => o.metadata?.name)
      .sort(),
    ['a', 'b'],
  );

  // While the watch is cut and history compacted away, b is deleted: only a relist can tell.
  lw.silenceWatches();
  lw.delete('ns/b');
  lw.compact();
  lw.breakWatches(gone());
  await clock.advance(0);
  await informer.whenHandlersIdle();
  assert.deepEqual(
    informer.reader.list().map((o) => o.metadata?.name),
    ['a'],
  );
  assert.ok(seen.includes('delete:b'), `delete:b delivered (seen ${seen.join(', ')})`);
  assert.equal(lw.watchCalls.filter((c) => c.sendInitialEvents).length, 2);
  assert.deepEqual(lw.listCalls, []);
  ac.abort();
  await done;
});

test('watch-list: the end marker is the annotation k8s.io/initial-events-end', () => {
  assert.equal(INITIAL_EVENTS_END_ANNOTATION, 'k8s.io/initial-events-end');
});

test('watch-list: a rejecting server (1.20) is logged once per logger, at debug, in words without the 422 text (issue 23)', async () => {
  const lines: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
  const logger: Logger = {
    debug: (obj, msg) => void lines.push({ level: 'debug', obj, msg }),
    info: (obj, msg) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void lines.push({ level: 'error', obj, msg }),
    child: () => logger,
  };
  const first = run(new FakeListerWatcher([cm('a')], { watchList: 'rejected' }), { logger, name: 'configmaps' });
  const second = run(new FakeListerWatcher([cm('b')], { watchList: 'rejected' }), { logger, name: 'secrets' });
  await first.clock.advance(0);
  await second.clock.advance(0);
  assert.equal(first.watcher.health().listMode, 'list');
  assert.equal(second.watcher.health().listMode, 'list');
  const about = lines.filter((l) =>
    /watch-list|422|Forbidden|resourceVersionMatch/.test(`${l.msg ?? ''} ${JSON.stringify(l.obj)}`),
  );
  assert.deepEqual(
    about.map((l) => [l.level, l.msg]),
    [['debug', 'the API server does not support watch-list; using list+watch']],
  );
  await first.stop();
  await second.stop();
});
