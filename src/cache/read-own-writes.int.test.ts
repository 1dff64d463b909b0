/**
 * Read-your-own-writes of the delegating client against a real API server (TestEnv, 1.20). The
 * client writes to kube-apiserver directly; its informers watch through a TCP proxy that delays
 * every byte from the server by `WATCH_DELAY_MS`, so the cache lags each write by at least that
 * much — the race made certain, not left to chance.
 *
 * The reconciler shape that suffers from the race: "create a child unless a list of children shows
 * one". Reconciling each parent twice in a row (a second event for it, right after the first
 * reconcile) creates a duplicate child whenever the second list misses the first create.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorStatus } from '../client/api-error.js';
import type { ReadFreshness } from '../client/client-options.js';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import type { KubeObject } from '../core/object-key.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { WIDGET_CRD } from '../testing/conformance/client-conformance.js';
import { clientListerWatcherFactory } from './client-lister-watcher.js';
import { DelegatingClient } from './delegating-client.js';
import { InformerCache } from './informer-cache.js';
import { InformerFactory } from './informer-factory.js';
import { TcpProxy } from './testing/tcp-proxy.js';
import { viaPort } from './testing/int-helpers.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
/** How late the cache sees each write: far above the microseconds between a create and the next list. */
const WATCH_DELAY_MS = 300;
const PARENTS = 12;

