import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { kind } from '../client/kind.js';
import { kinds } from '../client/kinds.js';
import { resourceVersionChanged } from '../controller/predicates.js';
import type { ObjectReconcileContext, ObjectReconciler } from '../controller/reconciler.js';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { Registry } from 'prom-client';
import type { SharedInformer } from '../cache/informer.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { ControllerBuilder } from './controller-builder.js';
import type { ClusterView } from '../cluster/cluster-view.js';

/** The host cluster as a reconcile sees it. */
const hostView = (): ClusterView => {
  const client = new FakeClient();
  return { name: '', labels: {}, client, apiClient: client, synced: true };
};
import type { ControllerHost } from './controller-host.js';
import { Manager } from '../manager/manager.js';
import type { Runnable } from '../manager/runnable.js';

// The type-level checks below fail `npm run typecheck` when the kind given to `.for()` stops
// reaching the reconciler: each expected-error directive is itself an error once its line compiles.

interface Website extends KubeObject {
  metadata: { name: string; namespace: string };
  spec: { html: string };
}
interface Other extends KubeObject {
  spec: { other: string };
}
const WEBSITE = kind<Website>('example.com/v1', 'Website');

/** Compiled, never run: the types `.for`, `.owns` and `.complete` give and refuse. */
export function typeChecks(manager: Manager, otherReconciler: ObjectReconciler<Other>): void {
  manager
    .controller('types')
    .for(WEBSITE, { predicates: [(e) => e.object.spec.html !== ''] })
    .owns(kinds.ConfigMap, {
      predicates: [
        (e) => e.object.data?.['index.html'] !== undefined,
        // @ts-expect-error an owned ConfigMap has no spec
        (e) => e.object.spec !== undefined,
      ],
    })
    .complete(async (_request, ctx) => {
      const site = await ctx.get();
      const html: string | undefined = site?.spec.html;
      // @ts-expect-error the object may be gone: get() is Website | undefined
      const sure: Website = site;
      // @ts-expect-error a Website's spec has no such field
      void site?.spec.noSuchField;
      void html;
      void sure;
    });
  manager
    .controller('wrong-fn')
    .for(WEBSITE)
    // @ts-expect-error a reconcile function written for another kind is refused
    .complete(async (_request, _ctx: ObjectReconcileContext<Other>) => {});
  // A reconciler class written for another kind: its context's get() would claim the wrong type.
  manager
    .controller('wrong-obj')
    .for(WEBSITE)
    // @ts-expect-error a reconciler object for another kind is refused
    .complete({ reconcile: (request, ctx: ObjectReconcileContext<Other>) => otherReconciler.reconcile(request, ctx) });
  // A reconciler that needs no object (only the key) fits any kind, as before.
  manager
    .controller('key-only')
    .for(kinds.Secret)
    .complete(async (request) => void request.name);
}

test('ctx.get() reads the .for object of the key from the cache now: current content, or undefined when missing', async () => {
  const fake = new FakeClient({
    objects: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'site', namespace: 'ns' },
        data: { 'index.html': 'v1' },
      } satisfies ConfigMap,
    ],
  });
  const manager = new Manager({ client: fake, clock: new FakeClock(0), metricsPort: 0, healthPort: 0 });
  const seen: { key: string; html: string | undefined; found: boolean }[] = [];
  const waiters: { until: (s: typeof seen) => boolean; resolve: () => void }[] = [];
  const seenUntil = (until: (s: typeof seen) => boolean) =>
    new Promise<void>((resolve) => (until(seen) ? resolve() : waiters.push({ until, resolve })));
  const missing = (async function* () {
    yield 'ns/missing'; // a trigger for a key with no object: get() must say so, not throw
  })();
  manager
    .controller('typed')
    // A ConfigMap has no generation: the default predicate would drop its data changes.
    .for(kinds.ConfigMap, { predicates: [resourceVersionChanged] })
    .reconcileOn(missing)
    .complete(async (request, ctx) => {
      const cm = await ctx.get();
      seen.push({
        key: `${request.namespace}/${request.name}`,
        html: cm?.data?.['index.html'],
        found: cm !== undefined,
      });
      for (const w of waiters) if (w.until(seen)) w.resolve();
    });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await seenUntil((s) => s.some((r) => r.key === 'ns/site') && s.some((r) => r.key === 'ns/missing'));
    assert.deepEqual(
      seen.find((r) => r.key === 'ns/site'),
      { key: 'ns/site', html: 'v1', found: true },
    );
    assert.deepEqual(
      seen.find((r) => r.key === 'ns/missing'),
      { key: 'ns/missing', html: undefined, found: false },
    );
    // Level-triggered: the next reconcile of the key reads the object as it is then.
    const current = await fake.get(kinds.ConfigMap, 'site', { namespace: 'ns' });
    await fake.update<ConfigMap>({ ...current, data: { 'index.html': 'v2' } });
    await seenUntil((s) => s.some((r) => r.html === 'v2'));
    await fake.delete(kinds.ConfigMap, 'site', { namespace: 'ns' });
    await seenUntil((s) => s.at(-1)?.key === 'ns/site' && !s.at(-1)!.found);
    assert.deepEqual(seen.at(-1), { key: 'ns/site', html: undefined, found: false });
  } finally {
    stop.abort();
    await running;
  }
});

