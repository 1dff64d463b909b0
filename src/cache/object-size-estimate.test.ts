import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { SharedInformer } from './informer.js';
import {
  DEFAULT_SIZE_REFRESH_MS,
  ObjectSizeEstimate,
  STORE_ENTRY_OVERHEAD_BYTES,
  estimateEntryBytes,
  estimateValueBytes,
  type SizeSampleSource,
} from './object-size-estimate.js';
import { FakeListerWatcher } from './testing/fake-lister-watcher.js';

/** A store stand-in that counts how many of its objects the estimate walks (lists the keys of). */
class CountingSource implements SizeSampleSource {
  readonly items = new Map<string, unknown>();
  reads = 0;
  get size(): number {
    return this.items.size;
  }
  *objectIterator(): Iterator<unknown> {
    for (const item of this.items.values())
      yield new Proxy(item as object, {
        ownKeys: (target) => {
          this.reads++;
          return Reflect.ownKeys(target);
        },
      });
  }
}

test('the cost model charges headers and slots, long strings by length, doubles, and nothing for small integers, booleans or short strings', () => {
  assert.equal(estimateValueBytes({}), 56, '{} from JSON has room for 4 properties');
  assert.equal(estimateValueBytes({ a: 1, b: true, c: null, d: 'short' }), 24 + 4 * 8);
  assert.equal(estimateValueBytes({ a: 'x'.repeat(40) }), 24 + 8 + 56, 'a 40-character string: 16 + 40');
  assert.equal(estimateValueBytes({ a: 'é'.repeat(40) }), 24 + 8 + 56, 'Latin-1 is still one byte a character');
  assert.equal(estimateValueBytes({ a: 'ж'.repeat(40) }), 24 + 8 + 96, 'beyond Latin-1: two bytes a character');
  assert.equal(estimateValueBytes({ a: 1.5 }), 24 + 8 + 16, 'a double is a HeapNumber');
  assert.equal(estimateValueBytes([]), 32);
  assert.equal(estimateValueBytes([1, 2, 3]), 48 + 3 * 8);
  assert.equal(estimateEntryBytes({}), 56 + STORE_ENTRY_OVERHEAD_BYTES);
});

test('a cyclic or enormous object is cut short instead of walked forever', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const bytes = estimateValueBytes(cyclic);
  assert.ok(bytes > 0 && bytes < 2_000_000, `bounded: ${bytes}`);
});

test('the estimate walks only a sample spread over the store, and reuses it until it is old or the count moved by a tenth', () => {
  const clock = new FakeClock(0);
  const source = new CountingSource();
  const estimate = new ObjectSizeEstimate(source, { clock, sampleSize: 10 });
  assert.equal(estimate.bytesPerObject(), undefined, 'nothing to estimate while empty');
  // A third large objects, interleaved with small ones: an even spread sees both.
  for (let i = 0; i < 1000; i++) source.items.set(`ns/o${i}`, i % 3 === 1 ? { s: 'x'.repeat(1000) } : { n: 1 });
  const first = estimate.bytesPerObject()!;
  assert.equal(source.reads, 10, 'ten objects read, not a thousand');
  const small = estimateEntryBytes({ n: 1 });
  const large = estimateEntryBytes({ s: 'x'.repeat(1000) });
  assert.ok(first > small && first < large, `${first} lies between ${small} and ${large}`);

  source.items.set('ns/extra', { n: 1 });
  assert.equal(estimate.bytesPerObject(), first);
  assert.equal(source.reads, 10, 'reused: the count moved by less than a tenth and it is fresh');
  clock.step(DEFAULT_SIZE_REFRESH_MS);
  estimate.bytesPerObject();
  assert.equal(source.reads, 20, 'refreshed once old');
  for (let i = 0; i < 200; i++) source.items.set(`ns/more${i}`, { n: 1 });
  estimate.bytesPerObject();
  assert.equal(source.reads, 30, 'refreshed at once when the count moves by a tenth');
});

type Cm = KubeObject & { data?: Record<string, string> };
const cm = (name: string, value: string): Cm => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  data: { value },
});

test('the informer reports its estimated bytes per object in health and on the registry, and drops the series when stopped', async () => {
  const registry = new Registry();
  const clock = new FakeClock(0);
  const lw = new FakeListerWatcher<Cm>([cm('a', 'x'.repeat(2000)), cm('b', 'y'.repeat(2000))]);
  const informer = new SharedInformer<Cm>(lw, { name: 'cms', clock, registry, random: () => 0 });
  assert.equal(informer.health().estimatedBytesPerObject, undefined, 'empty before the first list');
  const ac = new AbortController();
  const running = informer.start(ac.signal);
  await informer.waitForSync(ac.signal);
  const expected = estimateEntryBytes(informer.reader.get('ns/a'));
  assert.ok(expected > 2000, 'the 2000-character value is counted');
  assert.equal(informer.health().estimatedBytesPerObject, expected);
  const text = await registry.metrics();
  assert.match(text, new RegExp(`cache_estimated_bytes_per_object\\{informer="cms"\\} ${expected}\\n`));
  assert.match(text, /cache_objects\{informer="cms"\} 2/);
  ac.abort();
  await running;
  assert.doesNotMatch(await registry.metrics(), /cache_estimated_bytes_per_object\{informer="cms"\}/);
});
