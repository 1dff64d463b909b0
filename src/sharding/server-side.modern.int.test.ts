/**
 * Server-side sharding against Kubernetes 1.36 with `ShardedListAndWatch`: the server's range
 * answers equal our client-side hash object for object, lists (paged or not) and watch-lists
 * return only the range, and an informer with a shard selector caches only its range, including
 * objects created after it started.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { KubeClient } from '../client/kube-client.js';
import type { WatchEvent } from '../client/watch-decoder.js';
import type { Kind } from '../client/kind.js';
import type { WatchOptions } from '../client/client-options.js';
import { SharedInformer } from '../cache/informer.js';
import { clientListerWatcher } from '../cache/client-lister-watcher.js';
import type { KubeObject } from '../core/object-key.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { NOTE_CRD } from '../testing/conformance/client-conformance.js';
import {
  formatShardSelector,
  objectInRange,
  splitHashSpace,
  type HashRange,
  type ShardKeyField,
} from '../client/shard-selector.js';
import { assignHashRanges } from './range-assignment.js';

const NOTE = { apiVersion: 'example.com/v1', kind: 'Note' } as const;
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
/** Bounds the tests that wait for an event, so a server that never sends it fails the test instead of hanging the run. */
const WAIT_FOR_EVENTS_MS = 120_000;

