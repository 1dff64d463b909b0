import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import { ApiError, isConflict, isGone, isNotFound } from '../../client/api-error.js';
import { isNoKindMatch } from '../../client/discovery.js';
import type { Client } from '../../client/client.js';
import type { WatchEvent } from '../../client/watch-decoder.js';
import { AbortedError } from '../../core/errors.js';
import { FakeClock, flushMicrotasks } from '../../core/fake-clock.js';
import { FakeClient } from './fake-client.js';
import { conflictFor, everyNth, isStatusWrite, isWrite, type FakeRequest } from './requests.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const DEPLOY = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;

interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    generation?: number;
    finalizers?: string[];
  };
  spec?: { size: number };
  status?: { observedGeneration?: number };
}

function withWidgets(options: ConstructorParameters<typeof FakeClient>[0] = {}): FakeClient {
  const fake = new FakeClient(options);
  fake.registerKind({ ...WIDGET, plural: 'widgets', namespaced: true, statusSubresource: true });
  return fake;
}

function cm(name: string, data: Record<string, string> = {}, namespace = 'default'): ConfigMap {
  return { ...CM, metadata: { name, namespace }, data };
}

/** Pulls events from an iterator one at a time, so a test decides exactly when to read. */
function reader<T>(events: AsyncIterable<WatchEvent<T>>): {
  next: () => Promise<WatchEvent<T> | undefined>;
  close: () => Promise<void>;
} {
  const it = events[Symbol.asyncIterator]();
  return {
    next: async () => {
      const r = await it.next();
      return r.done ? undefined : r.value;
    },
    close: async () => {
      await it.return?.();
    },
  };
}

test('FakeClient is assignable to the Client interface', () => {
  const client: Client = new FakeClient();
  assert.equal(typeof client.watch, 'function');
});

