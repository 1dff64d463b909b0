import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { ApiError } from '../client/api-error.js';
import type { ListPage, ListPageOptions } from '../client/client-options.js';
import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../core/object-key.js';
import { INVALID_PROBE_SELECTOR, probeShardSelectorSupport } from './server-support.js';

const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;

async function withObjects(client: FakeClient, count: number, namespace = 'default'): Promise<void> {
  for (let i = 0; i < count; i++) await client.create({ ...CONFIGMAP, metadata: { name: `cm-${i}`, namespace } });
}

/** Records each listPage call's options, passing it on. */
function recording(client: FakeClient): { listPage: FakeClient['listPage']; calls: ListPageOptions[] } {
  const calls: ListPageOptions[] = [];
  return {
    calls,
    listPage: <T = KubeObject>(type: Kind<T>, opts: ListPageOptions = {}): Promise<ListPage<T>> => {
      calls.push(opts);
      return client.listPage(type, opts);
    },
  };
}

describe('probeShardSelectorSupport', () => {
  test('honouring server with objects: decided from one snapshot by leaving out the first object (2 one-item lists)', async () => {
    for (const count of [1, 2, 50]) {
      const fake = new FakeClient();
      await withObjects(fake, count);
      const probe = recording(fake);
      assert.deepEqual(
        await probeShardSelectorSupport(probe, CONFIGMAP),
        { honoured: true, evidence: 'filtered' },
        `count ${count}`,
      );
      assert.equal(probe.calls.length, 2);
      assert.ok(probe.calls.every((c) => c.limit === 1));
      assert.equal(probe.calls[1]!.resourceVersionMatch, 'Exact');
      assert.equal(probe.calls[1]!.resourceVersion, (await fake.listPage(CONFIGMAP, { limit: 1 })).resourceVersion);
    }
  });

  test('ignoring server (1.20, or 1.36 without the gate) with objects: the out-of-range object comes back', async () => {
    for (const count of [1, 2, 50]) {
      const fake = new FakeClient({ shardedListAndWatch: false });
      await withObjects(fake, count);
      assert.deepEqual(
        await probeShardSelectorSupport(fake, CONFIGMAP),
        { honoured: false, evidence: 'unfiltered' },
        `count ${count}`,
      );
    }
  });

  test('empty collection: an invalid selector is refused by an honouring server and answered by an ignoring one', async () => {
    assert.deepEqual(await probeShardSelectorSupport(new FakeClient(), CONFIGMAP), {
      honoured: true,
      evidence: 'rejected-invalid',
    });
    assert.deepEqual(await probeShardSelectorSupport(new FakeClient({ shardedListAndWatch: false }), CONFIGMAP), {
      honoured: false,
      evidence: 'accepted-invalid',
    });
    const fake = new FakeClient();
    await withObjects(fake, 3, 'elsewhere');
    assert.deepEqual(
      await probeShardSelectorSupport(fake, CONFIGMAP, { namespace: 'default' }),
      { honoured: true, evidence: 'rejected-invalid' },
      'scoped to an empty namespace',
    );
    assert.deepEqual(await probeShardSelectorSupport(fake, CONFIGMAP, { namespace: 'elsewhere' }), {
      honoured: true,
      evidence: 'filtered',
    });
  });

  test('a list echoing shardInfo is taken at its word', async () => {
    const fake = new FakeClient({ shardedListAndWatch: false });
    await withObjects(fake, 5);
    const echoing = {
      listPage: async <T = KubeObject>(type: Kind<T>, opts: ListPageOptions = {}): Promise<ListPage<T>> => {
        const page = await fake.listPage(type, opts);
        return opts.shardSelector ? { ...page, items: [], shardInfo: { selector: opts.shardSelector } } : page;
      },
    };
    assert.deepEqual(await probeShardSelectorSupport(echoing, CONFIGMAP), { honoured: true, evidence: 'shard-info' });
  });

  test('a compacted snapshot (410) falls back to the invalid-selector question; other errors are thrown', async () => {
    const fake = new FakeClient();
    await withObjects(fake, 5);
    const gone = {
      listPage: async <T = KubeObject>(type: Kind<T>, opts: ListPageOptions = {}): Promise<ListPage<T>> => {
        if (opts.resourceVersionMatch === 'Exact')
          throw new ApiError({ status: 410, reason: 'Expired', message: 'too old resource version' });
        return fake.listPage(type, opts);
      },
    };
    assert.deepEqual(await probeShardSelectorSupport(gone, CONFIGMAP), {
      honoured: true,
      evidence: 'rejected-invalid',
    });
    const forbidden = {
      listPage: (): Promise<ListPage<never>> =>
        Promise.reject(new ApiError({ status: 403, reason: 'Forbidden', message: 'configmaps is forbidden' })),
    };
    await assert.rejects(
      probeShardSelectorSupport(forbidden, CONFIGMAP),
      (e: unknown) => e instanceof ApiError && e.status === 403,
    );
    const unrelated500 = {
      listPage: (): Promise<ListPage<never>> =>
        Promise.reject(
          new ApiError({ status: 500, reason: 'InternalError', message: 'etcdserver: request timed out' }),
        ),
    };
    await assert.rejects(
      probeShardSelectorSupport(unrelated500, CONFIGMAP),
      (e: unknown) => e instanceof ApiError && /etcdserver/.test(e.message),
      'a 500 not about the selector is no evidence',
    );
  });

  test('the invalid probe selector is well-formed but empty (start > end), so only its range is wrong', async () => {
    await assert.rejects(
      new FakeClient().listPage(CONFIGMAP, { shardSelector: INVALID_PROBE_SELECTOR }),
      (e: unknown) => {
        assert.ok(e instanceof ApiError);
        assert.equal(e.status, 500);
        assert.match(
          e.message,
          /invalid shard selector: shard range start 0x8000000000000000 must be less than end 0x0000000000000000/,
        );
        return true;
      },
    );
  });
});
