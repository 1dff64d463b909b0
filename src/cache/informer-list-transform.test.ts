import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../core/object-key.js';
import { SharedInformer } from './informer.js';
import { dropManagedFields } from './store.js';
import { FakeListerWatcher } from './testing/fake-lister-watcher.js';

const cm = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', managedFields: [{ manager: 'm' }] } as KubeObject['metadata'],
});

async function listOptionsOf(informer: SharedInformer<KubeObject>, lw: FakeListerWatcher<KubeObject>) {
  const stop = new AbortController();
  const running = informer.start(stop.signal);
  await informer.waitForSync(stop.signal);
  stop.abort();
  await running;
  return lw.listCalls[0]!;
}

test('with the default transform, lists drop managedFields as each item is decoded (transformItem), and the store still holds them without', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const informer = new SharedInformer(lw);
  const opts = await listOptionsOf(informer, lw);
  assert.equal(typeof opts.transformItem, 'function');
  const item = opts.transformItem!(cm('b'));
  assert.equal('managedFields' in item.metadata!, false);
  // Metadata that is not an object is left for the store to judge (and count as invalid).
  const odd = { metadata: 'x' } as unknown as KubeObject;
  assert.equal(opts.transformItem!(odd), odd);
  assert.equal('managedFields' in informer.reader.list()[0]!.metadata!, false);
});

test('a transform of the user’s runs once, in the store: no transformItem is sent with the list', async () => {
  let calls = 0;
  const lw = new FakeListerWatcher([cm('a')]);
  const informer = new SharedInformer(lw, {
    transform: (o) => {
      calls++;
      return dropManagedFields(o);
    },
  });
  const opts = await listOptionsOf(informer, lw);
  assert.equal(opts.transformItem, undefined);
  assert.equal(calls, 1);
});
