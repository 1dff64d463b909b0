import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FairLevel } from './fair-level.js';

const byCluster = (key: string): string => key.slice(0, key.indexOf('/'));

/** How many groups the level keeps (its map), read from outside: what a leak would grow. */
function groupsKept(level: FairLevel): number {
  return (Reflect.get(level, 'groups') as Map<string, unknown>).size;
}

function turnsKept(level: FairLevel): number {
  return (Reflect.get(level, 'turns') as { length: number }).length;
}

test('50,000 clusters that each queue a key and are served keep no entry once served, while another cluster stays queued', () => {
  const level = new FairLevel(0, byCluster);
  level.push('stays/ns/0', 0);
  level.push('stays/ns/1', 0);
  for (let i = 0; i < 50_000; i++) level.push(`cluster-${i}/ns/obj`, i);
  assert.equal(groupsKept(level), 50_001);
  let served = 0;
  while (level.live > 1) if (level.shift() !== 'stays/ns/0') served++;
  assert.equal(served, 50_000);
  assert.equal(groupsKept(level), 1);
  assert.equal(turnsKept(level), 1);
  assert.equal(level.liveOf('cluster-0'), 0);
  assert.equal(level.liveOf('stays'), 1);
});

test("a group whose last key moved up leaves both the map and the turn order, and the others' turns keep their order", () => {
  const level = new FairLevel(0, byCluster);
  for (const key of ['a/1', 'b/1', 'c/1', 'a/2', 'c/2']) level.push(key, 0);
  level.markMovedUp('b/1');
  assert.equal(level.live, 4);
  assert.equal(groupsKept(level), 2);
  assert.equal(turnsKept(level), 2);
  assert.deepEqual([level.shift(), level.shift(), level.shift(), level.shift()], ['a/1', 'c/1', 'a/2', 'c/2']);
  assert.equal(groupsKept(level), 0);
});

test('the oldest queued time is the oldest head of any group, skipping keys that moved up', () => {
  const level = new FairLevel(0, byCluster);
  level.push('a/1', 5);
  level.push('b/1', 7);
  level.push('a/2', 9);
  assert.equal(level.headQueuedAtMs(), 5);
  level.markMovedUp('a/1');
  assert.equal(level.headQueuedAtMs(), 7);
  assert.equal(level.shift(), 'a/2', "a's turn still comes first; its stale entry is skipped");
  assert.equal(level.headQueuedAtMs(), 7);
});

test('the oldest queued time follows the turns: after the oldest group is served, the next oldest head is reported', () => {
  const level = new FairLevel(0, byCluster);
  level.push('a/1', 1);
  level.push('b/1', 2);
  level.push('a/2', 3);
  level.push('b/2', 4);
  const seen: [string, number][] = [];
  while (level.live > 0) {
    const oldest = level.headQueuedAtMs();
    seen.push([level.shift(), oldest]);
  }
  assert.deepEqual(seen, [
    ['a/1', 1],
    ['b/1', 2],
    ['a/2', 3],
    ['b/2', 4],
  ]);
});
