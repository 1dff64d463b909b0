/**
 * The shardSelector support probe against real servers: Kubernetes 1.36 with the
 * `ShardedListAndWatch` gate honours the selector; 1.36 without the gate and 1.20 accept the
 * parameter and ignore it (the probe must tell these apart, since both answer 200).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { KubeClient } from '../client/kube-client.js';
import { ApiError } from '../client/api-error.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { NOTE_CRD } from '../testing/conformance/client-conformance.js';
import { formatShardSelector, splitHashSpace } from '../client/shard-selector.js';
import { INVALID_PROBE_SELECTOR, probeShardSelectorSupport } from './server-support.js';

const NOTE = { apiVersion: 'example.com/v1', kind: 'Note' } as const;

/** Starts the env, gives a client, stops both after the suite. */
function envSuite(start: () => Promise<TestEnv>): { client: () => KubeClient; namespace: () => string } {
  let env: TestEnv | undefined;
  let client: KubeClient | undefined;
  // 1.20 needs an existing namespace; on the CRD-only server any name works.
  let namespace = 'default';
  before(async () => {
    env = await start();
    client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
    if (env.serverKind === 'modern') namespace = `probe-${randomBytes(3).toString('hex')}`;
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });
  return { client: () => client!, namespace: () => namespace };
}

async function createNotes(client: KubeClient, namespace: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await client.create({ ...NOTE, metadata: { name: `note-${i}`, namespace } });
}

describe('shardSelector support probe on Kubernetes 1.36 with ShardedListAndWatch', () => {
  const s = envSuite(() =>
    TestEnv.start({ server: 'modern', featureGates: { ShardedListAndWatch: true }, crds: [NOTE_CRD] }),
  );

  test('honoured: on an empty collection (an invalid selector is refused) and with objects (the snapshot leaves the object out)', async () => {
    assert.deepEqual(await probeShardSelectorSupport(s.client(), NOTE, { namespace: s.namespace() }), {
      honoured: true,
      evidence: 'rejected-invalid',
    });
    await createNotes(s.client(), s.namespace(), 3);
    assert.deepEqual(await probeShardSelectorSupport(s.client(), NOTE, { namespace: s.namespace() }), {
      honoured: true,
      evidence: 'filtered',
    });
    assert.deepEqual(
      await probeShardSelectorSupport(s.client(), NOTE),
      { honoured: true, evidence: 'filtered' },
      'across all namespaces',
    );
    assert.deepEqual(
      await probeShardSelectorSupport(s.client(), NOTE, { field: 'namespace' }),
      { honoured: true, evidence: 'filtered' },
      'hashing the namespace',
    );
  });

  test('an invalid selector is a 500 "invalid shard selector" (the fake client answers the same), and the list echoes no shardInfo for custom resources', async () => {
    await assert.rejects(s.client().listPage(NOTE, { shardSelector: INVALID_PROBE_SELECTOR }), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 500);
      assert.equal(e.reason, 'InternalError');
      assert.match(
        e.message,
        /invalid shard selector: shard range start 0x8000000000000000 must be less than end 0x0000000000000000/,
      );
      return true;
    });
    const page = await s.client().listPage(NOTE, { shardSelector: formatShardSelector(splitHashSpace(2)[0]!) });
    assert.equal(page.shardInfo, undefined, 'if a later build echoes it, the probe takes it as evidence');
  });
});

describe('shardSelector support probe on Kubernetes 1.36 without the gate', () => {
  const s = envSuite(() => TestEnv.start({ server: 'modern', crds: [NOTE_CRD] }));

  test('not honoured: the parameter is accepted and ignored, empty or not', async () => {
    assert.deepEqual(await probeShardSelectorSupport(s.client(), NOTE, { namespace: s.namespace() }), {
      honoured: false,
      evidence: 'accepted-invalid',
    });
    await createNotes(s.client(), s.namespace(), 3);
    assert.deepEqual(await probeShardSelectorSupport(s.client(), NOTE, { namespace: s.namespace() }), {
      honoured: false,
      evidence: 'unfiltered',
    });
  });
});

describe('shardSelector support probe on Kubernetes 1.20', () => {
  const s = envSuite(() => TestEnv.start({ crds: [NOTE_CRD] }));

  test('1.20 ignores an unknown shardSelector query parameter: every object comes back, even for a malformed selector; the probe says not honoured', async () => {
    const namespace = s.namespace();
    assert.deepEqual(await probeShardSelectorSupport(s.client(), NOTE, { namespace }), {
      honoured: false,
      evidence: 'accepted-invalid',
    });
    await createNotes(s.client(), namespace, 6);
    for (const shardSelector of [
      formatShardSelector(splitHashSpace(2)[0]!),
      formatShardSelector(splitHashSpace(2)[1]!),
      INVALID_PROBE_SELECTOR,
      'not even CEL (',
    ]) {
      assert.equal((await s.client().list(NOTE, { namespace, shardSelector })).items.length, 6, shardSelector);
    }
    assert.deepEqual(await probeShardSelectorSupport(s.client(), NOTE, { namespace }), {
      honoured: false,
      evidence: 'unfiltered',
    });
  });
});
