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
import { kinds } from '../client/kinds.js';
import type { ObjectOf } from '../client/kind.js';
import { IndexError } from './errors.js';

type Job = ObjectOf<typeof kinds.Job>;

const cm = (name: string, ns: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, labels },
});
const node = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
const job = (name: string, ns: string, owner: string): KubeObject =>
  ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: ns,
      ownerReferences: [
        { apiVersion: 'batch/v1', kind: 'CronJob', name: owner, uid: `${ns}-${owner}`, controller: true },
      ],
    },
    spec: { backoffLimit: 2, template: {} },
  }) as KubeObject;
const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const NODE = { apiVersion: 'v1', kind: 'Node' } as const;

function setup(namespaces?: string[]) {
  const clock = new FakeClock(0);
  const server: Record<string, KubeObject[]> = {
    ConfigMap: [cm('a', 'x', { app: 'web' }), cm('b', 'x'), cm('c', 'y', { app: 'web' }), cm('d', 'z')],
    Node: [node('n1')],
    Job: [
      job('nightly-1', 'x', 'nightly'),
      job('nightly-2', 'x', 'nightly'),
      job('nightly-1', 'y', 'nightly'),
      job('other', 'y', 'hourly'),
    ],
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
  const cache = new InformerCache(factory, {
    namespaces,
    isNamespaced: (t) => t.kind !== 'Node',
    syncTimeoutMs: 5_000,
  });
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
  assert.deepEqual(
    await s.cache.list(CM, { labelSelector: 'app=web' }).then((xs) => xs.map((x) => x.metadata?.name).sort()),
    ['a', 'c'],
  );
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
  assert.deepEqual(
    (await s.cache.list(CM, { namespace: 'y' })).map((o) => o.metadata?.name),
    ['c'],
  );
  await assert.rejects(s.cache.get(CM, { namespace: 'z', name: 'd' }), NamespaceNotCachedError);
  await assert.rejects(s.cache.list(CM, { namespace: 'z' }), NamespaceNotCachedError);
  const nodes = s.cache.list(NODE);
  await s.clock.advance(0);
  assert.deepEqual(
    (await nodes).map((o) => o.metadata?.name),
    ['n1'],
    'cluster-scoped kinds are watched cluster-wide',
  );
  assert.equal(s.specs.filter((sp) => sp.kind === 'Node')[0]?.namespace, undefined);
  s.ac.abort();
  await run;
});

