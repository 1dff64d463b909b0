import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { KubeClient } from '../client/kube-client.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { getCondition, setCondition, type ConditionInput } from './conditions.js';
import {
  conflictCount,
  createNamespace,
  gizmo,
  GIZMO,
  GIZMO_CRD,
  SERVERS,
  serverLabel,
  type Gizmo,
} from './testing/int-env.js';
import { patchStatus } from './status.js';
import { writeStatus } from './write-status.js';

const READY: ConditionInput = { type: 'Ready', status: 'True', reason: 'Done', message: 'all good' };

function withReady(generation: number | undefined) {
  return (latest: Gizmo): NonNullable<Gizmo['status']> => ({
    ...latest.status,
    message: 'computed',
    conditions: setCondition(latest.status?.conditions ?? [], { ...READY, observedGeneration: generation }),
  });
}

for (const server of SERVERS)
  describe(`writeStatus against ${serverLabel(server)}`, () => {
    let env: TestEnv;
    let client: KubeClient;
    let registry: Registry;

    before(async () => {
      env = await TestEnv.start({ server, crds: [GIZMO_CRD] });
      registry = new Registry();
      client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath, registry });
    });
    after(async () => {
      await client?.close();
      await env?.stop();
    });

    test('a status computed for generation 1 is refused over one that observed generation 2 (the simulation #880 pattern)', async () => {
      const ns = await createNamespace(client, 'ws');
      const staleRead = await client.create(gizmo(ns, 'g'));
      assert.equal(staleRead.metadata.generation, 1);
      // The spec changes and a newer reconcile reports on generation 2 before the stale one writes.
      const gen2 = await client.patch<Gizmo>(GIZMO, 'g', { spec: { size: 2 } }, { type: 'merge', namespace: ns });
      assert.equal(gen2.metadata.generation, 2);
      const { object: newer } = await patchStatus(client, gen2, { message: 'for generation 2' });
      assert.equal(newer.status?.observedGeneration, 2);

      const conflictsBefore = await conflictCount(registry);
      const result = await writeStatus(client, staleRead, withReady(1));
      assert.equal(result.outcome, 'superseded');
      assert.ok(result.outcome === 'superseded');
      assert.equal(result.generation, 1);
      assert.equal(result.observedGeneration, 2);
      assert.equal(await conflictCount(registry), conflictsBefore + 1, 'the stale write got its 409 from the server');

      const stored = await client.get<Gizmo>(GIZMO, 'g', { namespace: ns });
      assert.equal(stored.metadata.resourceVersion, newer.metadata.resourceVersion, 'nothing was written');
      assert.deepEqual(stored.status, { message: 'for generation 2', observedGeneration: 2 });
    });

    test("a real 409 from another writer's status change: re-read, recomputed, both conditions kept", async () => {
      const ns = await createNamespace(client, 'ws');
      const read = await client.create(gizmo(ns, 'g'));
      const other: ConditionInput = { type: 'Other', status: 'True', reason: 'Theirs', message: 'set by someone else' };
      await patchStatus(client, read, { conditions: setCondition([], { ...other, observedGeneration: 1 }) });

      const conflictsBefore = await conflictCount(registry);
      const result = await writeStatus(client, read, withReady(1));
      assert.equal(result.outcome, 'written');
      assert.equal(await conflictCount(registry), conflictsBefore + 1);
      assert.equal(result.object.status?.observedGeneration, 1);
      assert.equal(getCondition(result.object.status?.conditions, 'Other')?.reason, 'Theirs');
      assert.equal(getCondition(result.object.status?.conditions, 'Ready')?.reason, 'Done');

      assert.equal((await writeStatus(client, result.object, withReady(1))).outcome, 'unchanged');
    });
  });
