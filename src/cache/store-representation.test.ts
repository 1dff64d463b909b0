/**
 * The store's compact representation (issue 27) must not change what readers see or what handlers
 * are told: objects read back are deep-equal to what the server sent minus managedFields, whatever
 * their fields; indexes hand back the current objects; the first sync is as atomic as any relist.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject } from '../core/object-key.js';
import { dropManagedFields, Store, type StoreDelta } from './store.js';
import { NAMESPACE_INDEX } from './indexer.js';
import { StringPool } from './string-pool.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;

interface Pod extends KubeObject {
  spec?: { node?: string };
}

function pod(name: string, rv: string, opts: { ns?: string; node?: string; uid?: string } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: opts.ns ?? 'default', resourceVersion: rv, uid: opts.uid ?? `uid-${name}` },
    spec: { node: opts.node },
  };
}

const byNode = (p: Pod): string[] => (p.spec?.node ? [p.spec.node] : []);
const summary = (ds: Iterable<StoreDelta<Pod>>): string[] => [...ds].map((d) => `${d.type}:${d.key}`);

/** Strings, numbers, nested records and arrays, and the keys JSON can carry that JS treats specially. */
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(
      fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', '0', 'managedFields')),
      tie('value'),
      {
        maxKeys: 4,
      },
    ),
  ),
})).value;
const stringMap = fc.dictionary(fc.oneof(fc.string(), fc.constant('__proto__')), fc.string(), { maxKeys: 4 });
const serverObject = fc.record(
  {
    apiVersion: fc.constantFrom('v1', 'example.com/v1', 'apps/v1'),
    kind: fc.constantFrom('Pod', 'Widget'),
    metadata: fc.record(
      {
        name: fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !s.includes('/')),
        namespace: fc.constantFrom('default', 'a-rather-long-namespace-name', ''),
        uid: fc.uuid(),
        resourceVersion: fc.integer({ min: 1 }).map(String),
        generateName: fc.string(),
        labels: stringMap,
        annotations: stringMap,
        finalizers: fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
        ownerReferences: fc.array(
          fc.record({
            apiVersion: fc.string(),
            kind: fc.string(),
            name: fc.string(),
            uid: fc.uuid(),
            controller: fc.boolean(),
          }),
          { maxLength: 2 },
        ),
        managedFields: fc.array(jsonValue, { maxLength: 2 }),
        extra: jsonValue,
      },
      { requiredKeys: ['name'] },
    ),
    spec: jsonValue,
    status: jsonValue,
  },
  { requiredKeys: ['metadata'] },
);

test('objects read from the store are deep-equal to what the server sent minus managedFields (any fields, watch or list)', () => {
  fc.assert(
    fc.property(
      fc.array(serverObject, { minLength: 1, maxLength: 8 }),
      fc.boolean(),
      fc.boolean(),
      (objs, viaList, proto) => {
        // As from the wire: JSON text, parsed. A "__proto__" key (an own key as JSON.parse makes
        // it) is spliced into the text: a generated object cannot carry one.
        const texts = objs.map((o) => {
          const text = JSON.stringify(o);
          return proto ? text.replace('"metadata":{', '"metadata":{"__proto__":{"p":[1]},') : text;
        });
        const expected = new Map<string, unknown>();
        for (const t of texts) {
          const o = JSON.parse(t) as Pod;
          const { managedFields: _dropped, ...meta } = o.metadata!;
          const ns = meta.namespace || undefined;
          expected.set(ns ? `${ns}/${meta.name}` : meta.name!, { ...o, metadata: meta });
        }
        const store = new Store<Pod>();
        if (viaList) {
          const r = store.beginReplace();
          r.addPage(texts.map((t) => JSON.parse(t) as Pod));
          r.commit();
        } else for (const t of texts) store.upsert(JSON.parse(t) as Pod);
        assert.equal(store.size, expected.size);
        for (const [key, want] of expected) {
          const got = store.get(key);
          assert.deepStrictEqual(got, want, key);
          assert.equal(Object.getPrototypeOf(got?.metadata), Object.prototype);
        }
      },
    ),
    { seed: SEED, numRuns: 200 },
  );
});

test('dropManagedFields keeps every other metadata field in order, an own "__proto__" key as a key, and a plain prototype', () => {
  const o = JSON.parse(
    '{"metadata":{"a":1,"__proto__":{"x":1},"managedFields":[{}],"name":"n","labels":{"k":"v"}}}',
  ) as KubeObject;
  const out = dropManagedFields(o);
  assert.deepEqual(Object.keys(out.metadata!), ['a', '__proto__', 'name', 'labels']);
  assert.equal(Object.getPrototypeOf(out.metadata), Object.prototype);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(out.metadata, '__proto__'), {
    value: { x: 1 },
    writable: true,
    enumerable: true,
    configurable: true,
  });
});

// Regression guard: indexes hold objects, not keys; an update that keeps the index value must
// still replace the object in the index (a keys-only fast path would hand back the old version).
test('an index hands back the current version of an object after an update that kept its index value', () => {
  const s = new Store<Pod>({ indexers: { node: byNode } });
  s.upsert(pod('a', '1', { node: 'n1' }));
  s.upsert(pod('a', '2', { node: 'n1' }));
  const current = s.get('default/a');
  assert.equal(current?.metadata?.resourceVersion, '2');
  assert.deepEqual(s.byIndex('node', 'n1'), [current]);
  assert.deepEqual(s.byIndex(NAMESPACE_INDEX, 'default'), [current]);
  assert.deepEqual(s.indexKeys('node', 'n1'), ['default/a']);
});