describe('server-side sharded list and watch on Kubernetes 1.36 (ShardedListAndWatch)', () => {
  let env: TestEnv;
  let client: KubeClient;
  const run = randomBytes(3).toString('hex');

  before(async () => {
    env = await TestEnv.start({ server: 'modern', featureGates: { ShardedListAndWatch: true }, crds: [NOTE_CRD] });
    client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });

  async function createNotes(
    namespaces: readonly string[],
    perNamespace: number,
    prefix: string,
  ): Promise<KubeObject[]> {
    const created: KubeObject[] = [];
    for (const namespace of namespaces) {
      for (let i = 0; i < perNamespace; i += 10) {
        const batch = Array.from({ length: Math.min(10, perNamespace - i) }, (_, j) =>
          client.create<KubeObject>({ ...NOTE, metadata: { name: `${prefix}-${i + j}`, namespace } }),
        );
        created.push(...(await Promise.all(batch)));
      }
    }
    return created;
  }

  const uidsOf = (objects: readonly KubeObject[]): string[] => objects.map((o) => o.metadata!.uid!).sort();
  const expectedIn = (objects: readonly KubeObject[], range: HashRange, field: ShardKeyField = 'uid'): string[] =>
    uidsOf(objects.filter((o) => objectInRange(o, range, field)));

  test('20 objects: the two halves are disjoint, sum to 20, and each is exactly what our FNV-1a says', async () => {
    const namespace = `twenty-${run}`;
    const notes = await createNotes([namespace], 20, 'db');
    const [lower, upper] = splitHashSpace(2) as [HashRange, HashRange];
    const lowerList = await client.list(NOTE, { namespace, shardSelector: formatShardSelector(lower) });
    const upperList = await client.list(NOTE, { namespace, shardSelector: formatShardSelector(upper) });
    console.log(
      `20 Notes split by shardSelector on metadata.uid: ${lowerList.items.length} + ${upperList.items.length}`,
    );
    assert.equal(lowerList.items.length + upperList.items.length, 20);
    assert.ok(
      lowerList.items.length > 0 && upperList.items.length > 0,
      'uids are random: both halves empty or full is a 1-in-500,000 event',
    );
    assert.deepEqual(uidsOf(lowerList.items), expectedIn(notes, lower));
    assert.deepEqual(uidsOf(upperList.items), expectedIn(notes, upper));
  });

  test("200 objects, 4 uid ranges, 8 namespace-hash ranges and 3 members' multi-range selectors: the server range answers equal ours; paged lists carry the selector to every page", async () => {
    const namespaces = Array.from({ length: 8 }, (_, i) => `two-hundred-${run}-${i}`);
    const notes = await createNotes(namespaces, 25, 'n');
    const mine = (list: { items: KubeObject[] }): KubeObject[] =>
      list.items.filter((o) => namespaces.includes(o.metadata!.namespace!));
    let total = 0;
    for (const range of splitHashSpace(4)) {
      const shardSelector = formatShardSelector(range);
      const whole = mine(await client.list(NOTE, { shardSelector, limit: 0 }));
      assert.deepEqual(uidsOf(whole), expectedIn(notes, range), `uid range ${shardSelector}`);
      const paged = mine(await client.list(NOTE, { shardSelector, limit: 7 }));
      assert.deepEqual(uidsOf(paged), uidsOf(whole), 'a paged list returns the same range');
      total += whole.length;
    }
    assert.equal(total, 200);
    let byNamespace = 0;
    for (const range of splitHashSpace(8)) {
      const answered = mine(await client.list(NOTE, { shardSelector: formatShardSelector(range, 'namespace') }));
      assert.deepEqual(
        uidsOf(answered),
        expectedIn(notes, range, 'namespace'),
        `namespace range ${formatShardSelector(range, 'namespace')}`,
      );
      // A namespace hashes to one range: its objects never split.
      for (const ns of new Set(answered.map((o) => o.metadata!.namespace)))
        assert.equal(answered.filter((o) => o.metadata!.namespace === ns).length, 25);
      byNamespace += answered.length;
    }
    assert.equal(byNamespace, 200);
    // Three members' assignments: selectors of many ranges joined by ||, one request each.
    let byMember = 0;
    for (const [member, ranges] of assignHashRanges(['replica-a', 'replica-b', 'replica-c'])) {
      const answered = mine(await client.list(NOTE, { shardSelector: formatShardSelector(ranges) }));
      assert.deepEqual(
        uidsOf(answered),
        uidsOf(notes.filter((o) => objectInRange(o, ranges))),
        `${member}: ${ranges.length} ranges`,
      );
      byMember += answered.length;
    }
    assert.equal(byMember, 200);
  });

  test(
    'a watch-list with the selector streams only the range: initial events, then later creates',
    { timeout: WAIT_FOR_EVENTS_MS },
    async () => {
      const namespace = `watch-${run}`;
      const initial = await createNotes([namespace], 20, 'w');
      const [lower] = splitHashSpace(2) as [HashRange, HashRange];
      const ac = new AbortController();
      const events: WatchEvent<KubeObject>[] = [];
      const stream = client.watch<KubeObject>(NOTE, {
        namespace,
        shardSelector: formatShardSelector(lower),
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        allowWatchBookmarks: true,
        signal: ac.signal,
      });
      const later: KubeObject[] = [];
      let initialEnded = false;
      try {
        for await (const event of stream) {
          events.push(event);
          if (
            event.type === 'BOOKMARK' &&
            event.object.metadata.annotations?.[INITIAL_EVENTS_END] === 'true' &&
            !initialEnded
          ) {
            initialEnded = true;
            // Created now, until one lands in range: its event comes after those of all the others.
            for (let i = 0; ; i++) {
              later.push(await client.create<KubeObject>({ ...NOTE, metadata: { name: `later-${i}`, namespace } }));
              if (i >= 10 && objectInRange(later[later.length - 1]!, lower)) break;
            }
          }
          if (
            event.type === 'ADDED' &&
            later.length > 0 &&
            event.object.metadata?.uid === later[later.length - 1]!.metadata!.uid
          )
            break;
        }
      } finally {
        ac.abort();
      }
      const objectEvents = events.filter(
        (e): e is Extract<WatchEvent<KubeObject>, { type: 'ADDED' | 'MODIFIED' | 'DELETED' }> => e.type !== 'BOOKMARK',
      );
      const endAt = events.findIndex(
        (e) => e.type === 'BOOKMARK' && e.object.metadata.annotations?.[INITIAL_EVENTS_END] === 'true',
      );
      assert.ok(endAt >= 0, 'the initial-events-end bookmark came');
      const initialAdded = events.slice(0, endAt).filter((e) => e.type === 'ADDED');
      assert.deepEqual(
        uidsOf(initialAdded.map((e) => e.object as KubeObject)),
        expectedIn(initial, lower),
        'initial events: exactly the range',
      );
      assert.deepEqual(
        uidsOf(objectEvents.slice(initialAdded.length).map((e) => e.object)),
        expectedIn(later, lower),
        'later events: exactly the range',
      );
      assert.ok(
        expectedIn(later, lower).length < later.length,
        'some later objects were outside the range and never streamed',
      );
    },
  );

  test(
    'an informer with a shard selector (watch-list sync) caches only its range, including objects created after start',
    { timeout: WAIT_FOR_EVENTS_MS },
    async () => {
      const namespace = `informer-${run}`;
      const initial = await createNotes([namespace], 20, 'i');
      const [, upper] = splitHashSpace(2) as [HashRange, HashRange];
      const received: KubeObject[] = [];
      // What the server sent, before the informer's own client-side check: proves the server filtered.
      const observing = {
        watchList: client.watchList,
        listPage: client.listPage.bind(client),
        watch: <T = KubeObject>(type: Kind<T>, opts?: WatchOptions) =>
          tap(client.watch<T>(type, opts), (e) => e.type !== 'BOOKMARK' && received.push(e.object as KubeObject)),
      };
      const informer = new SharedInformer<KubeObject>(
        clientListerWatcher(observing, { ...NOTE, namespace, shardSelector: formatShardSelector(upper) }),
        { name: 'sharded-notes' },
      );
      let onAdd: ((uid: string) => void) | undefined;
      informer.addEventHandler({ add: (o) => onAdd?.(o.metadata!.uid!) });
      const ac = new AbortController();
      const running = informer.start(ac.signal);
      try {
        await informer.waitForSync(ac.signal, 30_000);
        assert.deepEqual(uidsOf(informer.reader.list()), expectedIn(initial, upper));
        const later: KubeObject[] = [];
        for (let i = 0; ; i++) {
          later.push(await client.create<KubeObject>({ ...NOTE, metadata: { name: `later-${i}`, namespace } }));
          if (i >= 10 && objectInRange(later[later.length - 1]!, upper)) break;
        }
        const last = later[later.length - 1]!.metadata!.uid!;
        if (!informer.reader.list().some((o) => o.metadata?.uid === last))
          await new Promise<void>((resolve) => (onAdd = (uid) => uid === last && resolve()));
        assert.deepEqual(
          uidsOf(informer.reader.list()),
          [...expectedIn(initial, upper), ...expectedIn(later, upper)].sort(),
        );
        assert.ok(
          received.length > 0 && received.every((o) => objectInRange(o, upper)),
          `the server streamed only the range (${received.length} objects)`,
        );
        assert.equal(informer.health().objects, expectedIn([...initial, ...later], upper).length);
        assert.equal(informer.health().listMode, 'watch-list', 'synced by a sharded watch-list, not a list');
      } finally {
        ac.abort();
        await running;
      }
    },
  );
});

async function* tap<T>(events: AsyncIterable<T>, see: (event: T) => unknown): AsyncGenerator<T, void, undefined> {
  for await (const e of events) {
    see(e);
    yield e;
  }
}
