import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { KubeClient } from '../client/kube-client.js';
import { METADATA_ONLY_ACCEPT } from '../client/partial-object-metadata.js';
import { WatchDecoder, type RawWatchEvent } from '../client/watch-decoder.js';
import type { KubeObject } from '../core/object-key.js';
import { clientListerWatcher } from './client-lister-watcher.js';
import { SharedInformer } from './informer.js';

const SECRET = { apiVersion: 'v1', kind: 'Secret' } as const;
const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const NS = 'meta-only';

describe('metadata-only list, watch and informer against a real API server', () => {
  let env: TestEnv;
  let client: KubeClient;

  before(async () => {
    env = await TestEnv.start();
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (const name of ['s1', 's2', 's3']) {
      await client.create<Secret>({
        ...SECRET,
        metadata: { name, namespace: NS, labels: { app: 'db' } },
        stringData: { password: `pw-${name}` },
      });
    }
    for (const name of ['c1', 'c2', 'c3'])
      await client.create<ConfigMap>({ ...CM, metadata: { name, namespace: NS }, data: { big: 'x'.repeat(1000) } });
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });

  test('the server answers our Accept headers with PartialObjectMetadataList and PartialObjectMetadata events', async () => {
    const list = await client.transport.request<{
      kind: string;
      items: Record<string, unknown>[];
      metadata: { resourceVersion: string };
    }>({
      method: 'GET',
      path: `/api/v1/namespaces/${NS}/secrets`,
      headers: { accept: METADATA_ONLY_ACCEPT.list },
    });
    assert.equal(list.body.kind, 'PartialObjectMetadataList');
    assert.equal(list.body.items.length, 3);
    for (const item of list.body.items) assert.equal('data' in item, false);

    const ac = new AbortController();
    const res = await client.transport.stream({
      method: 'GET',
      path: `/api/v1/namespaces/${NS}/secrets?watch=true&resourceVersion=0&timeoutSeconds=5`,
      headers: { accept: METADATA_ONLY_ACCEPT.watch },
      signal: ac.signal,
      bodyTimeoutMs: 10_000,
    });
    const decoder = new WatchDecoder();
    const events: RawWatchEvent[] = [];
    try {
      for await (const chunk of res.body) {
        events.push(...decoder.push(chunk));
        if (events.length >= 3) break;
      }
    } finally {
      res.destroy();
      ac.abort();
    }
    assert.ok(events.length >= 3);
    for (const e of events) {
      assert.equal(e.object.kind, 'PartialObjectMetadata');
      assert.equal('data' in e.object, false);
    }
  });

  test('KubeClient lists metadata only across continue pages, with the kind it was asked for', async () => {
    const pages: ConfigMap[][] = [];
    for await (const p of client.listPages<ConfigMap>(CM, { namespace: NS, limit: 1, metadataOnly: true }))
      pages.push(p.items);
    assert.ok(pages.length >= 3, `paged: ${pages.length} pages`);
    const items = pages.flat();
    assert.deepEqual(items.map((i) => i.metadata?.name).sort(), ['c1', 'c2', 'c3']);
    for (const i of items) {
      assert.deepEqual(Object.keys(i).sort(), ['apiVersion', 'kind', 'metadata']);
      assert.equal(i.kind, 'ConfigMap');
      assert.equal(i.data, undefined);
    }
    const full = await client.list<ConfigMap>(CM, { namespace: NS });
    assert.equal(full.items[0]?.data?.big?.length, 1000, 'without the option the data is there');
  });

  test('a metadata-only informer caches Secrets without their data, and follows adds, label changes and deletes', async () => {
    const informer = new SharedInformer<KubeObject>(
      clientListerWatcher(client, { ...SECRET, namespace: NS, metadataOnly: true }),
      { name: 'secrets-meta' },
    );
    const ac = new AbortController();
    const done = informer.start(ac.signal);
    try {
      await informer.waitForSync(ac.signal, 30_000);
      assert.deepEqual(
        informer.reader.keys().sort(),
        ['s1', 's2', 's3'].map((n) => `${NS}/${n}`),
      );
      await client.create<Secret>({
        ...SECRET,
        metadata: { name: 's4', namespace: NS },
        stringData: { password: 'pw-s4' },
      });
      await client.patch(
        SECRET,
        's1',
        { metadata: { labels: { app: 'db', tier: 'gold' } } },
        { namespace: NS, type: 'merge' },
      );
      await client.delete(SECRET, 's2', { namespace: NS });
      await eventually('watch changes reach the metadata-only cache', () => {
        const s1 = informer.reader.get(`${NS}/s1`);
        return (
          informer.reader.has(`${NS}/s4`) && !informer.reader.has(`${NS}/s2`) && s1?.metadata?.labels?.tier === 'gold'
        );
      });
      for (const obj of informer.reader.list()) {
        assert.deepEqual(
          Object.keys(obj).sort(),
          ['apiVersion', 'kind', 'metadata'],
          `${obj.metadata?.name} carries only metadata`,
        );
        assert.equal(obj.kind, 'Secret');
        assert.ok(obj.metadata?.uid && obj.metadata.resourceVersion);
      }
      assert.ok(!JSON.stringify(informer.reader.list()).includes('pw-'), 'no Secret data is cached');
    } finally {
      ac.abort();
      await done;
    }
  });
});