describe('read-your-own-writes against a real API server, the watch delayed', () => {
  let env: TestEnv;
  let admin: KubeClient;
  let watchClient: KubeClient;
  let proxy: TcpProxy;
  const stops: (() => Promise<void>)[] = [];

  before(async () => {
    env = await TestEnv.start({ crds: [WIDGET_CRD] });
    admin = await KubeClient.fromKubeconfig({
      kubeconfig: env.kubeconfig as unknown as Kubeconfig,
      requestTimeoutMs: 15_000,
    });
    proxy = await TcpProxy.start({ host: '127.0.0.1', port: Number(new URL(env.server).port) });
    watchClient = await KubeClient.fromKubeconfig({
      kubeconfig: viaPort(env.kubeconfig, proxy.port) as unknown as Kubeconfig,
      requestTimeoutMs: 15_000,
    });
  });
  after(async () => {
    for (const stop of stops) await stop();
    await watchClient?.close();
    await proxy?.close();
    await admin?.close();
    await env?.stop();
  });

  /** The manager's client as the manager builds it, but with its cache behind the delaying proxy. */
  const managerClient = (ownWritesWaitMs?: number) => {
    const registry = createMetricsRegistry();
    const factory = new InformerFactory(clientListerWatcherFactory(watchClient), { registry });
    const client = new DelegatingClient(admin, new InformerCache(factory), {
      registry,
      ...(ownWritesWaitMs === undefined ? {} : { ownWritesWaitMs }),
    });
    const ac = new AbortController();
    const run = factory.start(ac.signal);
    stops.push(async () => {
      ac.abort();
      await run;
    });
    const outcomes = async (outcome: string): Promise<number> => {
      const m = await registry.getSingleMetric('cache_read_own_writes_total')?.get();
      return m?.values.filter((v) => v.labels.outcome === outcome).reduce((a, v) => a + v.value, 0) ?? 0;
    };
    return { client, outcomes };
  };

  /** Creates a child of `parent` unless a list shows one; returns whether it created. */
  const reconcile = async (
    client: DelegatingClient,
    namespace: string,
    parent: string,
    freshness: ReadFreshness,
  ): Promise<boolean> => {
    const children = await client.list<KubeObject>(CM, { namespace, labelSelector: `parent=${parent}`, freshness });
    if (children.items.length > 0) return false;
    await client.create({
      ...CM,
      metadata: { generateName: `${parent}-child-`, namespace, labels: { parent } },
    });
    return true;
  };

  /** Every parent reconciled twice back to back; returns how many children beyond one per parent were made. */
  const duplicates = async (client: DelegatingClient, namespace: string, freshness: ReadFreshness): Promise<number> => {
    let created = 0;
    for (let p = 0; p < PARENTS; p++) {
      const parent = `p${p}`;
      if (await reconcile(client, namespace, parent, freshness)) created++;
      if (await reconcile(client, namespace, parent, freshness)) created++;
    }
    const onServer = (await admin.list<KubeObject>(CM, { namespace, labelSelector: 'parent' })).items.length;
    assert.equal(onServer, created, 'the server holds every child created');
    return created - PARENTS;
  };

  test('create-unless-listed: 0 duplicate children with read-your-own-writes, and duplicates with freshness: cached', async (t) => {
    proxy.delay(WATCH_DELAY_MS);
    const { client, outcomes } = managerClient();
    const fresh = await env.createNamespace('ryow-fresh');
    const stale = await env.createNamespace('ryow-stale');
    // Warm the informer (its first list waits for a sync, which would hide the race).
    await client.list(CM, { namespace: fresh });
    // Interleaved so both modes see the same machine load.
    const withOwnWrites = await duplicates(client, fresh, 'ownWrites');
    const without = await duplicates(client, stale, 'cached');
    t.diagnostic(
      `duplicate creates over ${PARENTS} parents reconciled twice, watch delayed ${WATCH_DELAY_MS} ms: ` +
        `${withOwnWrites} with read-your-own-writes, ${without} without (freshness: 'cached')`,
    );
    assert.equal(withOwnWrites, 0, 'read-your-own-writes: the second list always shows the first create');
    assert.ok(without > 0, 'without it the race is seen: the test can fail');
    assert.ok((await outcomes('waited')) > 0, 'reads did wait for the lagging informer');
    assert.equal(await outcomes('timed_out'), 0);
  });

  test('get after update and status patch answers the written resourceVersion; after a delete, list and get no longer show it', async () => {
    proxy.delay(WATCH_DELAY_MS);
    const { client } = managerClient();
    const namespace = await env.createNamespace('ryow-rw');
    await client.list(CM, { namespace });
    await client.list(WIDGET, { namespace });

    const created = await client.create<KubeObject>({ ...CM, metadata: { name: 'a', namespace } });
    const got = await client.get<KubeObject>(CM, 'a', { namespace });
    assert.equal(got.metadata?.resourceVersion, created.metadata?.resourceVersion, 'get after create');
    const updated = await client.update<KubeObject>({ ...got, metadata: { ...got.metadata, labels: { v: '2' } } });
    assert.equal(
      (await client.get<KubeObject>(CM, 'a', { namespace })).metadata?.resourceVersion,
      updated.metadata?.resourceVersion,
      'get after update',
    );
    const patched = await client.patch(CM, 'a', { data: { v: '3' } }, { namespace, type: 'merge' });
    const listed = await client.list<KubeObject>(CM, { namespace });
    assert.deepEqual(
      listed.items.filter((o) => o.metadata?.name === 'a').map((o) => o.metadata?.resourceVersion),
      [patched.metadata?.resourceVersion],
      'list after patch',
    );

    const widget = await client.create<KubeObject & { spec: { size: number } }>({
      ...WIDGET,
      metadata: { name: 'w', namespace },
      spec: { size: 1 },
    });
    const status = await client.patchStatus(WIDGET, 'w', { status: { message: 'ready' } }, { namespace });
    const readBack = await client.get<KubeObject & { status?: { message?: string } }>(WIDGET, 'w', { namespace });
    assert.notEqual(status.metadata?.resourceVersion, widget.metadata?.resourceVersion);
    assert.equal(readBack.metadata?.resourceVersion, status.metadata?.resourceVersion, 'get after status patch');
    assert.equal(readBack.status?.message, 'ready');

    // Kubernetes 1.20 answers both deletes with a Status: no resourceVersion, only details.uid.
    const cmDeleted = await client.delete(CM, 'a', { namespace });
    assert.equal(cmDeleted.kind, 'Status', 'the ConfigMap delete answered a Status');
    assert.deepEqual(
      (await client.list<KubeObject>(CM, { namespace })).items.map((o) => o.metadata?.name),
      [],
      'list after delete',
    );
    await assert.rejects(client.get(CM, 'a', { namespace }), (err) => apiErrorStatus(err) === 404);
    const widgetDeleted = await client.delete(WIDGET, 'w', { namespace });
    assert.equal(widgetDeleted.kind, 'Status', 'the custom resource delete answered a Status');
    assert.deepEqual((await client.list<KubeObject>(WIDGET, { namespace })).items, [], 'list after a CR delete');
  });

  test('a wait is bounded: with the watch lagging past ownWritesWaitMs, the read answers the cache as it is and counts a time-out', async () => {
    proxy.delay(0);
    const { client, outcomes } = managerClient(400);
    const namespace = await env.createNamespace('ryow-bound');
    await client.list(CM, { namespace });
    proxy.delay(3_000);
    try {
      await client.create({ ...CM, metadata: { name: 'late', namespace } });
      const startedAt = performance.now();
      const listed = await client.list<KubeObject>(CM, { namespace });
      const waitedMs = performance.now() - startedAt;
      assert.deepEqual(listed.items, [], 'the cache as it is: the write not seen yet');
      assert.ok(waitedMs >= 390, `waited ${Math.round(waitedMs)} ms, the bound is 400 ms`);
      assert.equal(await outcomes('timed_out'), 1);
    } finally {
      proxy.delay(WATCH_DELAY_MS);
    }
  });

  test('failed and dry-run writes record nothing: the next list does not wait', async () => {
    proxy.delay(WATCH_DELAY_MS);
    const { client, outcomes } = managerClient();
    const namespace = await env.createNamespace('ryow-err');
    await client.list(CM, { namespace });
    await assert.rejects(client.delete(CM, 'missing', { namespace }), (err) => apiErrorStatus(err) === 404);
    await assert.rejects(
      client.create({ ...CM, metadata: { name: 'bad_name', namespace } }),
      (err) => apiErrorStatus(err) === 422,
    );
    await client.create({ ...CM, metadata: { name: 'dry', namespace } }, { dryRun: true });
    assert.deepEqual((await client.list(CM, { namespace })).items, []);
    assert.equal(await outcomes('waited'), 0, 'nothing to wait for');
  });
});
