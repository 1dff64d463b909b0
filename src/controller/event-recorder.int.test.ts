/**
 * events.k8s.io/v1 Events on Kubernetes 1.20 (GA since 1.19), read back with kubectl: repeats of
 * one event are one Event with a series, and `kubectl events` shows it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../client/kube-client.js';
import { kubectl } from '../testing/control-plane/kubectl.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { EventRecorder } from './event-recorder.js';

const NS = 'events-v1';
let env: TestEnv;
let client: KubeClient;

before(async () => {
  env = await TestEnv.start();
  client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});
after(async () => {
  await client?.close();
  await env?.stop();
});

test('Kubernetes 1.20: repeated occurrences are one events.k8s.io/v1 Event with series.count > 1, shown by kubectl', async () => {
  const cm = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: NS } });
  const recorder = new EventRecorder({ client, component: 'cfg-operator', host: 'test-host' });
  for (let i = 0; i < 3; i++) recorder.event(cm, 'Warning', 'SyncFailed', 'backend unreachable');
  await recorder.flush();
  assert.equal(recorder.dropped, 0);

  const v1 = JSON.parse(
    await kubectl(env.kubeconfigPath, ['get', 'events.v1.events.k8s.io', '-n', NS, '-o', 'json']),
  ) as {
    items: {
      reason?: string;
      note?: string;
      reportingController?: string;
      regarding?: { kind?: string; name?: string };
      series?: { count?: number; lastObservedTime?: string };
    }[];
  };
  assert.equal(v1.items.length, 1, 'one Event for three occurrences');
  const [event] = v1.items;
  assert.deepEqual(
    [event!.reason, event!.note, event!.reportingController, event!.regarding?.kind, event!.regarding?.name],
    ['SyncFailed', 'backend unreachable', 'cfg-operator', 'ConfigMap', 'cfg'],
  );
  assert.equal(event!.series?.count, 3);
  assert.ok(event!.series?.lastObservedTime, 'series.lastObservedTime is set');

  // kubectl's own views: core/v1 (`get events`) and `kubectl events`.
  const table = await kubectl(env.kubeconfigPath, ['events', '-n', NS]);
  assert.match(table, /Warning\s+SyncFailed\s+configmap\/cfg\s+backend unreachable/i);
  const core = JSON.parse(await kubectl(env.kubeconfigPath, ['get', 'events', '-n', NS, '-o', 'json'])) as {
    items: { reason?: string; message?: string }[];
  };
  assert.deepEqual(
    core.items.map((e) => [e.reason, e.message]),
    [['SyncFailed', 'backend unreachable']],
  );
});
