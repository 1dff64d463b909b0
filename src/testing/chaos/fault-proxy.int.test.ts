import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { TestEnv } from '../control-plane/test-env.js';
import { kubectl } from '../control-plane/kubectl.js';
import { FaultProxy } from './fault-proxy.js';
import { KubeClient } from '../../client/kube-client.js';
import type { Kubeconfig } from '../../client/kubeconfig.js';
import type { RequestSample } from '../../client/client-metrics.js';

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

  test('a rewrite rule changes the JSON answer of what it matches: a lying /version, a list with extra items', async () => {
    const lie = proxy.inject({
      kind: 'rewrite',
      match: { path: /^\/version/ },
      rewrite: (body) => ({ ...(body as object), major: '1', minor: '99', gitVersion: 'v1.99.0-lie' }),
    });
    const raw = proxy.inject({
      kind: 'rewrite',
      match: { path: /configmaps\/target$/ },
      rewrite: (body) => Buffer.from(JSON.stringify({ ...(body as object), data: { v: 'bytes' } })),
    });
    const bloat = proxy.inject({
      kind: 'rewrite',
      match: { method: 'GET', path: /\/namespaces\/default\/configmaps(\?|$)/ },
      rewrite: (body) => {
        const list = body as { items: ConfigMap[] };
        const extra = Array.from({ length: 3 }, (_, i) => ({ ...CONFIGMAP, metadata: { name: `synthetic-${i}` } }));
        return { ...list, items: [...list.items, ...extra] };
      },
    });
    try {
      const version = await rawGet('/version');
      assert.equal(version.status, 200);
      assert.equal((JSON.parse(version.body) as { gitVersion: string }).gitVersion, 'v1.99.0-lie');
      const listed = await client.list<ConfigMap>(CONFIGMAP, { namespace: 'default' });
      const names = listed.items.map((c) => c.metadata.name);
      assert.ok(names.includes('target'), 'the real items stay');
      assert.deepEqual(
        names.filter((n) => n.startsWith('synthetic-')),
        ['synthetic-0', 'synthetic-1', 'synthetic-2'],
      );
      // Bytes from the rule are sent as they are.
      assert.equal((await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' })).data?.v, 'bytes');
      raw.remove();
      // Not matched: passes unchanged.
      assert.equal((await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' })).data?.v, '1');
      assert.equal(lie.injected, 1);
      assert.equal(bloat.injected, 1);
    } finally {
      lie.remove();
      raw.remove();
      bloat.remove();
    }
    assert.notEqual((JSON.parse((await rawGet('/version')).body) as { gitVersion: string }).gitVersion, 'v1.99.0-lie');
  });

  test('a rewrite rule never touches a watch', async () => {
    const rule = proxy.inject({ kind: 'rewrite', rewrite: () => ({ broken: true }) });
    const ac = new AbortController();
    try {
      const seen = (async () => {
        for await (const e of client.watch<ConfigMap>(CONFIGMAP, { namespace: 'default', signal: ac.signal }))
          if (e.object.metadata.name === 'watched-through-rewrite') return e.type;
        return undefined;
      })();
      await env.request('POST', '/api/v1/namespaces/default/configmaps', {
        metadata: { name: 'watched-through-rewrite' },
      });
      assert.equal(await seen, 'ADDED');
    } finally {
      ac.abort();
      rule.remove();
    }
  });

  test('a watch cut mid-event ends inside a JSON line, and the client surfaces an error rather than half an object', async () => {
    const writer = setInterval(() => {
      void env
        .request('POST', '/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'mid-' } })
        .catch(() => undefined);
    }, 100);
    try {
      // On the wire: the body ends without its newline, and its last line does not parse.
      const raw = proxy.inject({ kind: 'cut-watch', afterMs: 300, midEvent: true, count: 1 });
      const cut = await rawGet('/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=30');
      assert.equal(raw.injected, 1);
      assert.ok(cut.aborted, 'the connection was destroyed, not ended');
      assert.ok(cut.body.length > 0 && !cut.body.endsWith('\n'), 'the body ends inside a line');
      const lines = cut.body.split('\n');
      assert.throws(() => JSON.parse(lines.at(-1)!) as unknown, 'the last line is a truncated JSON object');
      for (const line of lines.slice(0, -1)) JSON.parse(line); // every earlier event whole

      const viaClient = proxy.inject({ kind: 'cut-watch', afterMs: 300, midEvent: true, count: 1 });
      const events: ConfigMap[] = [];
      const started = Date.now();
      await assert.rejects(async () => {
        for await (const e of client.watch<ConfigMap>(CONFIGMAP, { namespace: 'default', timeoutSeconds: 60 }))
          if (e.type !== 'BOOKMARK') events.push(e.object);
      });
      assert.equal(viaClient.injected, 1);
      assert.ok(Date.now() - started < 10_000);
      assert.ok(
        events.every((o) => typeof o.metadata?.name === 'string'),
        'every event the client yielded is a whole object',
      );
    } finally {
      clearInterval(writer);
    }
  });

  test('cutWatches() cuts the watches open now, and only them', async () => {
    const ac = new AbortController();
    let opened!: () => void;
    const open = new Promise<void>((r) => (opened = r));
    const watching = (async () => {
      for await (const e of client.watch<ConfigMap>(CONFIGMAP, {
        namespace: 'default',
        timeoutSeconds: 60,
        signal: ac.signal,
      })) {
        if (e.object.metadata.name === 'before-cut') opened();
      }
    })();
    try {
      await env.request('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'before-cut' } });
      await open;
      assert.equal(proxy.cutWatches(), 1);
      await assert.rejects(watching, (err: unknown) => (err as { code?: string }).code === 'ERR_TRANSPORT');
      assert.equal(proxy.cutWatches(), 0, 'nothing is left open to cut');
      // Requests after the cut go through as before.
      assert.equal(
        (await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' })).metadata.name,
        'target',
      );
    } finally {
      ac.abort();
      await watching.catch(() => undefined);
    }
  });

  /** A GET through the proxy with the admin token, read to its end or its cut. */
  function rawGet(path: string): Promise<{ status: number; body: string; aborted: boolean }> {
    return new Promise((resolve, reject) => {
      const url = new URL(path, proxy.url);
      const req = httpsRequest(
        url,
        { ca: proxy.caPem, headers: { authorization: `Bearer ${env.adminToken}` } },
        (res) => {
          const chunks: Buffer[] = [];
          let aborted = false;
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('aborted', () => (aborted = true));
          res.on('error', () => (aborted = true));
          res.on('close', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              aborted: aborted || !res.complete,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  test('after clear(), requests pass through again', async () => {
    proxy.inject({ kind: 'status', status: 503 });
    proxy.clear();
    assert.equal((await client.get<ConfigMap>(CONFIGMAP, 'target', { namespace: 'default' })).metadata.name, 'target');
  });
});