test('an interceptor can fail every third status write with the server’s 409 Conflict', async () => {
  const fake = withWidgets();
  fake.intercept(everyNth(3, isStatusWrite, conflictFor));
  let w = await fake.create<Widget>({ ...WIDGET, metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
  const outcomes: string[] = [];
  for (let i = 1; i <= 6; i++) {
    try {
      w = await fake.updateStatus<Widget>({ ...w, status: { observedGeneration: i } });
      outcomes.push('ok');
    } catch (err) {
      assert.ok(isConflict(err));
      assert.deepEqual((err as ApiError).details, { name: 'w', group: 'example.com', kind: 'widgets' });
      outcomes.push('409');
    }
  }
  assert.deepEqual(outcomes, ['ok', 'ok', '409', 'ok', 'ok', '409']);
  assert.equal(
    (await fake.get<Widget>(WIDGET, 'w', { namespace: 'default' })).status?.observedGeneration,
    5,
    'failed writes changed nothing',
  );
});

test('an interceptor sees verb, resource, namespace, name and subresource, and removing it stops it', async () => {
  const fake = withWidgets();
  const seen: FakeRequest[] = [];
  const remove = fake.intercept((req) => {
    seen.push(req);
    return req.verb === 'delete' ? new ApiError({ status: 503, message: 'injected' }) : undefined;
  });
  await fake.create(cm('a'));
  await fake.patchStatus(WIDGET, 'nope', { status: {} }, { namespace: 'ns' }).catch(() => undefined);
  await assert.rejects(
    fake.delete(CM, 'a', { namespace: 'default' }),
    (e: unknown) => e instanceof ApiError && e.status === 503,
  );
  remove();
  await fake.delete(CM, 'a', { namespace: 'default' });
  assert.deepEqual(
    seen.map((r) => [r.verb, r.resource, r.namespace, r.name, r.subresource, r.patchType]),
    [
      ['create', 'configmaps', 'default', 'a', undefined, undefined],
      ['patch', 'widgets', 'ns', 'nope', 'status', 'merge'],
      ['delete', 'configmaps', 'default', 'a', undefined, undefined],
    ],
  );
});

test('an async interceptor delays a request until it settles', async () => {
  const fake = new FakeClient({ objects: [cm('a', { k: 'v' })] });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  fake.intercept(async (req) => {
    if (req.verb === 'get') await gate;
    return undefined;
  });
  let done = false;
  const pending = fake.get<ConfigMap>(CM, 'a', { namespace: 'default' }).then((o) => {
    done = true;
    return o;
  });
  await flushMicrotasks();
  assert.equal(done, false);
  release();
  assert.equal((await pending).data?.k, 'v');
});

test('request counting shows a no-op reconcile made zero writes, and counts a write that changed nothing', async () => {
  const fake = new FakeClient({ objects: [cm('a', { k: 'v' })] });
  assert.equal(fake.countRequests(), 0, 'seeded objects are not requests');
  // A level-triggered reconcile that finds the world as desired reads and writes nothing.
  const reconcile = async (desired: string): Promise<void> => {
    const cur = await fake.get<ConfigMap>(CM, 'a', { namespace: 'default' });
    if (cur.data?.k !== desired) await fake.update<ConfigMap>({ ...cur, data: { k: desired } });
  };
  await reconcile('v');
  assert.equal(fake.countRequests(isWrite), 0);
  assert.equal(fake.countRequests({ verb: 'get' }), 1);
  await reconcile('w');
  assert.equal(fake.countRequests(isWrite), 1);
  const before = fake.resourceVersion;
  const cur = await fake.get<ConfigMap>(CM, 'a', { namespace: 'default' });
  await fake.update<ConfigMap>(cur);
  assert.equal(fake.resourceVersion, before, 'the store did not change…');
  assert.equal(fake.countRequests(isWrite), 2, '…but the empty write is still traffic');
  assert.equal(fake.peek<ConfigMap>(CM, 'a', 'default')?.data?.k, 'w', 'peek reads without a request');
  assert.equal(fake.peek(CM, 'missing', 'default'), undefined);
  assert.equal(fake.countRequests(), 5);
  fake.clearRequests();
  assert.equal(fake.requests.length, 0);
});

test('the request log keeps a copy of what was sent', async () => {
  const fake = new FakeClient();
  const obj = cm('a', { k: '1' });
  await fake.create(obj);
  obj.data!.k = 'mutated later';
  assert.deepEqual((fake.requests[0]?.body as ConfigMap).data, { k: '1' });
});

test('aborting a watch ends its iterator with AbortedError and closes it', async () => {
  const fake = new FakeClient();
  const ac = new AbortController();
  const r = reader(fake.watch<ConfigMap>(CM, { namespace: 'default', signal: ac.signal }));
  await fake.create(cm('a'));
  assert.equal((await r.next())?.type, 'ADDED');
  assert.equal(fake.openWatches, 1);
  const next = r.next();
  ac.abort();
  await assert.rejects(next, AbortedError);
  assert.equal(fake.openWatches, 0);
});

test('a watch with an already-aborted signal fails at once', async () => {
  const fake = new FakeClient();
  const r = reader(fake.watch(CM, { signal: AbortSignal.abort() }));
  await assert.rejects(r.next(), AbortedError);
  assert.equal(fake.openWatches, 0);
});

test('leaving a watch loop early closes the watch', async () => {
  const fake = new FakeClient({ objects: [cm('a'), cm('b')] });
  for await (const e of fake.watch<ConfigMap>(CM, { namespace: 'default' })) {
    assert.equal(e.type, 'ADDED');
    break;
  }
  assert.equal(fake.openWatches, 0);
});

test('a watch ends when its timeoutSeconds pass on the injected clock', async () => {
  const clock = new FakeClock();
  const fake = new FakeClient({ clock });
  const r = reader(fake.watch(CM, { timeoutSeconds: 30 }));
  const ended = r.next();
  await flushMicrotasks();
  await clock.advance(29_999);
  assert.equal(fake.openWatches, 1);
  await clock.advance(1);
  assert.equal(await ended, undefined);
  assert.equal(fake.openWatches, 0);
});

test('bookmark() sends the current resourceVersion only to watches that asked for bookmarks', async () => {
  const fake = new FakeClient();
  const withBookmarks = reader(
    fake.watch(CM, { namespace: 'default', allowWatchBookmarks: true, resourceVersion: fake.resourceVersion }),
  );
  const without = reader(fake.watch(CM, { namespace: 'default', resourceVersion: fake.resourceVersion }));
  const first = withBookmarks.next();
  const other = without.next();
  await flushMicrotasks();
  fake.bookmark();
  const bookmark = await first;
  assert.equal(bookmark?.type, 'BOOKMARK');
  assert.equal(bookmark?.object.metadata?.resourceVersion, fake.resourceVersion);
  await fake.create(cm('a'));
  assert.equal((await other)?.type, 'ADDED', 'the first thing the other watch sees is the change');
  await withBookmarks.close();
  await without.close();
});

test('a watch from before the retained history window gets 410 Expired; one inside it resumes', async () => {
  const fake = new FakeClient({ watchHistoryLimit: 3 });
  const first = await fake.create(cm('a'));
  const rvs: string[] = [];
  for (let i = 0; i < 4; i++) rvs.push((await fake.create(cm(`b${i}`))).metadata!.resourceVersion!);
  await assert.rejects(
    reader(fake.watch(CM, { resourceVersion: first.metadata!.resourceVersion })).next(),
    (e: unknown) => {
      assert.ok(isGone(e));
      assert.equal((e as ApiError).reason, 'Expired');
      return true;
    },
  );
  const r = reader(fake.watch<ConfigMap>(CM, { resourceVersion: rvs[1] }));
  assert.deepEqual([(await r.next())?.object.metadata?.name, (await r.next())?.object.metadata?.name], ['b2', 'b3']);
  await r.close();
  fake.compact();
  await assert.rejects(
    reader(fake.watch(CM, { resourceVersion: rvs[2] })).next(),
    isGone,
    'compaction drops all history',
  );
  const now = reader(fake.watch<ConfigMap>(CM, { resourceVersion: fake.resourceVersion }));
  const next = now.next();
  await fake.create(cm('c'));
  assert.equal((await next)?.object.metadata?.name, 'c');
  await now.close();
});

test('a list restarts from the first page when its continue token expired', async () => {
  const fake = new FakeClient({ objects: ['a', 'b', 'c', 'd'].map((n) => cm(n)) });
  const pages: { restarted: boolean; names: string[] }[] = [];
  for await (const page of fake.listPages<ConfigMap>(CM, { namespace: 'default', limit: 2 })) {
    pages.push({ restarted: page.restarted, names: page.items.map((i) => i.metadata!.name!) });
    if (pages.length === 1) {
      await fake.create(cm('e'));
      fake.compact();
    }
  }
  assert.deepEqual(pages, [
    { restarted: false, names: ['a', 'b'] },
    { restarted: true, names: ['a', 'b'] },
    { restarted: false, names: ['c', 'd'] },
    { restarted: false, names: ['e'] },
  ]);
});

test('an unknown kind is a NoKindMatchError until registered, as with discovery', async () => {
  const fake = new FakeClient();
  await assert.rejects(fake.list(WIDGET), isNoKindMatch);
  fake.registerKind({ ...WIDGET, plural: 'widgets' });
  assert.deepEqual((await fake.list(WIDGET)).items, []);
});

test('creating a CustomResourceDefinition serves its kind', async () => {
  const fake = new FakeClient();
  await fake.create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'gadgets', kind: 'Gadget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', properties: { n: { type: 'integer' } } } },
            },
          },
        },
      ],
    },
  });
  const g = await fake.create<{
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace: string; generation?: number };
    spec: { n: number; extra?: string };
  }>({
    apiVersion: 'example.com/v1',
    kind: 'Gadget',
    metadata: { name: 'g', namespace: 'default' },
    spec: { n: 1, extra: 'pruned' },
  });
  assert.deepEqual([g.metadata.generation, g.spec], [1, { n: 1 }]);
});

