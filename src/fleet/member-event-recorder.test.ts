import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kinds } from '../client/kinds.js';
import type { KubeObject } from '../core/object-key.js';
import { FakeClock } from '../core/fake-clock.js';
import type { RecordedEvent } from '../controller/event-recorder.js';
import { Manager } from '../manager/manager.js';
import { quietClient } from '../manager/testing/quiet-client.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { staticClusters } from './providers/static-clusters.js';
import { MemberEventRecorder } from './member-event-recorder.js';

const DB: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Database',
  metadata: { name: 'orders', namespace: 'shop' },
};

async function eventsIn(
  client: FakeClient,
): Promise<{ reason?: string; message?: string; involvedObject?: { name?: string } }[]> {
  return (await client.list(kinds.Event, { namespace: 'shop' })).items;
}

test('an Event about a member object is written to that member only, and the console hears of it with the cluster', async () => {
  const east = new FakeClient();
  const west = new FakeClient();
  const heard: RecordedEvent[] = [];
  const recorder = new MemberEventRecorder({
    component: 'db-fleet',
    clock: new FakeClock(0),
    onRecorded: (e) => heard.push(e),
  });
  const inEast = recorder.in({ name: 'east', apiClient: east });
  inEast.event(DB, 'Normal', 'Upgraded', 'version 16');
  await inEast.flush();
  assert.deepEqual(
    (await eventsIn(east)).map((e) => [e.reason, e.message, e.involvedObject?.name]),
    [['Upgraded', 'version 16', 'orders']],
  );
  assert.deepEqual(await eventsIn(west), [], 'nothing in the other member');
  assert.deepEqual(
    heard.map((e) => [e.cluster, e.reason, e.involvedObject.name]),
    [['east', 'Upgraded', 'orders']],
  );
  assert.equal(
    recorder.in({ name: 'east', apiClient: east }),
    inEast,
    'one recorder per member client: repeats aggregate',
  );
  const rotated = new FakeClient();
  assert.notEqual(
    recorder.in({ name: 'east', apiClient: rotated }),
    inEast,
    'a new client (rotated kubeconfig) gets its own',
  );
});

test('manager.memberEventRecorder declares Event create/patch in memberPermissions, and needs a fleet', () => {
  const plain = new Manager({ client: quietClient(), clock: new FakeClock(0), metricsPort: 0, healthPort: 0 });
  assert.throws(() => plain.memberEventRecorder('x'), { code: 'ERR_INVALID_OPTION' });
  const manager = new Manager({
    client: quietClient(),
    clock: new FakeClock(0),
    metricsPort: 0,
    healthPort: 0,
    fleet: { provider: staticClusters([]) },
  });
  assert.ok(!manager.memberPermissions().some((p) => p.resource.kind === 'Event'));
  manager.memberEventRecorder('db-fleet');
  assert.deepEqual(
    manager
      .memberPermissions()
      .filter((p) => p.resource.kind === 'Event')
      .map((p) => [...p.verbs]),
    [['create', 'patch']],
  );
  assert.ok(!manager.permissions().some((p) => p.resource.kind === 'Event'), 'nothing asked of the host');
});
