import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { EventHandler } from '../cache/handler-dispatcher.js';
import type { SharedInformer } from '../cache/informer.js';
import type { ResourceType } from '../client/discovery.js';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { kinds } from '../client/kinds.js';
import type { Reconciler } from '../controller/reconciler.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { ControllerBuilder } from './controller-builder.js';
import type { ClusterView } from '../cluster/cluster-view.js';

/** The host cluster as a reconcile sees it. */
const hostView = (): ClusterView => {
  const client = new FakeClient();
  return { name: '', labels: {}, client, apiClient: client, synced: true };
};
import type { ControllerCacheOptions, ControllerHost } from './controller-host.js';
import type { Runnable, RunnableOptions } from '../manager/runnable.js';

const CM: ResourceType = { apiVersion: 'v1', kind: 'ConfigMap' };
const SECRET: ResourceType = { apiVersion: 'v1', kind: 'Secret' };

/** A host that hands out informers whose handlers the test calls directly: the builder's whole world. */
function fakeHost() {
  const handlers = new Map<string, EventHandler<KubeObject>[]>();
  const added: { runnable: Runnable; options: RunnableOptions }[] = [];
  const prepared: { kind: string; cache: ControllerCacheOptions }[] = [];
  const resolved: { kind: string; cache: ControllerCacheOptions }[] = [];
  const logger = recordingLogger();
  const host: ControllerHost = {
    clock: new FakeClock(0),
    logger,
    registry: new Registry(),
    gracefulShutdownMs: 1_000,
    cluster: hostView(),
    trackController: () => undefined,
    prepareInformers: (type, cache) => void prepared.push({ kind: type.kind, cache }),
    informersFor: async (type, cache) => {
      resolved.push({ kind: type.kind, cache });
      const informer = {
        addEventHandler: (h: EventHandler<KubeObject>) => {
          handlers.set(type.kind, [...(handlers.get(type.kind) ?? []), h]);
          return {
            remove: () =>
              handlers.set(
                type.kind,
                (handlers.get(type.kind) ?? []).filter((x) => x !== h),
              ),
          };
        },
      };
      return [informer as unknown as SharedInformer<KubeObject>];
    },
    isNamespaced: async () => true,
    add: (runnable, options) => void added.push({ runnable, options }),
    requirePermissions: () => undefined,
  };
  const emit = (kind: string, obj: KubeObject): void => {
    for (const h of handlers.get(kind) ?? []) void h.add?.(obj);
  };
  return { host, added, prepared, resolved, emit, logger, handlers };
}

/** A reconciler that records keys and lets the test wait for a given one. */
function recorder() {
  const seen: string[] = [];
  const waiters = new Map<string, () => void>();
  return {
    seen,
    reconcile: async (req: { namespace?: string; name: string }) => {
      const key = req.namespace ? `${req.namespace}/${req.name}` : req.name;
      seen.push(key);
      waiters.get(key)?.();
    },
    reconciled: (key: string) =>
      seen.includes(key) ? Promise.resolve() : new Promise<void>((r) => waiters.set(key, r)),
  };
}

const obj = (kind: string, name: string, labels: Record<string, string> = {}, owner?: string): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: {
    name,
    namespace: 'ns',
    labels,
    ...(owner
      ? {
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: owner, uid: `uid-${owner}`, controller: true },
          ],
        }
      : {}),
  },
});

async function run(added: { runnable: Runnable }[], body: () => Promise<void>): Promise<void> {
  const stop = new AbortController();
  const running = added[0]!.runnable.start(stop.signal);
  try {
    await body();
  } finally {
    stop.abort();
    await running;
  }
}

test('named() renames the controller, its runnable and its metrics; an empty name is refused', () => {
  const { host, added } = fakeHost();
  const controller = new ControllerBuilder(host, 'first')
    .named('database')
    .for(CM)
    .complete(async () => {});
  assert.equal(controller.name, 'database');
  assert.equal(added[0]!.options.name, 'controller/database');
  assert.throws(
    () => new ControllerBuilder(host, 'x').named(''),
    (e: unknown) => (e as { code?: string }).code === 'ERR_INVALID_OPTION',
  );
});

