import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { InformerFactory } from './informer-factory.js';
import { informerKey, informerName } from './informer-spec.js';
import type { InformerSpec } from './informer-spec.js';
import { FakeListerWatcher } from './testing/fake-lister-watcher.js';
import { IndexError, InvalidLabelSelectorError } from './errors.js';

const obj = (kind: string, name: string, ns = 'a'): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, namespace: ns },
});

function setup() {
  const clock = new FakeClock(0);
  const created: InformerSpec[] = [];
  const sources = new Map<string, FakeListerWatcher<KubeObject>>();
  const factory = new InformerFactory(
    (spec) => {
      created.push(spec);
      const lw = new FakeListerWatcher<KubeObject>([obj(spec.kind, 'x', spec.namespace ?? 'a')]);
      sources.set(informerKey(spec), lw);
      return lw;
    },
    { clock, random: () => 0 },
  );
  return { clock, created, sources, factory };
}

test('one informer, so one watch, serves every request for the same kind, scope and selectors', () => {
  const { factory, created } = setup();
  const a = factory.informerFor({ apiVersion: 'v1', kind: 'Pod', labelSelector: 'b=2, a==1' });
  const b = factory.informerFor({ apiVersion: 'v1', kind: 'Pod', labelSelector: 'a=1,b=2' });
  assert.equal(a, b);
  assert.notEqual(factory.informerFor({ apiVersion: 'v1', kind: 'Pod' }), a);
  assert.notEqual(factory.informerFor({ apiVersion: 'v1', kind: 'Pod', namespace: 'x', labelSelector: 'a=1,b=2' }), a);
  assert.notEqual(
    factory.informerFor({ apiVersion: 'v1', kind: 'Pod', labelSelector: 'a=1,b=2', metadataOnly: true }),
    a,
  );
  assert.equal(created.length, 4);
  assert.deepEqual(
    created[0],
    { apiVersion: 'v1', kind: 'Pod', labelSelector: 'a=1,b=2' },
    'the source gets the canonical selector',
  );
});

test('spec keys ignore selector order and whitespace but not content, and names are readable', () => {
  assert.equal(
    informerKey({ apiVersion: 'v1', kind: 'Pod', fieldSelector: 'b=2, a=1' }),
    informerKey({ apiVersion: 'v1', kind: 'Pod', fieldSelector: 'a=1,b=2' }),
  );
  assert.notEqual(
    informerKey({ apiVersion: 'v1', kind: 'Pod', fieldSelector: 'a=1' }),
    informerKey({ apiVersion: 'v1', kind: 'Pod', fieldSelector: 'a=2' }),
  );
  assert.equal(
    informerKey({ apiVersion: 'v1', kind: 'Pod', labelSelector: '' }),
    informerKey({ apiVersion: 'v1', kind: 'Pod' }),
  );
  assert.equal(
    informerName({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'x', labelSelector: 'app=db' }),
    'apps/v1 Deployment ns=x labels=app=db',
  );
  assert.throws(
    () => informerKey({ apiVersion: 'v1', kind: 'Pod', labelSelector: 'a in (' }),
    InvalidLabelSelectorError,
  );
});

test('the factory starts its informers, starts later ones at once, and resolves only after all stopped', async () => {
  const { factory, clock } = setup();
  const pods = factory.informerFor({ apiVersion: 'v1', kind: 'Pod' });
  const ac = new AbortController();
  const run = factory.start(ac.signal);
  await clock.advance(0);
  assert.equal(pods.hasSynced(), true);
  const late = factory.informerFor({ apiVersion: 'v1', kind: 'Secret' });
  assert.equal(factory.hasSynced(), false);
  await factory.waitForSync(ac.signal);
  assert.equal(late.hasSynced(), true);
  assert.deepEqual(
    factory.health().map((h) => [h.name, h.state, h.objects]),
    [
      ['v1 Pod', 'watching', 1],
      ['v1 Secret', 'watching', 1],
    ],
  );
  ac.abort();
  await run;
  assert.deepEqual(
    factory.health().map((h) => h.state),
    ['stopped', 'stopped'],
  );
});

test('indexers asked with an informer are added to the shared one; a clashing index is refused', () => {
  const { factory } = setup();
  const byName = (o: KubeObject): string[] => [o.metadata?.name ?? ''];
  factory.informerFor({ apiVersion: 'v1', kind: 'Pod' }, { indexers: { name: byName } });
  const again = factory.informerFor({ apiVersion: 'v1', kind: 'Pod' }, { indexers: { name: byName } });
  assert.equal(again.reader.hasIndex('name'), true);
  assert.throws(
    () => factory.informerFor({ apiVersion: 'v1', kind: 'Pod' }, { indexers: { name: () => [] } }),
    IndexError,
  );
});

test('two factories share nothing', async () => {
  const one = setup();
  const two = setup();
  const a = one.factory.informerFor({ apiVersion: 'v1', kind: 'Pod' });
  const b = two.factory.informerFor({ apiVersion: 'v1', kind: 'Pod' });
  assert.notEqual(a, b);
  assert.equal(one.created.length, 1);
  assert.equal(two.created.length, 1);
});