test('a strategic merge patch merges a Deployment’s containers by name', async () => {
  const fake = new FakeClient();
  await fake.create<Deployment>({
    ...DEPLOY,
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        spec: {
          containers: [
            { name: 'app', image: 'app:1' },
            { name: 'side', image: 'side:1' },
          ],
        },
      },
    },
  });
  const patched = await fake.patch<Deployment>(
    DEPLOY,
    'web',
    { spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } } },
    { type: 'strategic', namespace: 'default' },
  );
  assert.deepEqual(
    patched.spec?.template.spec?.containers.map((c) => [c.name, c.image]),
    [
      ['app', 'app:2'],
      ['side', 'side:1'],
    ],
  );
  assert.equal(patched.metadata?.generation, 2);
});

test('Foreground and Orphan deletes leave their finalizer until the garbage collector runs', async () => {
  const fake = new FakeClient({ objects: [cm('f'), cm('o')] });
  const f = (await fake.delete<ConfigMap>(CM, 'f', {
    namespace: 'default',
    propagationPolicy: 'Foreground',
  })) as ConfigMap;
  const o = (await fake.delete<ConfigMap>(CM, 'o', { namespace: 'default', propagationPolicy: 'Orphan' })) as ConfigMap;
  assert.deepEqual([f.metadata?.finalizers, o.metadata?.finalizers], [['foregroundDeletion'], ['orphan']]);
  await fake.patch(CM, 'f', { metadata: { finalizers: null } }, { type: 'merge', namespace: 'default' });
  await assert.rejects(fake.get(CM, 'f', { namespace: 'default' }), isNotFound);
});