test('the namespace index is the per-namespace contents: values only for namespaces holding objects, none for cluster-scoped ones', () => {
  const s = new Store<KubeObject>();
  s.upsert(pod('a', '1', { ns: 'x' }));
  s.upsert(pod('b', '1', { ns: 'y' }));
  s.upsert({ metadata: { name: 'node-1', resourceVersion: '1' } });
  s.upsert({ metadata: { name: 'node-2', namespace: '', resourceVersion: '1' } });
  assert.deepEqual(s.indexValues(NAMESPACE_INDEX).sort(), ['x', 'y']);
  assert.deepEqual(s.byIndex(NAMESPACE_INDEX, ''), []);
  assert.deepEqual(s.indexKeys(NAMESPACE_INDEX, 'x'), ['x/a']);
  assert.deepEqual(s.keys().sort(), ['node-1', 'node-2', 'x/a', 'y/b']);
  s.delete(pod('a', '2', { ns: 'x' }));
  assert.deepEqual(s.indexValues(NAMESPACE_INDEX), ['y'], 'an emptied namespace leaves the index');
  assert.equal(s.get('x/a'), undefined);
  assert.equal(s.size, 3);
  assert.ok(s.hasIndex(NAMESPACE_INDEX));
});

test('the first sync is atomic too: readers see nothing until commit, then all of it, and handlers get one add per key (the last version)', () => {
  const s = new Store<Pod>({ indexers: { node: byNode } });
  const r = s.beginReplace();
  r.addPage([pod('a', '1', { node: 'n1' }), pod('b', '1', { node: 'n1' })]);
  r.addPage([pod('a', '2', { node: 'n2' }), pod('c', '1', { ns: 'other' })]);
  assert.equal(s.size, 0);
  assert.equal(s.get('default/a'), undefined);
  assert.deepEqual(s.keys(), []);
  assert.deepEqual(s.list(), []);
  assert.deepEqual(s.byIndex('node', 'n1'), []);
  assert.deepEqual(s.indexValues(NAMESPACE_INDEX), []);
  // An index added mid-list covers what the list has brought so far.
  s.addIndex('rv', (p) => [p.metadata?.resourceVersion ?? '']);
  r.addPage([pod('d', '1')]);
  const deltas = [...r.commitLazily()];
  assert.deepEqual(summary(deltas).sort(), ['add:default/a', 'add:default/b', 'add:default/d', 'add:other/c']);
  assert.equal(s.get('default/a')?.metadata?.resourceVersion, '2', 'the later version of a key wins');
  for (const d of deltas)
    assert.equal(d.type === 'add' && d.object, s.get(d.key), 'each add carries the stored object');
  assert.deepEqual(s.indexKeys('node', 'n1'), ['default/b']);
  assert.deepEqual(s.indexKeys('node', 'n2'), ['default/a']);
  assert.deepEqual(s.indexKeys('rv', '1').sort(), ['default/b', 'default/d', 'other/c']);
  assert.equal(s.size, 4);
});

test('a first sync that is abandoned leaves the store empty, and its successor alone lands', () => {
  const s = new Store<Pod>();
  const first = s.beginReplace();
  first.addPage([pod('a', '1')]);
  const second = s.beginReplace();
  assert.throws(() => first.addPage([pod('b', '1')]), { code: 'ERR_REPLACE_DONE' });
  assert.throws(() => first.commit(), { code: 'ERR_REPLACE_DONE' });
  assert.equal(s.size, 0);
  second.addPage([pod('c', '1')]);
  assert.deepEqual(summary(second.commit()), ['add:default/c']);
  assert.deepEqual(s.keys(), ['default/c']);
});

test('after the first sync, a relist into a non-empty store still diffs: unchanged objects keep their identity, deletes carry tombstones', () => {
  const s = new Store<Pod>();
  const first = s.beginReplace();
  first.addPage([pod('a', '1'), pod('b', '1'), pod('gone', '1')]);
  first.commit();
  const a = s.get('default/a');
  const r = s.beginReplace();
  r.addPage([pod('a', '1'), pod('b', '2'), pod('new', '1')]);
  assert.equal(s.size, 3, 'old contents served until commit');
  assert.deepEqual(summary(r.commit()).sort(), ['add:default/new', 'delete:default/gone', 'update:default/b']);
  assert.equal(s.get('default/a'), a);
});

test('an object from the source that is frozen is stored as it is (its strings are not pooled, nothing throws)', () => {
  const frozen = Object.freeze({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: Object.freeze({ name: 'f', namespace: 'default', labels: Object.freeze({ k: 'v' }) }),
  });
  const s = new Store<KubeObject>({ transform: null });
  assert.equal(s.upsert(frozen)?.type, 'add');
  assert.equal(s.get('default/f'), frozen);
});

test('the string pool returns equal strings, skips long ones and starts over when full', () => {
  const pool = new StringPool(3);
  assert.equal(pool.intern('a'), 'a');
  pool.intern('b');
  pool.intern('a');
  assert.equal(pool.size, 2);
  pool.intern('c');
  assert.equal(pool.size, 3);
  pool.intern('d');
  assert.equal(pool.size, 1, 'full: started over with the new string');
  const long = 'x'.repeat(300);
  assert.equal(pool.intern(long), long);
  assert.equal(pool.size, 1, 'long strings are not pooled');
});
