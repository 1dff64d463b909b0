import { describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import type { ListWatchClient } from '../client/contracts.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import {
  InvalidShardSelectorError,
  formatShardSelector,
  objectInRange,
  splitHashSpace,
  type HashRange,
} from '../client/shard-selector.js';
import { clientListerWatcher } from './client-lister-watcher.js';
import { SharedInformer } from './informer.js';
import { InformerFactory } from './informer-factory.js';
import { informerKey, informerName, normalizeInformerSpec } from './informer-spec.js';
import { createDelegatingClient } from './delegating-client.js';
import { InformerCache } from './informer-cache.js';
import { FakeListerWatcher } from './testing/fake-lister-watcher.js';

const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const [LOWER, UPPER] = splitHashSpace(2) as [HashRange, HashRange];
const LOWER_SELECTOR = formatShardSelector(LOWER);
/** Fails a test whose awaited event never comes instead of hanging the run (never reached when things work). */
const HANG_GUARD_MS = 30_000;

describe('informer specs with a shard selector', () => {
  test('are keyed by their canonical ranges: merged, ordered, spaced as the server writes them', () => {
    const q = splitHashSpace(4);
    const written =
      "shardRange(object.metadata.uid,'0x4000000000000000','0x8000000000000000') ||  shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')";
    assert.equal(normalizeInformerSpec({ ...CONFIGMAP, shardSelector: written }).shardSelector, LOWER_SELECTOR);
    assert.equal(
      informerKey({ ...CONFIGMAP, shardSelector: written }),
      informerKey({ ...CONFIGMAP, shardSelector: LOWER_SELECTOR }),
    );
    assert.notEqual(
      informerKey({ ...CONFIGMAP, shardSelector: formatShardSelector(q[0]!) }),
      informerKey({ ...CONFIGMAP, shardSelector: LOWER_SELECTOR }),
    );
    assert.notEqual(
      informerKey({ ...CONFIGMAP, shardSelector: LOWER_SELECTOR }),
      informerKey(CONFIGMAP),
      'a sharded informer never shares with the unsharded one',
    );
    assert.equal(
      informerName({ ...CONFIGMAP, namespace: 'ns', shardSelector: LOWER_SELECTOR }),
      'v1 ConfigMap ns=ns shard=uid[0x0000000000000000,0x8000000000000000)',
    );
  });

  test('a malformed selector is refused when the informer is asked for, naming the problem', () => {
    const factory = new InformerFactory(() => {
      throw new Error('never built');
    });
    assert.throws(
      () =>
        factory.informerFor({
          ...CONFIGMAP,
          shardSelector: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
        }),
      (e: unknown) => e instanceof InvalidShardSelectorError && /16 lowercase hex digits/.test(e.message),
    );
  });
});

/** Runs an informer for the lower half over `fake`, creating objects before and after its sync. */
async function cacheOfLowerHalf(fake: FakeClient): Promise<{
  before: KubeObject[];
  after: KubeObject[];
  cached: string[];
  added: string[];
  sentSelectors: (string | undefined)[];
}> {
  const before: KubeObject[] = [];
  for (let i = 0; i < 30; i++)
    before.push(await fake.create({ ...CONFIGMAP, metadata: { name: `before-${i}`, namespace: 'ns' } }));
  const sentSelectors: (string | undefined)[] = [];
  const recording: ListWatchClient = {
    watchList: fake.watchList,
    listPage: (type, opts) => {
      sentSelectors.push(opts?.shardSelector);
      return fake.listPage(type, opts);
    },
    watch: (type, opts) => {
      sentSelectors.push(opts?.shardSelector);
      return fake.watch(type, opts);
    },
  };
  const informer = new SharedInformer<KubeObject>(
    clientListerWatcher(recording, { ...CONFIGMAP, shardSelector: LOWER_SELECTOR }),
    { clock: new FakeClock(0) },
  );
  const added: string[] = [];
  let onAdd: ((name: string) => void) | undefined;
  informer.addEventHandler({
    add: (o) => {
      added.push(o.metadata!.name!);
      onAdd?.(o.metadata!.name!);
    },
  });
  const ac = new AbortController();
  const run = informer.start(ac.signal);
  try {
    await informer.waitForSync(ac.signal);
    // Objects created while it watches, until one lands in range: its event comes after all the others'.
    const after: KubeObject[] = [];
    for (let i = 0; ; i++) {
      const obj = await fake.create({ ...CONFIGMAP, metadata: { name: `after-${i}`, namespace: 'ns' } });
      after.push(obj);
      if (i >= 10 && objectInRange(obj, LOWER)) break;
    }
    const last = after[after.length - 1]!.metadata!.name!;
    if (!added.includes(last)) await new Promise<void>((resolve) => (onAdd = (name) => name === last && resolve()));
    const cached = informer.reader
      .list()
      .map((o) => o.metadata!.name!)
      .sort();
    return { before, after, cached, added, sentSelectors };
  } finally {
    ac.abort();
    await run;
  }
}