test('a dry-run write answers as a real one would but stores nothing and moves no resourceVersion', async () => {
  const fake = new FakeClient({ objects: [cm('a', { k: '1' })] });
  const rv = fake.resourceVersion;
  const a = await fake.get<ConfigMap>(CM, 'a', { namespace: 'default' });
  assert.equal((await fake.update<ConfigMap>({ ...a, data: { k: '2' } }, { dryRun: true })).data?.k, '2');
  assert.equal(
    (await fake.patch<ConfigMap>(CM, 'a', { data: { k: '3' } }, { type: 'merge', namespace: 'default', dryRun: true }))
      .data?.k,
    '3',
  );
  await fake.delete(CM, 'a', { namespace: 'default', dryRun: true });
  assert.equal((await fake.get<ConfigMap>(CM, 'a', { namespace: 'default' })).data?.k, '1');
  assert.equal(fake.resourceVersion, rv);
});

test('without requireNamespaces any namespace is accepted; with it, only existing ones', async () => {
  await new FakeClient().create(cm('a', {}, 'anywhere'));
  const strict = new FakeClient({ requireNamespaces: true });
  await strict.create(cm('a', {}, 'default'));
  await assert.rejects(strict.create(cm('a', {}, 'anywhere')), isNotFound);
});

test('resourceVersions are one counter across kinds, and a list reports the store’s current one', async () => {
  const fake = withWidgets();
  const a = await fake.create(cm('a'));
  const w = await fake.create<Widget>({ ...WIDGET, metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
  assert.notEqual(a.metadata?.resourceVersion, w.metadata?.resourceVersion);
  const list = await fake.list(CM);
  assert.equal(list.resourceVersion, w.metadata?.resourceVersion);
  assert.equal(fake.resourceVersion, w.metadata?.resourceVersion);
});

test('objects handed out are copies: mutating one never changes the store', async () => {
  const fake = new FakeClient({ objects: [cm('a', { k: '1' })] });
  const got = await fake.get<ConfigMap>(CM, 'a', { namespace: 'default' });
  got.data!.k = 'changed';
  assert.equal((await fake.get<ConfigMap>(CM, 'a', { namespace: 'default' })).data?.k, '1');
});

test('objects handed out by every verb and watch are copies, and what a caller sent is not kept', async () => {
  const fake = new FakeClient();
  const ns = { namespace: 'default' };
  const stored = async (name: string) => JSON.stringify(fake.peek<ConfigMap>(CM, name, 'default'));
  const events: WatchEvent<ConfigMap>[] = [];
  const watching = (async () => {
    for await (const e of fake.watch<ConfigMap>(CM, { resourceVersion: fake.resourceVersion })) {
      events.push(e);
      if (e.type === 'DELETED') return;
    }
  })();
  const sent = { ...cm('a', { k: '1' }), metadata: { name: 'a', namespace: 'default', labels: { l: '1' } } };
  const created = await fake.create<ConfigMap>(sent);
  const afterCreate = await stored('a');
  sent.metadata.labels.l = 'sent, then changed';
  created.metadata!.labels!.l = 'returned, then changed';
  assert.equal(await stored('a'), afterCreate, 'create');

  const mergeDoc = { data: { k: '2' }, metadata: { annotations: { a: '1' } } };
  const merged = await fake.patch<ConfigMap>(CM, 'a', mergeDoc, { type: 'merge', ...ns });
  const afterMerge = await stored('a');
  mergeDoc.data.k = 'sent, then changed';
  mergeDoc.metadata.annotations.a = 'sent, then changed';
  merged.data!.k = 'returned, then changed';
  merged.metadata!.labels!.l = 'returned, then changed';
  assert.equal(await stored('a'), afterMerge, 'merge patch');

  const strategic = await fake.patch<ConfigMap>(CM, 'a', { data: { s: '1' } }, { type: 'strategic', ...ns });
  strategic.data!.k = 'returned, then changed';
  const json = await fake.patch<ConfigMap>(CM, 'a', [{ op: 'add', path: '/data/j', value: '1' }], {
    type: 'json',
    ...ns,
  });
  json.data!.s = 'returned, then changed';
  const afterPatches = await stored('a');
  const noop = await fake.patch<ConfigMap>(CM, 'a', { data: { k: '2' } }, { type: 'merge', ...ns });
  noop.data!.k = 'returned, then changed';
  const updated = await fake.update<ConfigMap>({ ...json, data: { ...json.data, s: '1', u: '1' } });
  updated.data!.u = 'returned, then changed';
  assert.deepEqual(fake.peek<ConfigMap>(CM, 'a', 'default')?.data, { k: '2', s: '1', j: '1', u: '1' });
  assert.notEqual(afterPatches, await stored('a'));

  const listed = await fake.list<ConfigMap>(CM);
  listed.items[0]!.data!.k = 'listed, then changed';
  await fake.patch(CM, 'a', { metadata: { finalizers: ['example.com/hold'] } }, { type: 'merge', ...ns });
  const marked = (await fake.delete<ConfigMap>(CM, 'a', ns)) as ConfigMap;
  marked.metadata!.finalizers!.push('returned, then changed');
  assert.deepEqual(fake.peek<ConfigMap>(CM, 'a', 'default')?.metadata?.finalizers, ['example.com/hold']);
  assert.equal(fake.peek<ConfigMap>(CM, 'a', 'default')?.data?.k, '2');
  const released = await fake.patch<ConfigMap>(CM, 'a', { metadata: { finalizers: null } }, { type: 'merge', ...ns });
  released.data!.k = 'returned, then changed';
  await watching;
  // Every event, in order, shows what was stored then, whatever was changed in the objects handed out.
  for (const e of events) e.object.data = { changed: 'by the watcher' };
  assert.deepEqual(
    events.map((e) => e.type),
    ['ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED'],
  );
  const history = await fake.list<ConfigMap>(CM);
  assert.deepEqual(history.items, []);
});

test('built-in strategies: a Secret folds stringData into data, a Deployment bumps generation on annotations and its status write keeps labels', async () => {
  const fake = new FakeClient();
  const s = await fake.create<{
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace: string };
    data?: Record<string, string>;
    stringData?: Record<string, string>;
    type?: string;
  }>({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'default' },
    stringData: { a: 'hello' },
    data: { b: 'eA==' },
  });
  assert.deepEqual([s.data, s.stringData, s.type], [{ a: 'aGVsbG8=', b: 'eA==' }, undefined, 'Opaque']);
  const d = await fake.create<Deployment>({
    ...DEPLOY,
    metadata: { name: 'd', namespace: 'default' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
  });
  assert.deepEqual(d.status, {});
  const annotated = await fake.update<Deployment>({ ...d, metadata: { ...d.metadata, annotations: { x: '1' } } });
  assert.equal(annotated.metadata?.generation, 2);
  const labelled = await fake.update<Deployment>({
    ...annotated,
    metadata: { ...annotated.metadata, labels: { x: '1' } },
  });
  assert.equal(labelled.metadata?.generation, 2);
  const st = await fake.updateStatus<Deployment>({
    ...labelled,
    metadata: { ...labelled.metadata, labels: { y: '2' }, annotations: { z: '3' } },
    status: { replicas: 1 },
  });
  assert.deepEqual(
    [st.metadata?.labels, st.metadata?.annotations, st.status?.replicas, st.metadata?.generation],
    [{ x: '1' }, { z: '3' }, 1, 2],
  );
});

test('collectGarbage deletes dependents whose owner is gone, and keeps those with another owner (minus the dangling reference)', async () => {
  const fake = new FakeClient();
  const owner = await fake.create(cm('owner'));
  const other = await fake.create(cm('other'));
  const ref = (o: ConfigMap) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: o.metadata!.name!,
    uid: o.metadata!.uid!,
  });
  await fake.create<ConfigMap>({
    ...CM,
    metadata: { name: 'child', namespace: 'default', ownerReferences: [ref(owner)] },
  });
  await fake.create<ConfigMap>({
    ...CM,
    metadata: { name: 'shared', namespace: 'default', ownerReferences: [ref(owner), ref(other)] },
  });
  await fake.create<ConfigMap>({
    ...CM,
    metadata: { name: 'elsewhere', namespace: 'other-ns', ownerReferences: [ref(other)] },
  });
  assert.equal(fake.collectGarbage(), 1, 'a namespaced owner never owns across namespaces');
  await assert.rejects(fake.get(CM, 'elsewhere', { namespace: 'other-ns' }), isNotFound);
  await fake.delete(CM, 'owner', { namespace: 'default' });
  assert.equal(fake.collectGarbage(), 2);
  await assert.rejects(fake.get(CM, 'child', { namespace: 'default' }), isNotFound);
  const shared = await fake.get<ConfigMap>(CM, 'shared', { namespace: 'default' });
  assert.deepEqual(
    shared.metadata?.ownerReferences?.map((r) => r.name),
    ['other'],
  );
  assert.equal(fake.collectGarbage(), 0);
});

