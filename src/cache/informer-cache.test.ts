import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { ignoreNotFound, isNotFound } from '../client/api-error.js';
import { InformerFactory } from './informer-factory.js';
import { InformerCache, NamespaceNotCachedError } from './informer-cache.js';
import type { InformerSpec } from './informer-spec.js';
import { FakeListerWatcher } from './testing/fake-lister-watcher.js';
import { CacheNotStartedError, CacheSyncTimeoutError } from './errors.js';
import { AbortedError } from '../core/errors.js';

const cm = (name: string, ns: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels } });
const node = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const NODE = { apiVersion: 'v1', kind: 'Node' } as const;

function setup(namespaces?: string[]) {
  const clock = new FakeClock(0);
  const server: Record<string, KubeObject[]> = {
    ConfigMap: [cm('a', 'x', { app: 'web' }), cm('b', 'x'), cm('c', 'y', { app: 'web' }), cm('d', 'z')],
    Node: [node('n1')],
  };
  const specs: InformerSpec[] = [];
  const factory = new InformerFactory(
    (spec) => {
      specs.push(spec);
      const all = server[spec.kind] ?? [];
      // Scoped like the API server would scope a namespaced list/watch.
      return new FakeListerWatcher(spec.namespace ? all.filter((o) => o.metadata?.namespace === spec.namespace) : all);
    },
    { clock, random: () => 0 },
  );
  const cache = new InformerCache(factory, { namespaces, isNamespaced: (t) => t.kind !== 'Node', syncTimeoutMs: 5_000 });
  const ac = new AbortController();
  return { clock, specs, factory, cache, ac };
}

test('the first read of a kind starts its informer lazily and waits for its sync; later reads share it', async () => {
  const s = setup();
  const run = s.factory.start(s.ac.signal);
  assert.equal(s.specs.length, 0);
  const got = s.cache.get(CM, { namespace: 'x', name: 'a' });
  await s.clock.advance(0);
  assert.equal((await got).metadata?.name, 'a');
  assert.deepEqual(await s.cache.list(CM, { labelSelector: 'app=web' }).then((xs) => xs.map((x) => x.metadata?.name).sort()), ['a', 'c']);
  assert.equal(s.specs.length, 1, 'one informer for the kind');
  s.ac.abort();
  await run;
});

test('a missing object is the same 404 ApiError the API server gives, so ignoreNotFound works', async () => {
  const s = setup();
  const run = s.factory.start(s.ac.signal);
  const missing = assert.rejects(s.cache.get(CM, { namespace: 'x', name: 'nope' }), (e: unknown) => isNotFound(e));
  await s.clock.advance(0);
  await missing;
  assert.equal(await ignoreNotFound(s.cache.get(CM, { namespace: 'x', name: 'nope' })), undefined);
  s.ac.abort();
  await run;
});

test('reading from a cache that was never started fails fast instead of hanging', async () => {
  const s = setup();
  await assert.rejects(s.cache.get(CM, { namespace: 'x', name: 'a' }), CacheNotStartedError);
});

test('a first read that cannot sync gives up after the sync timeout, or when its signal aborts', async () => {
  const clock = new FakeClock(0);
  const lw = new FakeListerWatcher<KubeObject>([]);
  lw.failNext('list', new Error('down'), 100);
  const factory = new InformerFactory(() => lw, { clock });
  const stuck = new InformerCache(factory, { syncTimeoutMs: 5_000 });
  const ac = new AbortController();
  const run = factory.start(ac.signal);
  const timedOut = assert.rejects(stuck.get(CM, { namespace: 'x', name: 'a' }), CacheSyncTimeoutError);
  const reqAc = new AbortController();
  const aborted = assert.rejects(stuck.list(CM, { signal: reqAc.signal }), AbortedError);
  reqAc.abort();
  await aborted;
  await clock.advance(5_000);
  await timedOut;
  ac.abort();
  await run;
});

test('a multi-namespace cache runs one informer per namespace, merges lists, and refuses other namespaces', async () => {
  const s = setup(['x', 'y']);
  const run = s.factory.start(s.ac.signal);
  const all = s.cache.list(CM);
  await s.clock.advance(0);
  assert.deepEqual((await all).map((o) => o.metadata?.name).sort(), ['a', 'b', 'c']);
  assert.deepEqual(s.specs.map((sp) => sp.namespace).sort(), ['x', 'y']);
  assert.deepEqual((await s.cache.list(CM, { namespace: 'y' })).map((o) => o.metadata?.name), ['c']);
  await assert.rejects(s.cache.get(CM, { namespace: 'z', name: 'd' }), NamespaceNotCachedError);
  await assert.rejects(s.cache.list(CM, { namespace: 'z' }), NamespaceNotCachedError);
  const nodes = s.cache.list(NODE);
  await s.clock.advance(0);
  assert.deepEqual((await nodes).map((o) => o.metadata?.name), ['n1'], 'cluster-scoped kinds are watched cluster-wide');
  assert.equal(s.specs.filter((sp) => sp.kind === 'Node')[0]?.namespace, undefined);
  s.ac.abort();
  await run;
});

test('indexes added through the cache serve byIndex across every namespace informer', async () => {
  const s = setup(['x', 'y']);
  s.cache.addIndex(CM, 'app', (o: KubeObject) => (o.metadata?.labels?.app ? [o.metadata.labels.app] : []));
  const run = s.factory.start(s.ac.signal);
  const web = s.cache.byIndex(CM, 'app', 'web');
  await s.clock.advance(0);
  assert.deepEqual((await web).map((o) => o.metadata?.name).sort(), ['a', 'c']);
  s.ac.abort();
  await run;
});
