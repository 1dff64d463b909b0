import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { Manager } from './manager.js';

const SECRET = { apiVersion: 'v1', kind: 'Secret' } as const;
const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const SELECTOR = 'app.kubernetes.io/managed-by=db-operator';

const owned = (name: string, labels: Record<string, string>): KubeObject => ({
  ...SECRET,
  metadata: {
    name,
    namespace: 'ns',
    labels,
    ownerReferences: [
      { apiVersion: 'v1', kind: 'ConfigMap', name: `owner-of-${name}`, uid: `u-${name}`, controller: true },
    ],
  },
});

test("a controller's cache options give its owned kind a filtered informer; the manager's cache is unchanged", async () => {
  const fake = new FakeClient({
    objects: [
      { ...CONFIG_MAP, metadata: { name: 'owner-of-ours', namespace: 'ns' } },
      owned('ours', { 'app.kubernetes.io/managed-by': 'db-operator' }),
      owned('theirs', {}),
    ],
  });
  const manager = new Manager({ client: fake, clock: new FakeClock(0), metricsPort: 0, healthPort: 0 });
  let reconciled!: () => void;
  const ownerReconciled = new Promise<void>((resolve) => (reconciled = resolve));
  manager
    .controller('db')
    .for(CONFIG_MAP)
    .owns(SECRET)
    .withOptions({ cache: { labelSelectorsByKind: [{ ...SECRET, labelSelector: SELECTOR }] } })
    .complete(async (req) => {
      if (req.name === 'owner-of-ours') reconciled();
    });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await ownerReconciled;
    const secretInformers = manager.informers.list().filter((i) => i.name.includes('Secret'));
    assert.equal(secretInformers.length, 1, 'only the controller asked for Secrets, through its selector');
    assert.match(secretInformers[0]!.name, /labels=app\.kubernetes\.io\/managed-by=db-operator/);
    assert.deepEqual(
      secretInformers[0]!.reader.list().map((s) => s.metadata?.name),
      ['ours'],
      'the controller holds only its own Secrets',
    );
    // The manager's own reads are not narrowed by one controller's options: a second, unfiltered informer.
    assert.deepEqual((await manager.client.list(SECRET)).items.map((s) => s.metadata?.name).sort(), ['ours', 'theirs']);
    assert.equal(manager.informers.list().filter((i) => i.name.includes('Secret')).length, 2);
  } finally {
    stop.abort();
    await running;
  }
});