test('collectGarbage finishes Foreground deletes after the dependents and Orphan deletes by releasing them', async () => {
  const fake = new FakeClient();
  const ref = (o: ConfigMap, block = false) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: o.metadata!.name!,
    uid: o.metadata!.uid!,
    ...(block ? { blockOwnerDeletion: true } : {}),
  });
  const fg = await fake.create(cm('fg'));
  await fake.create<ConfigMap>({
    ...CM,
    metadata: {
      name: 'fg-child',
      namespace: 'default',
      finalizers: ['example.com/hold'],
      ownerReferences: [ref(fg, true)],
    },
  });
  await fake.delete(CM, 'fg', { namespace: 'default', propagationPolicy: 'Foreground' });
  fake.collectGarbage();
  const child = await fake.get<ConfigMap>(CM, 'fg-child', { namespace: 'default' });
  assert.ok(child.metadata?.deletionTimestamp, 'the dependent is being deleted');
  assert.ok(await fake.get(CM, 'fg', { namespace: 'default' }), 'the owner waits for a blocking dependent');
  await fake.patch(CM, 'fg-child', { metadata: { finalizers: null } }, { type: 'merge', namespace: 'default' });
  fake.collectGarbage();
  await assert.rejects(fake.get(CM, 'fg', { namespace: 'default' }), isNotFound);

  const orphaning = await fake.create(cm('orphaning'));
  await fake.create<ConfigMap>({
    ...CM,
    metadata: { name: 'orphan', namespace: 'default', ownerReferences: [ref(orphaning)] },
  });
  await fake.delete(CM, 'orphaning', { namespace: 'default', propagationPolicy: 'Orphan' });
  fake.collectGarbage();
  await assert.rejects(fake.get(CM, 'orphaning', { namespace: 'default' }), isNotFound);
  assert.equal(
    (await fake.get<ConfigMap>(CM, 'orphan', { namespace: 'default' })).metadata?.ownerReferences,
    undefined,
  );
});

