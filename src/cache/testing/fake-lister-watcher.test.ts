import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../core/object-key.js';
import { isGone } from '../../client/api-error.js';
import { FakeListerWatcher } from './fake-lister-watcher.js';
import type { ListerWatchEvent } from '../lister-watcher.js';

const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } });

async function take(it: AsyncIterator<ListerWatchEvent<KubeObject>>, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await it.next();
    if (r.done) break;
    const meta = r.value.object.metadata as { name?: string; resourceVersion?: string } | undefined;
    out.push(`${r.value.type}:${meta?.name ?? meta?.resourceVersion}`);
  }
  return out;
}

test('the fake serves paged snapshot lists whose continue tokens expire on compaction', async () => {
  const lw = new FakeListerWatcher([cm('a'), cm('b'), cm('c')], { ignoreLimitForRv0: false });
  const p1 = await lw.list({ limit: 2 });
  lw.create(cm('d')); // not in the snapshot
  const p2 = await lw.list({ limit: 2, continue: p1.continue });
  assert.deepEqual(
    [...p1.items, ...p2.items].map((o) => o.metadata?.name),
    ['a', 'b', 'c'],
  );
  assert.equal(p2.resourceVersion, p1.resourceVersion, 'every page carries the snapshot resourceVersion');
  const q1 = await lw.list({ limit: 2 });
  lw.create(cm('e'));
  lw.compact();
  await assert.rejects(lw.list({ limit: 2, continue: q1.continue }), isGone);
});

test('the fake serves resourceVersion=0 lists whole, as the watch cache does', async () => {
  const lw = new FakeListerWatcher([cm('a'), cm('b'), cm('c')]);
  const page = await lw.list({ limit: 1, resourceVersion: '0' });
  assert.equal(page.items.length, 3);
  assert.equal(page.continue, undefined);
});

test('the fake replays history after a resourceVersion, then streams, and 410s below the compaction point', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const rv = lw.resourceVersion;
  lw.create(cm('b'));
  const it = lw.watch({ resourceVersion: rv })[Symbol.asyncIterator]();
  assert.deepEqual(await take(it, 1), ['ADDED:b']);
  lw.delete('ns/a');
  lw.bookmark();
  assert.deepEqual(await take(it, 2), ['DELETED:a', `BOOKMARK:${lw.resourceVersion}`]);
  lw.closeWatches();
  assert.equal((await it.next()).done, true);
  lw.compact();
  await assert.rejects(lw.watch({ resourceVersion: rv })[Symbol.asyncIterator]().next(), isGone);
});

test('a watch without resourceVersion starts with synthetic ADDED events, as the API server does', async () => {
  const lw = new FakeListerWatcher([cm('a'), cm('b')]);
  lw.compact();
  const it = lw.watch({})[Symbol.asyncIterator]();
  assert.deepEqual(await take(it, 2), ['ADDED:a', 'ADDED:b']);
});

test('handed-out objects are copies: mutating them does not change the fake', async () => {
  const lw = new FakeListerWatcher([cm('a')]);
  const page = await lw.list({});
  page.items[0]!.metadata!.name = 'changed';
  assert.equal(lw.current()[0]?.metadata?.name, 'a');
});
