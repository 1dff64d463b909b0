/**
 * The Database reconciler works in the request's cluster: one instance over the host and every
 * fleet member writes each cluster's objects, status and Events into that cluster.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetricsRegistry, isNotFound, type EventType, type KubeObject } from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import { FakeClient } from 'operator-runtime/testing/fake-client';
import { recordingLogger } from 'operator-runtime/testing';
import { BackupClient } from './backup-client.js';
import { DATABASE } from './database.js';
import type { ClusterView } from 'operator-runtime';
import { DatabaseReconciler, SECRET, STATEFUL_SET } from './database-reconciler.js';

function member(name: string, version: string): ClusterView & { fake: FakeClient } {
  const fake = new FakeClient({
    crds: [customResourceDefinition(DATABASE)],
    objects: [
      {
        apiVersion: 'example.com/v1',
        kind: 'Database',
        metadata: { name: 'orders', namespace: 'shop' },
        spec: { engine: 'postgres', version, replicas: 1, storage: '1Gi' },
      },
    ],
  });
  return { name, labels: {}, client: fake, apiClient: fake, synced: true, fake };
}

test("one reconciler over the host and a fleet member writes each cluster's Database objects, status and Events into that cluster", async () => {
  const a = member('', '15'); // the host cluster
  const b = member('b', '16');
  const events: { cluster: string; reason: string }[] = [];
  const bound: string[] = [];
  const backups = new BackupClient({ registry: createMetricsRegistry() });
  const reconciler = new DatabaseReconciler({
    backups,
    defaultBackupEndpoint: 'http://backup.invalid:8090',
    recorderFor: (cluster) => {
      bound.push(cluster.name);
      return {
        event: (_obj: KubeObject, _type: EventType, reason: string) =>
          void events.push({ cluster: cluster.name, reason }),
      };
    },
  });
  try {
    for (const round of [1, 2])
      for (const m of [a, b]) {
        await reconciler.reconcile(
          { ...(m.name ? { cluster: m.name } : {}), namespace: 'shop', name: 'orders' },
          {
            cluster: m,
            signal: new AbortController().signal,
            log: recordingLogger({ round }),
            reconcileID: `${m.name}-${round}`,
            get: () =>
              m.fake.get(DATABASE, 'orders', { namespace: 'shop' }).catch((err: unknown) => {
                if (isNotFound(err)) return undefined;
                throw err;
              }),
          },
        );
      }
    assert.deepEqual(bound, ['', 'b', '', 'b'], "the recorder of the request's cluster, each reconcile");
    for (const m of [a, b]) {
      const sts = await m.fake.get(STATEFUL_SET, 'orders', { namespace: 'shop' });
      const image = sts.spec?.template.spec?.containers[0]?.image;
      assert.equal(
        image,
        m === a ? 'postgres:15' : 'postgres:16',
        `${m.name}'s StatefulSet runs its own Database's version`,
      );
      await m.fake.get(SECRET, 'orders-credentials', { namespace: 'shop' });
      const db = await m.fake.get(DATABASE, 'orders', { namespace: 'shop' });
      assert.equal(db.status?.observedGeneration, db.metadata.generation);
      assert.equal(db.status?.phase, 'Provisioning');
    }
    assert.deepEqual(events, [
      { cluster: '', reason: 'SecretCreated' },
      { cluster: 'b', reason: 'SecretCreated' },
    ]);
  } finally {
    await backups.close();
  }
});
