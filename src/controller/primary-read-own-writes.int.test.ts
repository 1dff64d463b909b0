/**
 * Read-your-own-writes of a reconciler's primary read (`ctx.get()`) against a real API server
 * (TestEnv, 1.20): the stale-read race of src/cache/read-own-writes.int.test.ts, moved from a list of
 * children to the primary object. The manager writes to kube-apiserver directly; its informers
 * watch through a TCP proxy that delays every byte from the server by `WATCH_DELAY_MS`, so the
 * cache lags each write by at least that much — the race made certain.
 *
 * The reconciler that suffers from it: "unless the primary's status says the child exists, create
 * a child and say so in the status", reconciled again at once (a requeue right after the first
 * reconcile, as a second event would). A second `ctx.get()` that misses the status write creates a
 * duplicate child.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../client/contracts.js';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import type { KubeObject } from '../core/object-key.js';
import { requeueAfter } from '../core/result.js';
import { Manager } from '../manager/manager.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { WIDGET_CRD } from '../testing/conformance/client-conformance.js';
import { TcpProxy } from '../cache/testing/tcp-proxy.js';
import { until, viaPort } from '../cache/testing/int-helpers.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
type Widget = KubeObject & { status?: { message?: string } };
/** How late the cache sees each write: far above the milliseconds between a write and the requeued reconcile. */
const WATCH_DELAY_MS = 300;
const PARENTS = 8;
const DONE = 'child-created';

/** Writes and discovery through `writer`; lists and watches (the informers) through `watcher`. */
function watchingThrough(writer: KubeClient, watcher: KubeClient): Client {
  return new Proxy(writer, {
    get(target, prop) {
      const from = prop === 'listPage' || prop === 'watch' || prop === 'watchList' ? watcher : target;
      const value: unknown = Reflect.get(from, prop, from);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(from) : value;
    },
  });
}

describe("a reconciler's primary read sees its own writes, against a real API server with the watch delayed", () => {
  let env: TestEnv;
  let admin: KubeClient;
  let watchClient: KubeClient;
  let proxy: TcpProxy;

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
    await watchClient?.close();
    await proxy?.close();
    await admin?.close();
    await env?.stop();
  });

  /** Runs the create-unless-the-status-says-so controller over `PARENTS` widgets; returns the duplicate children. */
  const duplicates = async (namespace: string, freshness: 'ownWrites' | 'cached'): Promise<number> => {
    const manager = new Manager({
      client: watchingThrough(admin, watchClient),
      namespaces: [namespace],
      metricsPort: 0,
      healthPort: 0,
      heapCompaction: false,
    });
    const visits = new Map<string, number>();
    manager
      .controller(`primary-ryow-${freshness}`)
      .for<Widget>(WIDGET)
      .complete(async (request, ctx) => {
        const widget = await ctx.get({ freshness });
        if (!widget || widget.status?.message === DONE) return;
        const visit = (visits.get(request.name) ?? 0) + 1;
        visits.set(request.name, visit);
        const { client } = ctx.cluster;
        await client.create({
          ...CM,
          metadata: { generateName: `${request.name}-child-`, namespace, labels: { parent: request.name } },
        });
        await client.patchStatus(WIDGET, request.name, { status: { message: DONE } }, { namespace });
        // Reconciled again at once, the first time only: the second read is the one that races.
        return visit === 1 ? requeueAfter(0) : undefined;
      });
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      for (let p = 0; p < PARENTS; p++) await admin.create({ ...WIDGET, metadata: { name: `w${p}`, namespace } });
      await until(
        async () => (await admin.list<Widget>(WIDGET, { namespace })).items.every((w) => w.status?.message === DONE),
        30_000,
        'every widget done',
      );
      // Past the watch delay: any reconcile still to come has seen the status.
      await new Promise((resolve) => setTimeout(resolve, 3 * WATCH_DELAY_MS));
    } finally {
      stop.abort();
      await running;
    }
    const children = (await admin.list<KubeObject>(CM, { namespace, labelSelector: 'parent' })).items.length;
    return children - PARENTS;
  };

  test('create-unless-the-status-says-so: 0 duplicates with ctx.get() reading its own writes, duplicates with freshness: cached', async (t) => {
    proxy.delay(WATCH_DELAY_MS);
    const withOwnWrites = await duplicates(await env.createNamespace('primary-fresh'), 'ownWrites');
    const without = await duplicates(await env.createNamespace('primary-stale'), 'cached');
    t.diagnostic(
      `duplicate children over ${PARENTS} widgets, each reconciled again at once, watch delayed ${WATCH_DELAY_MS} ms: ` +
        `${withOwnWrites} with ctx.get() reading its own writes, ${without} without (freshness: 'cached')`,
    );
    assert.equal(withOwnWrites, 0, "read-your-own-writes: the second ctx.get() shows the first reconcile's status");
    assert.ok(without > 0, 'without it the race is seen: the test can fail');
  });
});