test('a custom resource without a status subresource: status is ordinary content, bumps generation, and /status is a 404', async () => {
  const fake = new FakeClient({ kinds: [{ apiVersion: 'example.com/v1', kind: 'Plain', plural: 'plains' }] });
  const PLAIN = { apiVersion: 'example.com/v1', kind: 'Plain' };
  const p = await fake.create<Widget>({
    ...PLAIN,
    metadata: { name: 'p', namespace: 'default' },
    spec: { size: 1 },
    status: { observedGeneration: 0 },
  });
  assert.deepEqual([p.metadata?.generation, p.status], [1, { observedGeneration: 0 }], 'create keeps status');
  const u = await fake.update<Widget>({ ...p, status: { observedGeneration: 1 } });
  assert.equal(u.metadata?.generation, 2);
  await assert.rejects(
    fake.updateStatus<Widget>({ ...u, status: {} }),
    (e: unknown) => isNotFound(e) && (e as ApiError).details?.name === undefined,
  );
});

test('closeWatches ends open watches cleanly and expireWatches fails them with 410 after what was queued', async () => {
  const fake = new FakeClient();
  const closed = reader(fake.watch(CM, { resourceVersion: fake.resourceVersion }));
  const end = closed.next();
  await flushMicrotasks();
  fake.closeWatches();
  assert.equal(await end, undefined);

  const expiring = reader(fake.watch<ConfigMap>(CM, { resourceVersion: fake.resourceVersion }));
  const first = expiring.next();
  await flushMicrotasks();
  await fake.create(cm('queued'));
  fake.expireWatches();
  assert.equal((await first)?.object.metadata?.name, 'queued');
  await assert.rejects(expiring.next(), (e: unknown) => isGone(e) && (e as ApiError).reason === 'Expired');
  assert.equal(fake.openWatches, 0);
});
