import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { KubeObject } from '../core/object-key.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import type { Client } from './contracts.js';
import { kind, type Kind, type ObjectOf } from './kind.js';
import { kinds } from './kinds.js';

// The type-level checks below fail `npm run typecheck` if a kind stops carrying its type: each
// expected-error directive is itself an error once the line it guards compiles.

test('a kind is only { apiVersion, kind } at run time', () => {
  assert.deepEqual(kinds.StatefulSet, { apiVersion: 'apps/v1', kind: 'StatefulSet' });
  assert.deepEqual(Object.keys(kind('example.com/v1', 'Database')), ['apiVersion', 'kind']);
});

test('client.get(kinds.StatefulSet) returns a StatefulSet; a plain { apiVersion, kind } still returns KubeObject', async () => {
  const client: Client = new FakeClient();
  await client.create<StatefulSet>({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'ns' },
    spec: { replicas: 3, selector: {}, serviceName: 'db', template: {} },
  });
  const sts = await client.get(kinds.StatefulSet, 'db', { namespace: 'ns' });
  const replicas: number | undefined = sts.spec?.replicas;
  assert.equal(replicas, 3);
  // @ts-expect-error a StatefulSet's spec has no such field
  assert.equal(sts.spec?.noSuchField, undefined);
  const listed = await client.list(kinds.StatefulSet, { namespace: 'ns' });
  assert.equal(listed.items[0]?.spec?.serviceName, 'db');
  const untyped = await client.get({ apiVersion: 'apps/v1', kind: 'StatefulSet' }, 'db', { namespace: 'ns' });
  const asKubeObject: KubeObject = untyped;
  // @ts-expect-error an untyped kind gives KubeObject, which has no spec
  assert.ok(untyped.spec);
  assert.equal(asKubeObject.metadata?.name, 'db');
});

test('ObjectOf and kind<T> name the type of a custom kind', () => {
  interface Database extends KubeObject {
    spec: { replicas: number };
  }
  const DATABASE: Kind<Database> = kind<Database>('example.com/v1', 'Database');
  const sample: ObjectOf<typeof DATABASE> = { ...DATABASE, spec: { replicas: 1 } };
  // @ts-expect-error replicas is a number
  const wrong: ObjectOf<typeof DATABASE> = { ...DATABASE, spec: { replicas: 'one' } };
  assert.equal(sample.spec.replicas, 1);
  assert.ok(wrong);
});
