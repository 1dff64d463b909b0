import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { TestEnv } from './test-env.js';
import { kubectl } from './kubectl.js';
import { FaultProxy } from './fault-proxy.js';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import type { RequestSample } from '../client/client-metrics.js';

const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

interface ConfigMap {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

describe('FaultProxy in front of a real API server, seen by KubeClient', () => {
  let env: TestEnv;
  let proxy: FaultProxy;
  const samples: RequestSample[] = [];
  let client: KubeClient;

  before(async () => {
    env = await TestEnv.start();
    proxy = await FaultProxy.start({ upstream: env });
    // Tiny backoff of its own: any wait of a second or more can only come from Retry-After.
    client = await KubeClient.fromKubeconfig({
      kubeconfig: proxy.kubeconfig as unknown as Kubeconfig,
      backoff: { initialMs: 5, maxMs: 20 },
      metrics: { observeRequest: (s) => samples.push(s) },
    });
    await env.request('POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'target' },
      data: { v: '1' },
    });
  });
  after(async () => {
    await client?.close();
    await proxy?.close();
    await env?.stop();
  });

  test('without faults, requests and their answers pass through unchanged', async () => {
    const got = await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' });
    assert.equal(got.data?.v, '1');
    const created = await client.create<ConfigMap>({
      ...CONFIGMAP,
      metadata: { name: 'via-proxy', namespace: 'default' },
      data: { a: 'b' },
    });
    assert.ok(created.metadata.resourceVersion);
    assert.equal((await env.request('GET', '/api/v1/namespaces/default/configmaps/via-proxy')).status, 200);
  });

  test('a kubeconfig file written by the proxy works for kubectl, and kubectl sees an injected 500', async () => {
    const path = join(env.dir, 'proxy-kubeconfig.yaml');
    await proxy.writeKubeconfig(path);
    assert.match(await kubectl(path, ['get', 'configmap', 'target', '-o', 'name']), /configmap\/target/);
    const fault = proxy.inject({ kind: 'status', status: 500, match: { path: /configmaps\/target/ } });
    try {
      await assert.rejects(
        kubectl(path, ['get', 'configmap', 'target']),
        /injected by operator-runtime fault proxy|InternalError|500/,
      );
    } finally {
      fault.remove();
    }
  });

  test('a 429 storm is retried by the client, each retry waiting the Retry-After the proxy sent', async () => {
    samples.length = 0;
    const storm = proxy.inject({
      kind: 'status',
      status: 429,
      retryAfterSeconds: 1,
      count: 2,
      match: { method: 'GET', path: /configmaps\/target/ },
    });
    const started = Date.now();
    const got = await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' });
    const elapsedMs = Date.now() - started;
    assert.equal(got.metadata.name, 'target');
    assert.equal(storm.injected, 2);
    assert.deepEqual(
      samples.map((s) => s.code),
      ['429', '429', '200'],
    );
    assert.ok(elapsedMs >= 1900 && elapsedMs < 5000, `took ${elapsedMs} ms for two Retry-After: 1`);
    storm.remove();
  });

  test('a 429 storm for a duration ends by itself and the client gets through', async () => {
    const storm = proxy.inject({
      kind: 'status',
      status: 429,
      retryAfterSeconds: 1,
      durationMs: 1500,
      match: { path: /configmaps\/target/ },
    });
    const got = await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' });
    assert.equal(got.metadata.name, 'target');
    assert.ok(storm.injected >= 1 && storm.injected <= 3, `injected ${storm.injected}`);
  });

  test('an injected 500 surfaces to the client as an ApiError (not retried), and the next request succeeds', async () => {
    const before = proxy.stats();
    proxy.inject({ kind: 'status', status: 500, count: 1, match: { path: /configmaps\/target/ } });
    await assert.rejects(
      client.get(CONFIGMAP, 'target', { namespace: 'default' }),
      (err: unknown) =>
        (err as { code?: string; status?: number }).code === 'ERR_API' && (err as { status: number }).status === 500,
    );
    assert.equal(proxy.stats().injected.status, before.injected.status + 1);
    assert.equal((await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' })).metadata.name, 'target');
  });

  test('a fraction of matching requests fails: with fraction 0.5 and a fixed random sequence, every other one', async () => {
    const values = [0.1, 0.9, 0.2, 0.8];
    const local = await FaultProxy.start({ upstream: env, random: () => values.shift() ?? 0.99 });
    const c = await KubeClient.fromKubeconfig({
      kubeconfig: local.kubeconfig as unknown as Kubeconfig,
      backoff: { maxAttempts: 1 },
    });
    try {
      await c.get(CONFIGMAP, 'target', { namespace: 'default' }); // discovery, before the rule
      local.inject({ kind: 'status', status: 500, fraction: 0.5, match: { path: /configmaps\/target/ } });
      const outcomes = [];
      for (let i = 0; i < 4; i++)
        outcomes.push(
          await c.get(CONFIGMAP, 'target', { namespace: 'default' }).then(
            () => 'ok',
            (e: { status?: number }) => e.status,
          ),
        );
      assert.deepEqual(outcomes, [500, 'ok', 500, 'ok']);
    } finally {
      await c.close();
      await local.close();
    }
  });

  test('a dropped connection is retried for a GET and surfaces for a POST, which never reached the server', async () => {
    const drop = proxy.inject({ kind: 'drop', count: 1, match: { method: 'GET', path: /configmaps\/target/ } });
    assert.equal((await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' })).metadata.name, 'target');
    assert.equal(drop.injected, 1);

    proxy.inject({ kind: 'drop', count: 1, match: { method: 'POST' } });
    await assert.rejects(
      client.create<ConfigMap>({ ...CONFIGMAP, metadata: { name: 'dropped', namespace: 'default' } }),
      (err: unknown) => (err as { code?: string }).code === 'ERR_TRANSPORT',
    );
    assert.equal((await env.request('GET', '/api/v1/namespaces/default/configmaps/dropped')).status, 404);
  });

  test('a delayed request arrives late but arrives', async () => {
    proxy.inject({ kind: 'delay', delayMs: 800, count: 1, match: { path: /configmaps\/target/ } });
    const started = Date.now();
    await client.get(CONFIGMAP, 'target', { namespace: 'default' });
    assert.ok(Date.now() - started >= 750);
  });

  test('a watch cut mid-stream ends the client watch with a transport error long before its timeout', async () => {
    const cut = proxy.inject({ kind: 'cut-watch', afterMs: 700, count: 1 });
    const events: string[] = [];
    const started = Date.now();
    const writer = setInterval(() => {
      void env
        .request('POST', '/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'tick-' } })
        .catch(() => undefined);
    }, 100);
    try {
      await assert.rejects(
        (async () => {
          for await (const e of client.watch<ConfigMap>(CONFIGMAP, { namespace: 'default', timeoutSeconds: 60 }))
            events.push(e.type);
        })(),
        (err: unknown) => (err as { code?: string }).code === 'ERR_TRANSPORT',
      );
    } finally {
      clearInterval(writer);
    }
    const elapsedMs = Date.now() - started;
    assert.equal(cut.injected, 1);
    assert.ok(events.length > 0, 'events before the cut were streamed through');
    assert.ok(elapsedMs < 10_000, `watch ended after ${elapsedMs} ms`);
  });

  test('after clear(), requests pass through again', async () => {
    proxy.inject({ kind: 'status', status: 503 });
    proxy.clear();
    assert.equal((await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' })).metadata.name, 'target');
  });
});