test('reads remember the informer they resolve to, per kind, metadataOnly and namespace scope, and still follow a kind whose scope changes', async () => {
  const clock = new FakeClock(0);
  const factory = new InformerFactory(() => new FakeListerWatcher([cm('a', 'x'), cm('c', 'y')]), {
    clock,
    random: () => 0,
  });
  const lookups: InformerSpec[] = [];
  const informerFor = factory.informerFor.bind(factory);
  factory.informerFor = ((spec: InformerSpec) => (lookups.push(spec), informerFor(spec))) as typeof factory.informerFor;
  let namespaced = true;
  const cache = new InformerCache(factory, { namespaces: ['x', 'y'], isNamespaced: () => namespaced });
  const ac = new AbortController();
  const run = factory.start(ac.signal);
  const read = async (ref: { namespace: string; name: string }, metadataOnly = false) => {
    const got = cache.get({ ...CM, metadataOnly }, ref);
    await clock.advance(0);
    return (await got).metadata?.name;
  };
  assert.equal(await read({ namespace: 'x', name: 'a' }), 'a');
  assert.equal(await read({ namespace: 'x', name: 'a' }), 'a');
  assert.equal(await read({ namespace: 'y', name: 'c' }), 'c');
  assert.equal(await read({ namespace: 'x', name: 'a' }, true), 'a');
  assert.deepEqual(
    lookups.map((sp) => [sp.namespace, sp.metadataOnly ?? false]),
    [
      ['x', false],
      ['y', false],
      ['x', true],
    ],
    'one factory lookup per distinct read scope',
  );
  namespaced = false; // the REST mapper learned the kind is cluster-scoped
  assert.equal(await read({ namespace: 'x', name: 'a' }), 'a');
  assert.equal(lookups.at(-1)?.namespace, undefined, 'the cluster-wide informer, not the remembered namespaced one');
  ac.abort();
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

// ---- field indexes: the contract docs/indexes.md states ------------------------------------------

/** The tutorial's index: Jobs by the name of the CronJob that controls them. */
const byOwner = (j: Job): string[] =>
  (j.metadata?.ownerReferences ?? []).filter((r) => r.controller && r.kind === 'CronJob').map((r) => r.name);

test('byIndex(kinds.Job, …) is typed Job[], and addIndex hands the index function a Job', async () => {
  const s = setup();
  // The parameter is typed by the kind: no annotation, no cast.
  s.cache.addIndex(kinds.Job, 'owner', (j) => (j.spec?.backoffLimit !== undefined ? byOwner(j) : []));
  const run = s.factory.start(s.ac.signal);
  const found = s.cache.byIndex(kinds.Job, 'owner', 'nightly');
  await s.clock.advance(0);
  const jobs = await found;
  // Type-level: these lines compile only because `jobs` is Job[] (npm run typecheck checks them).
  const typed: Job[] = jobs;
  const limit: number | undefined = typed[0]?.spec?.backoffLimit;
  assert.equal(limit, 2);
  // @ts-expect-error a Job has no `data`: the result is not a loose KubeObject
  assert.equal(jobs[0]?.data, undefined);
  // A bare { apiVersion, kind } names no type: KubeObject, as before.
  const loose: KubeObject[] = await s.cache.byIndex({ apiVersion: 'batch/v1', kind: 'Job' }, 'owner', 'hourly');
  assert.equal(loose.length, 1);
  s.ac.abort();
  await run;
});

test('index values are not per namespace: byIndex returns every namespace’s objects under a value; { namespace } narrows', async () => {
  for (const namespaces of [undefined, ['x', 'y']]) {
    const s = setup(namespaces);
    s.cache.addIndex(kinds.Job, 'owner', byOwner);
    const run = s.factory.start(s.ac.signal);
    const all = s.cache.byIndex(kinds.Job, 'owner', 'nightly');
    await s.clock.advance(0);
    const key = (j: Job) => `${j.metadata?.namespace}/${j.metadata?.name}`;
    assert.deepEqual(
      (await all).map(key).sort(),
      ['x/nightly-1', 'x/nightly-2', 'y/nightly-1'],
      `namespaces: ${String(namespaces)}`,
    );
    assert.deepEqual((await s.cache.byIndex(kinds.Job, 'owner', 'nightly', { namespace: 'y' })).map(key), [
      'y/nightly-1',
    ]);
    assert.deepEqual(
      await s.cache
        .byIndex(kinds.Job, 'owner', 'nightly', { namespace: 'elsewhere' })
        .catch((e: unknown) => (e instanceof NamespaceNotCachedError ? 'not cached' : e)),
      namespaces ? 'not cached' : [],
    );
    s.ac.abort();
    await run;
  }
});

test('an index need not be added before start: added after the first sync, it is built at once from what the cache holds', async () => {
  const s = setup();
  const run = s.factory.start(s.ac.signal);
  const listed = s.cache.list(kinds.Job);
  await s.clock.advance(0);
  assert.equal((await listed).length, 4, 'synced before the index exists');
  s.cache.addIndex(kinds.Job, 'owner', byOwner);
  assert.deepEqual(
    (await s.cache.byIndex(kinds.Job, 'owner', 'hourly')).map((j) => j.metadata?.name),
    ['other'],
  );
  s.ac.abort();
  await run;
});

test('an index is one function per name: the same again is a no-op, a different one throws IndexError, as does reading an index never added', async () => {
  const s = setup();
  s.cache.addIndex(kinds.Job, 'owner', byOwner);
  s.cache.addIndex(kinds.Job, 'owner', byOwner);
  assert.throws(
    () => s.cache.addIndex(kinds.Job, 'owner', () => []),
    (e: unknown) =>
      e instanceof IndexError && /index "owner": already registered with a different function/.test(e.message),
  );
  const run = s.factory.start(s.ac.signal);
  const missing = assert.rejects(
    s.cache.byIndex(kinds.Job, 'no-such-index', 'x'),
    (e: unknown) => e instanceof IndexError && /index "no-such-index": no such index/.test(e.message),
  );
  await s.clock.advance(0);
  await missing;
  s.ac.abort();
  await run;
});

test('byIndex before the cache runs fails fast with CacheNotStartedError (it would wait for a sync that never comes)', async () => {
  const s = setup();
  s.cache.addIndex(kinds.Job, 'owner', byOwner);
  await assert.rejects(s.cache.byIndex(kinds.Job, 'owner', 'nightly'), CacheNotStartedError);
});
