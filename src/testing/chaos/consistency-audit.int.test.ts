import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TestEnv } from '../control-plane/test-env.js';
import {
  auditConsistency,
  formatAuditReport,
  readEtcdHistory,
  registryKey,
  type RecordedWrite,
} from './consistency-audit.js';
import { WIDGET_CRD } from '../conformance/client-conformance.js';

const PREFIX = '/registry/example.com/widgets/';
const widgets = '/apis/example.com/v1/namespaces/default/widgets';

interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; resourceVersion: string; generation: number };
  spec: { size: number };
  status?: { observedGeneration?: number; message?: string };
}

describe('consistency audit against a real API server and etcd', () => {
  let env: TestEnv;
  let startRevision: number;
  const writes: RecordedWrite[] = [];
  let conflicts = 0;

  before(async () => {
    env = await TestEnv.start({ crds: [WIDGET_CRD] });
    startRevision = (await env.etcdRevision()) + 1;
  });
  after(async () => {
    await env?.stop();
  });

  /** A reconciler's status write: read, set observedGeneration, PUT /status with the read resourceVersion; retry on 409. */
  async function reconcileStatus(name: string, writer: string): Promise<void> {
    for (;;) {
      const read = (await env.request<Widget>('GET', `${widgets}/${name}`)).body;
      const next = {
        ...read,
        status: { observedGeneration: read.metadata.generation, message: `${writer} saw size ${read.spec.size}` },
      };
      const res = await env.request<Widget>('PUT', `${widgets}/${name}/status`, next);
      if (res.status === 409) {
        conflicts++;
        continue;
      }
      assert.equal(res.status, 200, JSON.stringify(res.body));
      writes.push({
        key: registryKey(PREFIX, 'default', name),
        readRevision: read.metadata.resourceVersion,
        writtenRevision: res.body.metadata.resourceVersion,
        writer,
      });
      return;
    }
  }

  test('conditioned writes from concurrent writers, conflicts included, show no lost update and no out-of-order status', async () => {
    for (const name of ['w1', 'w2', 'w3']) {
      const res = await env.request<Widget>('POST', widgets, {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name },
        spec: { size: 1 },
      });
      assert.equal(res.status, 201);
      writes.push({
        key: registryKey(PREFIX, 'default', name),
        readRevision: 0,
        writtenRevision: res.body.metadata.resourceVersion,
        writer: 'creator',
      });
    }
    // Spec bumps interleaved with two status writers racing on the same objects.
    for (let round = 2; round <= 5; round++) {
      await Promise.all(
        ['w1', 'w2', 'w3'].map(async (name) => {
          const bump = env.request(
            'PATCH',
            `${widgets}/${name}`,
            { spec: { size: round } },
            { 'content-type': 'application/merge-patch+json' },
          );
          await Promise.all([bump, reconcileStatus(name, 'replica-a'), reconcileStatus(name, 'replica-b')]);
        }),
      );
    }
    // Settle: the last status reflects the last spec.
    for (const name of ['w1', 'w2', 'w3']) await reconcileStatus(name, 'replica-a');
    assert.equal((await env.request('DELETE', `${widgets}/w3`)).status, 200);

    const report = await auditConsistency({ etcd: env, prefix: PREFIX, startRevision, writes });
    console.log(`# ${formatAuditReport(report).split('\n')[0]}; ${conflicts} conflicts retried`);
    assert.ok(conflicts > 0, 'the writers never conflicted: the test did not exercise 409s');
    assert.equal(report.lostUpdates, 0, formatAuditReport(report));
    assert.equal(report.outOfOrderStatusWrites, 0, formatAuditReport(report));
    assert.equal(report.historyGaps, 0, formatAuditReport(report));
    assert.equal(report.keys, 3);
    assert.equal(report.deletes, 1);
    assert.ok(report.puts >= writes.length, `${report.puts} puts for ${writes.length} recorded writes`);
    assert.deepEqual(report.notConverged, []);
  });

  test('a stale writer that patches status without a precondition is reported as a lost update and an out-of-order write', async () => {
    const stale = (await env.request<Widget>('GET', `${widgets}/w1`)).body; // observedGeneration = generation = 5
    const bumped = await env.request<Widget>(
      'PATCH',
      `${widgets}/w1`,
      { spec: { size: 9 } },
      { 'content-type': 'application/merge-patch+json' },
    );
    await reconcileStatus('w1', 'replica-a'); // records observedGeneration 6
    // The stale writer computed its status from the old read and sends it with no resourceVersion:
    // the API server applies it on top of revisions it never saw.
    const blind = await env.request<Widget>(
      'PATCH',
      `${widgets}/w1/status`,
      { status: { observedGeneration: stale.metadata.generation, message: 'stale' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(blind.status, 200);
    const blindWrite: RecordedWrite = {
      key: registryKey(PREFIX, 'default', 'w1'),
      readRevision: stale.metadata.resourceVersion,
      writtenRevision: blind.body.metadata.resourceVersion,
      writer: 'stale-replica',
    };

    const report = await auditConsistency({
      etcd: env.etcdEndpoints,
      prefix: PREFIX,
      startRevision,
      writes: [...writes, blindWrite],
    });
    const kinds = report.findings.map((f) => `${f.kind}@${f.revision}`);
    assert.deepEqual(
      kinds.sort(),
      [
        `observed-generation-decreased@${blind.body.metadata.resourceVersion}`,
        `write-not-conditioned-on-read@${blind.body.metadata.resourceVersion}`,
      ].sort(),
      formatAuditReport(report),
    );
    assert.equal(report.lostUpdates, 1);
    assert.equal(report.outOfOrderStatusWrites, 1);
    assert.deepEqual(
      report.notConverged.map((n) => n.key),
      [registryKey(PREFIX, 'default', 'w1')],
    );
    assert.equal(bumped.body.metadata.generation, stale.metadata.generation + 1);
  });

  test('the audit leaves no sentinel key behind and refuses a compacted start revision', async () => {
    const leftovers = await env.etcdctl(['get', '/registry/example.com/widgets0', '--prefix', '--keys-only']);
    assert.equal(leftovers.trim(), '');
    await env.compact();
    await assert.rejects(
      readEtcdHistory({ endpoints: env.etcdEndpoint, prefix: PREFIX, startRevision, timeoutMs: 10_000 }),
      (err: unknown) =>
        (err as { code?: string }).code === 'ERR_CONSISTENCY_AUDIT' && /compacted/.test((err as Error).message),
    );
  });
});
