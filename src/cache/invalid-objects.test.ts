import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock } from '../core/fake-clock.js';
import type { Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import { SharedInformer } from './informer.js';
import type { ListerListPage, ListerWatcher, ListerWatchEvent } from './lister-watcher.js';
import { Store, type StoreDelta } from './store.js';

interface Cm extends KubeObject {
  data?: Record<string, string>;
}

const cm = (name: string, v = '1', extra: Record<string, string> = {}): Cm => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: v },
  data: { v, ...extra },
});
/** No name, and a secret-looking payload that must never reach a log line. */
const nameless = (uid = 'uid-unknown'): Cm => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'ns', uid },
  data: { password: 'hunter2' },
});

function recordingLogger(lines: string[]): Logger {
  const log = (obj: Record<string, unknown>, msg?: string): void =>
    void lines.push(JSON.stringify(obj) + ' ' + (msg ?? ''));
  const l: Logger = { debug: log, info: log, warn: log, error: log, child: () => l };
  return l;
}

const summary = (deltas: readonly StoreDelta<Cm>[]): string[] => deltas.map((d) => `${d.type}:${d.key}`);

function relist(store: Store<Cm>, ...pages: Cm[][]): string[] {
  const r = store.beginReplace();
  const out: StoreDelta<Cm>[] = [];
  for (const p of pages) out.push(...r.addPage(p));
  out.push(...r.commit());
  return summary(out);
}

test('one malformed list item is skipped and counted; the rest of its page is stored (regression: a, <no name>, b, c stored only a)', () => {
  const lines: string[] = [];
  const store = new Store<Cm>({ logger: recordingLogger(lines) });
  assert.deepEqual(
    relist(store, [cm('a'), nameless(), cm('b'), null as unknown as Cm, 42 as unknown as Cm, cm('c')]),
    ['ns/a', 'ns/b', 'ns/c'].map((k) => `add:${k}`),
  );
  assert.deepEqual(store.keys().sort(), ['ns/a', 'ns/b', 'ns/c']);
  assert.equal(store.invalidObjects, 3);
  assert.ok(lines.some((l) => l.includes('"reason":"no-name"') && l.includes('"source":"list"')));
  assert.ok(lines.some((l) => l.includes('"reason":"not-an-object"')));
  assert.ok(!lines.join('\n').includes('hunter2'), 'the item content is never logged');
});

test('a relist whose new version of an object is malformed keeps the stored version and reports no delete', () => {
  const throwing = (o: Cm): Cm => {
    if (o.data?.poison) throw new Error(`transform failed on ${JSON.stringify(o)}`);
    return o;
  };
  const lines: string[] = [];
  const store = new Store<Cm>({ transform: throwing, logger: recordingLogger(lines) });
  relist(store, [cm('a'), cm('b'), cm('c')]);
  // b's new version makes the transform throw (key known); c's has lost its name but keeps its uid.
  const c2 = { ...nameless('uid-c') };
  assert.deepEqual(relist(store, [cm('a', '2'), cm('b', '2', { poison: 'x' }), c2]), ['update:ns/a']);
  assert.deepEqual(store.keys().sort(), ['ns/a', 'ns/b', 'ns/c']);
  assert.equal(store.get('ns/b')?.data?.v, '1', 'the last good version of b is kept');
  assert.equal(store.invalidObjects, 2);
  assert.ok(lines.some((l) => l.includes('"reason":"transform-threw"') && l.includes('"key":"ns/b"')));
  assert.ok(!lines.join('\n').includes('poison'), 'not even the transform error (which quotes the object) is logged');
});

test('a relist with an item that cannot be identified withholds its deletions; the next clean relist applies them', () => {
  for (const relistMode of ['atomic', 'incremental'] as const) {
    const store = new Store<Cm>({ relistMode });
    relist(store, [cm('a'), cm('b'), cm('c')]);
    // b and c are missing, and an item with no name and an unknown uid arrived: it may be either.
    assert.deepEqual(relist(store, [cm('a', '2'), nameless('uid-new')]), ['update:ns/a'], relistMode);
    assert.deepEqual(store.keys().sort(), ['ns/a', 'ns/b', 'ns/c'], relistMode);
    assert.deepEqual(relist(store, [cm('a', '2')]), ['delete:ns/b', 'delete:ns/c'], relistMode);
  }
});

test('watch events with a malformed object are skipped and counted; a DELETED that names its object still deletes it', () => {
  const store = new Store<Cm>({ transform: (o) => (o.data?.poison ? assert.fail('poison') : o) });
  relist(store, [cm('a'), cm('b')]);
  assert.equal(store.upsert(nameless()), undefined);
  assert.equal(store.upsert({ metadata: { name: 'x', namespace: 7 } } as unknown as Cm), undefined);
  assert.equal(store.upsert(cm('a', '2', { poison: 'x' })), undefined);
  assert.equal(store.get('ns/a')?.data?.v, '1');
  assert.equal(store.delete(nameless('uid-b')), undefined, 'a nameless DELETED removes nothing');
  const d = store.delete(cm('b', '3', { poison: 'x' }));
  assert.equal(d?.type, 'delete');
  assert.equal(store.has('ns/b'), false);
  assert.equal(store.invalidObjects, 5);
});

/** A lister-watcher that serves fixed pages and then a watch with fixed events that stays open. */
function scripted(pages: Cm[][], events: ListerWatchEvent<Cm>[] = []): ListerWatcher<Cm> {
  return {
    list(opts): Promise<ListerListPage<Cm>> {
      const i = opts.continue ? Number(opts.continue) : 0;
      return Promise.resolve({
        items: pages[i]!,
        resourceVersion: '10',
        ...(i + 1 < pages.length ? { continue: String(i + 1) } : {}),
      });
    },
    watch(opts) {
      return (async function* () {
        for (const e of events.splice(0)) yield e;
        await new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve(), { once: true }));
      })();
    },
  };
}

test('an informer whose list has a malformed item syncs with every other item and counts it on its registry', async () => {
  const registry = new Registry();
  const clock = new FakeClock(0);
  const events: ListerWatchEvent<Cm>[] = [
    { type: 'ADDED', object: nameless() },
    // The decoder only passes objects, so a watch object is at worst one without metadata.
    { type: 'MODIFIED', object: { kind: 'ConfigMap' } as Cm },
    { type: 'ADDED', object: cm('d') },
  ];
  const lines: string[] = [];
  const informer = new SharedInformer<Cm>(
    scripted(
      [
        [cm('a'), nameless()],
        [cm('b'), cm('c')],
      ],
      events,
    ),
    { name: 'cms', clock, registry, random: () => 0, logger: recordingLogger(lines) },
  );
  const seen: string[] = [];
  informer.addEventHandler({ add: (o) => void seen.push(o.metadata!.name!) });
  const ac = new AbortController();
  const done = informer.start(ac.signal);
  await informer.waitForSync(ac.signal);
  for (let i = 0; i < 5; i++) await clock.advance(0);
  await informer.whenHandlersIdle();
  assert.equal(informer.hasSynced(), true);
  assert.deepEqual(informer.reader.keys().sort(), ['ns/a', 'ns/b', 'ns/c', 'ns/d']);
  assert.deepEqual(seen.sort(), ['a', 'b', 'c', 'd']);
  const text = await registry.metrics();
  assert.match(text, /cache_invalid_objects_total\{informer="cms",source="list"\} 1/);
  assert.match(text, /cache_invalid_objects_total\{informer="cms",source="watch"\} 2/);
  assert.ok(!lines.join('\n').includes('hunter2'));
  ac.abort();
  await done;
});