test('ctx.get() with a namespace-restricted cache finds the object in its namespace informer', async () => {
  const fake = new FakeClient({
    objects: [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: 'a' },
        stringData: { k: 'in-a' },
      } satisfies Secret,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: 'b' },
        stringData: { k: 'in-b' },
      } satisfies Secret,
    ],
  });
  const manager = new Manager({
    client: fake,
    clock: new FakeClock(0),
    metricsPort: 0,
    healthPort: 0,
    namespaces: ['a', 'b'],
  });
  const got = new Map<string, Secret | undefined>();
  let bothSeen!: () => void;
  const both = new Promise<void>((r) => (bothSeen = r));
  manager
    .controller('ns-typed')
    .for(kinds.Secret)
    .complete(async (request, ctx) => {
      got.set(`${request.namespace}/${request.name}`, await ctx.get());
      if (got.size === 2) bothSeen();
    });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await both;
    assert.equal(got.get('a/s')?.metadata?.namespace, 'a');
    assert.equal(got.get('b/s')?.metadata?.namespace, 'b');
  } finally {
    stop.abort();
    await running;
  }
});

test('ctx.get() waits for the primary informer to sync before answering (a trigger may come first)', async () => {
  const obj: ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'early', namespace: 'ns' },
    data: { k: 'v' },
  };
  let synced = false;
  let markSynced!: () => void;
  const syncDone = new Promise<void>((resolve) => (markSynced = () => ((synced = true), resolve())));
  const informer = {
    addEventHandler: () => ({ remove: () => undefined }),
    hasSynced: () => synced,
    waitForSync: () => syncDone,
    // Before the sync the store is empty: answering then would wrongly say "deleted".
    reader: { get: (key: string) => (synced && key === 'ns/early' ? obj : undefined) },
  };
  const added: Runnable[] = [];
  const host: ControllerHost = {
    clock: new FakeClock(0),
    logger: recordingLogger(),
    registry: new Registry(),
    gracefulShutdownMs: 1_000,
    cluster: hostView(),
    trackController: () => undefined,
    prepareInformers: () => undefined,
    informersFor: async () => [informer as unknown as SharedInformer<KubeObject>],
    isNamespaced: async () => true,
    add: (runnable) => void added.push(runnable),
    requirePermissions: () => undefined,
  };
  let entered!: () => void;
  const inGet = new Promise<void>((resolve) => (entered = resolve));
  let answered!: (v: ConfigMap | undefined) => void;
  const answer = new Promise<ConfigMap | undefined>((resolve) => (answered = resolve));
  const trigger = (async function* () {
    yield 'ns/early';
  })();
  new ControllerBuilder(host, 'early')
    .for(kinds.ConfigMap)
    .reconcileOn(trigger)
    .complete(async (_request, ctx) => {
      const pending = ctx.get();
      entered();
      answered(await pending);
    });
  const stop = new AbortController();
  const running = added[0]!.start(stop.signal);
  try {
    await inGet;
    const early = await Promise.race([
      answer.then(() => 'answered'),
      new Promise((r) => setImmediate(() => r('waiting'))),
    ]);
    assert.equal(early, 'waiting', 'no answer before the informer synced');
    markSynced();
    assert.deepEqual(await answer, obj);
  } finally {
    stop.abort();
    await running;
  }
});
