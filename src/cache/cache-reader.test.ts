import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../core/object-key.js';
import { CacheReader } from './cache-reader.js';
import { Store } from './store.js';
import { parseLabelSelector } from './label-selector.js';
import { IndexError } from './errors.js';
import { InvalidOptionError } from '../core/errors.js';

interface Pod extends KubeObject {
  spec?: { nodeName?: string };
}

const pod = (name: string, ns: string | undefined, labels: Record<string, string>, nodeName?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(ns ? { namespace: ns } : {}), labels, resourceVersion: '1' },
  spec: { nodeName },
});

function reader() {
  const store = new Store<Pod>({
    indexers: { 'field:spec.nodeName': (p: Pod) => (p.spec?.nodeName ? [p.spec.nodeName] : []) },
  });
  store.upsert(pod('web-1', 'prod', { app: 'web', tier: 'front' }, 'n1'));
  store.upsert(pod('web-2', 'prod', { app: 'web', tier: 'front', canary: 'true' }, 'n2'));
  store.upsert(pod('db-1', 'prod', { app: 'db' }, 'n1'));
  store.upsert(pod('web-1', 'dev', { app: 'web' }, 'n2'));
  store.upsert(pod('cluster-thing', undefined, { app: 'web' }));
  return new CacheReader(store);
}
const names = (xs: KubeObject[]): string[] =>
  xs.map((x) => `${x.metadata?.namespace ?? ''}/${x.metadata?.name}`).sort();

test('get finds an object by reference or key, and cluster-scoped objects by name alone', () => {
  const r = reader();
  assert.equal(r.get({ namespace: 'prod', name: 'web-1' })?.spec?.nodeName, 'n1');
  assert.equal(r.get('dev/web-1')?.spec?.nodeName, 'n2');
  assert.equal(r.get({ name: 'cluster-thing' })?.metadata?.name, 'cluster-thing');
  assert.equal(r.get({ namespace: 'prod', name: 'nope' }), undefined);
});

test('list filters by namespace and by equality and set-based label selectors', () => {
  const r = reader();
  assert.equal(r.list().length, 5);
  assert.deepEqual(names(r.list({ namespace: 'prod' })), ['prod/db-1', 'prod/web-1', 'prod/web-2']);
  assert.deepEqual(names(r.list({ labelSelector: 'app=web,tier!=back,!canary' })), [
    '/cluster-thing',
    'dev/web-1',
    'prod/web-1',
  ]);
  assert.deepEqual(names(r.list({ namespace: 'prod', labelSelector: 'app in (web,db),tier' })), [
    'prod/web-1',
    'prod/web-2',
  ]);
  assert.deepEqual(names(r.list({ labelSelector: parseLabelSelector('canary') })), ['prod/web-2']);
});

test('field selectors work on metadata fields and on fields with a field: index, and refuse the rest', () => {
  const r = reader();
  assert.deepEqual(names(r.list({ fieldSelector: 'metadata.name=web-1' })), ['dev/web-1', 'prod/web-1']);
  assert.deepEqual(names(r.list({ fieldSelector: 'metadata.namespace!=prod,metadata.name=web-1' })), ['dev/web-1']);
  assert.deepEqual(names(r.list({ fieldSelector: 'spec.nodeName=n1', namespace: 'prod', labelSelector: 'app=web' })), [
    'prod/web-1',
  ]);
  assert.throws(() => r.list({ fieldSelector: 'status.phase=Running' }), IndexError);
  assert.throws(() => r.list({ fieldSelector: 'spec.nodeName!=n1' }), IndexError);
  assert.throws(() => r.list({ fieldSelector: 'garbage' }), InvalidOptionError);
});

test('byIndex answers from the namespace index and user indexes', () => {
  const r = reader();
  assert.deepEqual(names(r.byIndex('namespace', 'dev')), ['dev/web-1']);
  assert.deepEqual(names(r.byIndex('field:spec.nodeName', 'n2')), ['dev/web-1', 'prod/web-2']);
});