test('a global event filter applies to every kind source (for and owns), beside their own predicates', async () => {
  const { host, added, emit, handlers } = fakeHost();
  const r = recorder();
  const team = (e: { object: KubeObject }): boolean => e.object.metadata?.labels?.team === 'a';
  new ControllerBuilder(host, 'c')
    .for(CM)
    .owns(SECRET)
    .withEventFilter(team)
    .withOptions({ maxConcurrentReconciles: 1 })
    .complete(r.reconcile);
  await run(added, async () => {
    while ((handlers.get('Secret') ?? []).length === 0) await new Promise((resolve) => setImmediate(resolve));
    emit('ConfigMap', obj('ConfigMap', 'unlabelled'));
    emit('Secret', obj('Secret', 's-unlabelled', {}, 'owner-of-unlabelled'));
    emit('Secret', obj('Secret', 's-labelled', { team: 'a' }, 'owner'));
    emit('ConfigMap', obj('ConfigMap', 'labelled', { team: 'a' }));
    // One worker takes keys in order: anything enqueued before 'ns/labelled' was reconciled before it.
    await r.reconciled('ns/labelled');
  });
  assert.deepEqual(r.seen, ['ns/owner', 'ns/labelled']);
});

test('reconcileOn: keys from an async iterable are reconciled; stopping the controller closes the iterator', async () => {
  const { host, added } = fakeHost();
  const r = recorder();
  const keys: (string | { namespace: string; name: string })[] = [
    'ns/from-string',
    { namespace: 'ns', name: 'from-ref' },
  ];
  let returned = false;
  // Yields its keys, then waits forever (a quiet channel) until return() is called.
  const channel: AsyncIterable<string | { namespace: string; name: string }> = {
    [Symbol.asyncIterator]: () => ({
      next: () =>
        keys.length > 0
          ? Promise.resolve({ done: false as const, value: keys.shift()! })
          : new Promise<never>(() => {}),
      return: () => {
        returned = true;
        return Promise.resolve({ done: true as const, value: undefined });
      },
    }),
  };
  new ControllerBuilder(host, 'c').for(CM).reconcileOn(channel).complete(r.reconcile);
  await run(added, async () => {
    await r.reconciled('ns/from-string');
    await r.reconciled('ns/from-ref');
  });
  assert.deepEqual(r.seen, ['ns/from-string', 'ns/from-ref']);
  assert.equal(returned, true, 'the quiet iterator was closed when the controller stopped');
});

test('reconcileOn: a throwing trigger source is logged and ends; the controller keeps reconciling', async () => {
  const { host, added, emit, logger, handlers } = fakeHost();
  const r = recorder();
  async function* failing(): AsyncGenerator<string> {
    yield 'ns/before-failure';
    throw new Error('channel broke');
  }
  new ControllerBuilder(host, 'c').for(CM).reconcileOn(failing()).complete(r.reconcile);
  await run(added, async () => {
    await r.reconciled('ns/before-failure');
    while ((handlers.get('ConfigMap') ?? []).length === 0) await new Promise((resolve) => setImmediate(resolve));
    emit('ConfigMap', obj('ConfigMap', 'after'));
    await r.reconciled('ns/after');
  });
  assert.ok(logger.entries.some((e) => e.level === 'error' && /trigger source failed/.test(e.msg ?? '')));
});

test('per-controller cache options reach the host for every source, when prepared and when started', async () => {
  const { host, added, prepared, resolved } = fakeHost();
  const cache = { labelSelectorsByKind: [{ ...SECRET, labelSelector: 'app.kubernetes.io/managed-by=db' }] };
  new ControllerBuilder(host, 'c')
    .for(CM)
    .owns(SECRET)
    .withOptions({ cache })
    .complete(async () => {});
  assert.deepEqual(prepared, [
    { kind: 'ConfigMap', cache },
    { kind: 'Secret', cache },
  ]);
  await run(added, async () => {
    while (resolved.length < 2) await new Promise((resolve) => setImmediate(resolve));
  });
  assert.deepEqual(resolved, [
    { kind: 'ConfigMap', cache },
    { kind: 'Secret', cache },
  ]);
});