function namesInLowerHalf(objects: readonly KubeObject[]): string[] {
  return objects.filter((o) => objectInRange(o, LOWER)).map((o) => o.metadata!.name!);
}

describe('an informer with a shard selector', () => {
  test(
    'over a server that honours it: caches exactly its range, from the sync and from later creates',
    { timeout: HANG_GUARD_MS },
    async () => {
      const fake = new FakeClient();
      const r = await cacheOfLowerHalf(fake);
      const expected = [...namesInLowerHalf(r.before), ...namesInLowerHalf(r.after)].sort();
      assert.ok(expected.length > 0 && expected.length < r.before.length + r.after.length, 'both halves are populated');
      assert.deepEqual(r.cached, expected);
      assert.deepEqual([...r.added].sort(), expected, 'handlers see only the range');
      assert.ok(
        r.sentSelectors.length > 0 && r.sentSelectors.every((s) => s === LOWER_SELECTOR),
        'every list and watch sends the selector',
      );
    },
  );

  test(
    'over a server that ignores it (1.20, or 1.36 without the gate): the same cache, filtered on arrival',
    { timeout: HANG_GUARD_MS },
    async () => {
      const fake = new FakeClient({ shardedListAndWatch: false });
      const r = await cacheOfLowerHalf(fake);
      assert.deepEqual(r.cached, [...namesInLowerHalf(r.before), ...namesInLowerHalf(r.after)].sort());
      const upper = [...r.before, ...r.after].filter((o) => objectInRange(o, UPPER)).map((o) => o.metadata!.name!);
      assert.ok(
        upper.length > 0 && upper.every((name) => !r.cached.includes(name) && !r.added.includes(name)),
        'nothing from the other half reached the cache or a handler',
      );
    },
  );
});

describe('the cache-backed client with a shard selector', () => {
  test(
    'list filters what the cache holds by the ranges, as the server would; a malformed selector is refused',
    { timeout: HANG_GUARD_MS },
    async () => {
      const objects = Array.from({ length: 40 }, (_, i): KubeObject => ({
        ...CONFIGMAP,
        metadata: { name: `cm-${i}`, namespace: 'ns', uid: randomUUID() },
      }));
      const clock = new FakeClock(0);
      const factory = new InformerFactory(() => new FakeListerWatcher(objects), { clock });
      const server = new FakeClient();
      const client = createDelegatingClient(server, new InformerCache(factory));
      const ac = new AbortController();
      const run = factory.start(ac.signal);
      try {
        const listed = client.list(CONFIGMAP, { namespace: 'ns', shardSelector: formatShardSelector(UPPER) });
        await clock.advance(0);
        const names = (await listed).items.map((o) => o.metadata!.name!);
        const expected = objects.filter((o) => objectInRange(o, UPPER)).map((o) => o.metadata!.name!);
        assert.ok(expected.length > 0 && expected.length < objects.length);
        assert.deepEqual(names.sort(), expected.sort());
        await assert.rejects(
          client.list(CONFIGMAP, { shardSelector: 'shardRange(object.metadata.name)' }),
          InvalidShardSelectorError,
        );
        assert.equal(server.requests.length, 0, 'answered from the cache');
      } finally {
        ac.abort();
        await run;
      }
    },
  );
});
