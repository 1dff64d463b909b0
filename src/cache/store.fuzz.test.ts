/**
 * Fuzz (issue 18): relists whose pages hold random malformed items. Whatever the mix, the store
 * keeps every valid item, leaves out and counts every invalid one, keeps the stored version of an
 * object whose new version is malformed (key known, or uid matching), and reports deletions only
 * for objects really missing and only when no item was unidentifiable. Never throws.
 * Seeded (`FUZZ_SEED=<n>` replays a run) and bounded in time (`FUZZ_TIME_MS`, per property).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fc from 'fast-check';
import type { KubeObject } from '../core/object-key.js';
import { Store } from './store.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const TIME_MS = Number(process.env.FUZZ_TIME_MS ?? 2000);

interface Cm extends KubeObject {
  data?: Record<string, string>;
}

const cm = (name: string, v: string, poison = false): Cm => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: v },
  data: poison ? { poison: 'x' } : { v },
});
const transform = (o: Cm): Cm => {
  if (o.data?.poison) throw new Error('poisoned');
  return o;
};

/** What a relist page item may be for one stored object. */
type Fate = 'same' | 'changed' | 'poisoned' | 'nameless-uid' | 'missing';
const garbage = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.string(),
  fc.constant([]),
  fc.record({ metadata: fc.record({ uid: fc.constantFrom('uid-nobody', 'uid-other') }) }),
  fc.record({ metadata: fc.record({ name: fc.constant('z'), namespace: fc.constant(5) }) }),
);

test('relists with random malformed items: valid kept, invalid counted, no delete for anything merely unreadable', () => {
  const details = fc.check(
    fc.property(
      fc.array(fc.constantFrom<Fate>('same', 'changed', 'poisoned', 'nameless-uid', 'missing'), {
        minLength: 1,
        maxLength: 12,
      }),
      fc.array(garbage, { maxLength: 3 }),
      fc.array(fc.constantFrom('new1', 'new2'), { maxLength: 2 }),
      fc.integer({ min: 1, max: 5 }),
      fc.constantFrom<'atomic' | 'incremental'>('atomic', 'incremental'),
      (fates, junk, added, pageSize, relistMode) => {
        const store = new Store<Cm>({ transform, relistMode });
        const names = fates.map((_, i) => `o${i}`);
        const first = store.beginReplace();
        first.addPage(names.map((n) => cm(n, '1')));
        first.commit();
        const items: unknown[] = [];
        fates.forEach((f, i) => {
          const n = names[i]!;
          if (f === 'same') items.push(cm(n, '1'));
          else if (f === 'changed') items.push(cm(n, '2'));
          else if (f === 'poisoned') items.push(cm(n, '2', true));
          else if (f === 'nameless-uid')
            items.push({ metadata: { namespace: 'ns', uid: `uid-${n}` }, data: { v: '2' } });
        });
        for (const n of new Set(added)) items.push(cm(n, '1'));
        items.push(...junk);
        // Deterministic shuffle: junk lands between valid items.
        items.sort((a, b) => JSON.stringify(a ?? 0).length - JSON.stringify(b ?? 0).length);
        const before = store.invalidObjects;
        const r = store.beginReplace();
        const deltas = [];
        for (let i = 0; i < items.length; i += pageSize)
          deltas.push(...r.addPage(items.slice(i, i + pageSize) as Cm[]));
        deltas.push(...r.commit());

        // None of the junk can be tied to a stored object (a bad namespace leaves no key either).
        const unidentified = junk.length > 0;
        const invalid = fates.filter((f) => f === 'poisoned' || f === 'nameless-uid').length + junk.length;
        assert.equal(store.invalidObjects - before, invalid, 'every invalid item counted once');
        const deleted = deltas.filter((d) => d.type === 'delete').map((d) => d.key);
        fates.forEach((f, i) => {
          const key = `ns/${names[i]}`;
          const stored = store.get(key);
          if (f === 'changed') assert.equal(stored?.metadata?.resourceVersion, '2');
          if (f === 'same' || f === 'poisoned' || f === 'nameless-uid') {
            assert.equal(stored?.metadata?.resourceVersion, '1', `${f}: the stored version stays`);
            assert.ok(!deleted.includes(key), `${f}: never reported deleted`);
          }
          if (f === 'missing')
            assert.equal(
              deleted.includes(key),
              !unidentified,
              'missing: deleted unless the relist had an unidentifiable item',
            );
        });
        for (const n of new Set(added)) assert.ok(store.has(`ns/${n}`));
        // Only stored objects can be deleted, and only missing ones.
        for (const k of deleted) assert.equal(fates[Number(k.slice('ns/o'.length))], 'missing');
      },
    ),
    { seed: SEED, numRuns: 1_000_000, interruptAfterTimeLimit: TIME_MS },
  );
  if (details.failed) {
    console.log(
      `# store relists: failed with FUZZ_SEED=${SEED} (replay: FUZZ_SEED=${SEED} node --import tsx --test ${path.relative(process.cwd(), import.meta.filename)})`,
    );
    throw new Error(fc.defaultReportMessage(details) ?? 'property failed');
  }
  console.log(`# store relists: ${details.numRuns} runs in ${TIME_MS} ms, seed ${SEED}`);
  assert.ok(details.numRuns > 0);
});