test('an observer in the options is told about every finished reconcile, beside the console view', async () => {
  const { host, added, emit, handlers } = fakeHost();
  const viewed: string[] = [];
  const view = { reconciled: (rec: { key: string }) => void viewed.push(rec.key), attach: () => undefined };
  host.trackController = () => view as unknown as ReturnType<ControllerHost['trackController']>;
  const observed: { key: string; outcome: string }[] = [];
  const observer = {
    reconciled: (rec: { key: string; outcome: string }) => void observed.push({ key: rec.key, outcome: rec.outcome }),
  };
  const r = recorder();
  new ControllerBuilder(host, 'c').for(CM).withOptions({ observer }).complete(r.reconcile);
  await run(added, async () => {
    while ((handlers.get('ConfigMap') ?? []).length === 0) await new Promise((resolve) => setImmediate(resolve));
    emit('ConfigMap', obj('ConfigMap', 'a'));
    await r.reconciled('ns/a');
    // Notified right after the reconcile returns; bounded, so a missing notification fails instead of hanging.
    for (let i = 0; i < 1_000 && observed.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  });
  assert.deepEqual(observed, [{ key: 'ns/a', outcome: 'success' }]);
  assert.deepEqual(viewed, ['ns/a'], 'the console view still gets it');
});

test("sharded: the options' observer hears of the reconciles the reconciler ran, not of keys the shard gate skipped", async () => {
  const { host, added, emit, handlers } = fakeHost();
  // A gate that owns every key but 'ns/other', which it skips as another replica's.
  const gate = {
    wrap: (inner: Reconciler): Reconciler => ({
      reconcile: async (req, ctx) => (req.name === 'other' ? undefined : inner.reconcile(req, ctx)),
    }),
    attach: () => () => undefined,
  };
  const sharding = {
    gateFor: () => gate,
    primaryInformers: (_type: unknown, fromCache: (selector?: string) => unknown) => fromCache(),
  };
  const shardedHost = { ...host, sharding } as unknown as ControllerHost;
  const observed: string[] = [];
  const r = recorder();
  new ControllerBuilder(shardedHost, 'c')
    .for(CM)
    .withOptions({ maxConcurrentReconciles: 1, observer: { reconciled: (rec) => void observed.push(rec.key) } })
    .complete(r.reconcile);
  await run(added, async () => {
    while ((handlers.get('ConfigMap') ?? []).length === 0) await new Promise((resolve) => setImmediate(resolve));
    emit('ConfigMap', obj('ConfigMap', 'other'));
    emit('ConfigMap', obj('ConfigMap', 'mine'));
    await r.reconciled('ns/mine');
    for (let i = 0; i < 1_000 && observed.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  });
  assert.deepEqual(r.seen, ['ns/mine']);
  assert.deepEqual(observed, ['ns/mine'], 'the skipped key is no reconcile of this replica');
});

test('complete() twice is refused: one builder, one controller', () => {
  const { host } = fakeHost();
  const b = new ControllerBuilder(host, 'c').for(CM);
  b.complete(async () => {});
  assert.throws(
    () => b.complete(async () => {}),
    (e: unknown) => (e as { code?: string }).code === 'ERR_INVALID_OPTION',
  );
});

test('for(kinds.Deployment) types its predicates: they receive Deployments', async () => {
  const { host, added, emit, handlers } = fakeHost();
  const r = recorder();
  new ControllerBuilder(host, 'c')
    .for(kinds.Deployment, {
      predicates: [
        (e) => (e.object.spec?.replicas ?? 0) > 0,
        // @ts-expect-error a Deployment's spec has no such field
        (e) => e.object.spec?.noSuchField === undefined,
      ],
    })
    .complete(r.reconcile);
  await run(added, async () => {
    while ((handlers.get('Deployment') ?? []).length === 0) await new Promise((resolve) => setImmediate(resolve));
    emit('Deployment', { ...obj('Deployment', 'scaled-to-zero'), spec: { replicas: 0 } } as KubeObject);
    emit('Deployment', { ...obj('Deployment', 'running'), spec: { replicas: 2 } } as KubeObject);
    await r.reconciled('ns/running');
  });
  assert.deepEqual(r.seen, ['ns/running']);
});
