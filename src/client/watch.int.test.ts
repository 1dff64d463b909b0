import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { AbortedError } from '../core/errors.js';
import { ApiError, isGone } from './api-error.js';
import { KubeClient } from './kube-client.js';
import type { WatchEvent } from './watch-decoder.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

describe('watch against a real API server', () => {
  let env: TestEnv;
  let client: KubeClient;

  before(async () => {
    // Watch cache off: watches are served from etcd, so a compaction makes older resourceVersions
    // answer 410 at once (with the cache on, only falling out of its window does).
    env = await TestEnv.start({ watchCache: false });
    client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });

  test('a watch resumed from a resourceVersion delivers exactly the changes after it, in order', async () => {
    const ns = 'default';
    const c1 = await client.create<ConfigMap>({ ...CM, metadata: { name: 'resume', namespace: ns }, data: { v: '1' } });
    const c2 = await client.update<ConfigMap>({ ...c1, data: { v: '2' } });
    const c3 = await client.update<ConfigMap>({ ...c2, data: { v: '3' } });
    const c4 = await client.update<ConfigMap>({ ...c3, data: { v: '4' } });
    await client.delete(CM, 'resume', { namespace: ns });
    const seen: [string, string | undefined, string | undefined][] = [];
    for await (const e of client.watch<ConfigMap>(CM, {
      namespace: ns,
      fieldSelector: 'metadata.name=resume',
      resourceVersion: c2.metadata!.resourceVersion,
    })) {
      if (e.type === 'BOOKMARK') continue;
      seen.push([e.type, e.object.metadata?.resourceVersion, e.object.data?.v]);
      if (e.type === 'DELETED') break;
    }
    assert.deepEqual(seen.slice(0, 2), [
      ['MODIFIED', c3.metadata?.resourceVersion, '3'],
      ['MODIFIED', c4.metadata?.resourceVersion, '4'],
    ]);
    assert.equal(seen.length, 3);
    assert.equal(seen[2]![0], 'DELETED');
  });

  test('live changes arrive as typed events with the same shape as list items', async () => {
    const ns = 'default';
    const { items, resourceVersion } = await client.list<ConfigMap>(CM, { namespace: ns });
    const listShape = items.map((i) => [i.apiVersion, i.kind]);
    const ac = new AbortController();
    const events: WatchEvent<ConfigMap>[] = [];
    // Settles as a value at once, so the rejection is never briefly unhandled.
    const ended = (async () => {
      for await (const e of client.watch<ConfigMap>(CM, {
        namespace: ns,
        resourceVersion,
        allowWatchBookmarks: true,
        signal: ac.signal,
      })) {
        if (e.type === 'BOOKMARK') continue;
        events.push(e);
        if (events.length === 2) ac.abort();
      }
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    const created = await client.create<ConfigMap>({ ...CM, metadata: { name: 'live', namespace: ns } });
    await client.patch(CM, 'live', { data: { x: 'y' } }, { type: 'merge', namespace: ns });
    assert.ok((await ended) instanceof AbortedError, 'aborting the signal ends the watch with AbortedError');
    assert.deepEqual(
      events.map((e) => [e.type, e.object.apiVersion, e.object.kind, e.object.metadata?.name]),
      [
        ['ADDED', 'v1', 'ConfigMap', 'live'],
        ['MODIFIED', 'v1', 'ConfigMap', 'live'],
      ],
    );
    assert.equal(events[0]!.object.metadata?.uid, created.metadata?.uid);
    for (const shape of listShape) assert.deepEqual(shape, ['v1', 'ConfigMap']);
  });

  test('a watch with timeoutSeconds ends cleanly when the server closes it', async () => {
    const { resourceVersion } = await client.list(CM, { namespace: 'kube-system' });
    const start = Date.now();
    let n = 0;
    for await (const _ of client.watch(CM, { namespace: 'kube-system', resourceVersion, timeoutSeconds: 1 })) n++;
    assert.equal(n, 0);
    assert.ok(Date.now() - start < 10_000);
  });

  test('after an etcd compaction a watch from an older resourceVersion throws a typed Gone ApiError', async () => {
    const old = await client.create<ConfigMap>({
      ...CM,
      metadata: { name: 'gone', namespace: 'default' },
      data: { v: '0' },
    });
    let cur = old;
    for (let i = 1; i <= 5; i++) cur = await client.update<ConfigMap>({ ...cur, data: { v: String(i) } });
    await env.compact();
    await assert.rejects(
      (async () => {
        for await (const e of client.watch(CM, {
          namespace: 'default',
          resourceVersion: old.metadata!.resourceVersion,
        }))
          assert.fail(`no event expected, got ${e.type}`);
      })(),
      (e: unknown) => {
        assert.ok(e instanceof ApiError, String(e));
        assert.ok(isGone(e));
        assert.equal(e.status, 410);
        return true;
      },
    );
    // The current resourceVersion still works after the compaction.
    const ac = new AbortController();
    const next = (async () => {
      for await (const e of client.watch<ConfigMap>(CM, {
        namespace: 'default',
        resourceVersion: cur.metadata!.resourceVersion,
        signal: ac.signal,
      })) {
        ac.abort();
        return e.type;
      }
    })();
    await client.delete(CM, 'gone', { namespace: 'default' });
    assert.equal(await next, 'DELETED');
  });
});
