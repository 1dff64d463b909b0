import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { InvalidOptionError } from '../core/errors.js';
import { FakeClock } from '../core/fake-clock.js';
import { seededRandom } from '../core/seeded-random.js';
import { LOW_PRIORITY, Workqueue, type WorkqueueOptions } from './workqueue.js';

/** A fleet controller's grouping: `cluster/namespace/name` → `cluster`. */
const byCluster = (key: string): string => key.slice(0, key.indexOf('/'));

function fairQueue(options: WorkqueueOptions = {}): { q: Workqueue; clock: FakeClock } {
  const clock = new FakeClock(0);
  return { q: new Workqueue({ clock, fairnessKey: byCluster, ...options }), clock };
}

/** Takes `n` keys (each `done` at once), in the order they are handed out. */
async function drain(q: Workqueue, n = q.length): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const next = await q.get();
    assert.equal(next.shutdown, false);
    if (next.shutdown) break;
    out.push(next.key);
    q.done(next.key);
  }
  return out;
}

/** How many hand-outs until every key of `group` was handed out. */
async function handOutsUntilDrained(q: Workqueue, group: string, keys: number): Promise<number> {
  let seen = 0;
  for (let handOuts = 1; ; handOuts++) {
    const [key] = await drain(q, 1);
    if (byCluster(key!) === group && ++seen === keys) return handOuts;
  }
}

function relistThenSmallCluster(q: Workqueue): void {
  for (let i = 0; i < 10_000; i++) q.add(`big/ns/obj-${i}`, { priority: LOW_PRIORITY });
  for (let i = 0; i < 10; i++) q.add(`small/ns/obj-${i}`, { priority: LOW_PRIORITY });
}

test('a cluster with 10 keys queued behind a cluster relisting 10,000 gets all of them within the first 20 hand-outs', async () => {
  const { q } = fairQueue();
  relistThenSmallCluster(q);
  assert.equal(q.lengthOfGroup('big'), 10_000);
  assert.equal(q.lengthOfGroup('small'), 10);
  assert.equal(q.lengthOfGroup('gone'), 0);
  assert.equal(await handOutsUntilDrained(q, 'small', 10), 20);
  assert.equal(q.lengthOfGroup('small'), 0);
  assert.equal(q.lengthOfGroup('big'), 9_990);
});

test('without a fairness key the same cluster waits for the whole relist: what fairness prevents', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  relistThenSmallCluster(q);
  assert.equal(q.lengthOfGroup('small'), 0, 'no groups without the option');
  assert.equal(await handOutsUntilDrained(q, 'small', 10), 10_010);
});

test('groups take turns in the order they first queued a key, first in first out inside each group', async () => {
  const { q } = fairQueue();
  for (const key of ['a/1', 'a/2', 'a/3', 'b/1', 'c/1', 'c/2', 'b/2']) q.add(key);
  assert.deepEqual(await drain(q), ['a/1', 'b/1', 'c/1', 'a/2', 'b/2', 'c/2', 'a/3']);
});

test('with a single group the order is exactly that of the queue without a fairness key (priorities, aging, re-adds, 20 seeds)', async () => {
  for (let seed = 1; seed <= 20; seed++) {
    const random = seededRandom(seed);
    const plainClock = new FakeClock(0);
    const oneGroupClock = new FakeClock(0);
    const plain = new Workqueue({ clock: plainClock, priorityAgingMs: 40 });
    const oneGroup = new Workqueue({ clock: oneGroupClock, priorityAgingMs: 40, fairnessKey: () => 'all' });
    const held: string[] = [];
    const priorities = [LOW_PRIORITY, 0, 0, 5];
    for (let step = 0; step < 500; step++) {
      const op = random();
      if (op < 0.5) {
        const key = `k${Math.floor(random() * 12)}`;
        const priority = priorities[Math.floor(random() * priorities.length)]!;
        plain.add(key, { priority });
        oneGroup.add(key, { priority });
      } else if (op < 0.75) {
        assert.equal(oneGroup.length, plain.length, `seed ${seed} step ${step}`);
        if (plain.length === 0) continue;
        const [want, got] = [await plain.get(), await oneGroup.get()];
        assert.deepEqual(got, want, `seed ${seed} step ${step}`);
        if (!want.shutdown) held.push(want.key);
      } else if (op < 0.95) {
        if (held.length === 0) continue;
        const key = held.splice(Math.floor(random() * held.length), 1)[0]!;
        plain.done(key);
        oneGroup.done(key);
      } else {
        const ms = Math.floor(random() * 30);
        await plainClock.advance(ms);
        await oneGroupClock.advance(ms);
      }
    }
  }
});

test('priority still wins across levels: a higher-priority key of the big group goes before every normal key of the others', async () => {
  const { q } = fairQueue();
  for (let i = 0; i < 3; i++) q.add(`small/ns/${i}`);
  for (let i = 0; i < 3; i++) q.add(`big/ns/${i}`, { priority: 10 });
  q.add('other/ns/0');
  assert.deepEqual(await drain(q), [
    'big/ns/0',
    'big/ns/1',
    'big/ns/2',
    'small/ns/0',
    'other/ns/0',
    'small/ns/1',
    'small/ns/2',
  ]);
});

test('aging still lets low priority through, and the aged hand-out goes to the next group in turn, not to the oldest key', async () => {
  const { q, clock } = fairQueue({ priorityAgingMs: 1_000 });
  // The big cluster's relist is queued first, so its keys are the oldest at the low level.
  for (let i = 0; i < 100; i++) q.add(`big/ns/${i}`, { priority: LOW_PRIORITY });
  q.add('small/ns/0', { priority: LOW_PRIORITY });
  q.add('small/ns/1', { priority: LOW_PRIORITY });
  await clock.advance(2_000); // every low key is overdue
  let fresh = 0;
  const order: string[] = [];
  for (let i = 0; i < 8; i++) {
    q.add(`edit/ns/${fresh++}`); // a steady stream of normal keys that never lets the queue run dry
    order.push(...(await drain(q, 1)));
  }
  assert.deepEqual(order, [
    'big/ns/0',
    'edit/ns/0',
    'small/ns/0',
    'edit/ns/1',
    'big/ns/1',
    'edit/ns/2',
    'small/ns/1',
    'edit/ns/3',
  ]);
});

test('a key is queued once however often it is added, in whichever order the groups add theirs', async () => {
  const { q } = fairQueue();
  for (let round = 0; round < 3; round++) for (const key of ['a/x', 'b/x', 'a/y', 'b/x', 'a/x']) q.add(key);
  assert.equal(q.length, 3);
  assert.equal(q.lengthOfGroup('a'), 2);
  assert.equal(q.lengthOfGroup('b'), 1);
  assert.deepEqual(await drain(q), ['a/x', 'b/x', 'a/y']);
  assert.equal(q.length, 0);
});

test('a key re-added while in flight is not handed out again until done, then once, at the back of its group', async () => {
  const { q } = fairQueue();
  q.add('a/1');
  const first = await q.get();
  assert.deepEqual(first, { shutdown: false, key: 'a/1' });
  q.add('a/1');
  q.add('a/1');
  q.add('a/2');
  q.add('b/1');
  assert.equal(q.length, 2, 'the in-flight key is dirty, not queued');
  assert.equal(q.lengthOfGroup('a'), 1);
  q.done('a/1');
  assert.equal(q.lengthOfGroup('a'), 2);
  assert.deepEqual(await drain(q), ['a/2', 'b/1', 'a/1']);
});

test('a group whose keys are all handed out is gone: it rejoins at the back of the turn order', async () => {
  const { q } = fairQueue();
  q.add('a/1');
  q.add('b/1');
  q.add('b/2');
  q.add('c/1');
  assert.deepEqual(await drain(q, 2), ['a/1', 'b/1']); // a leaves; the turn order is now c, b
  q.add('a/2');
  assert.deepEqual(await drain(q), ['c/1', 'b/2', 'a/2']);
});

test('a group whose last queued key moved up a priority leaves the lower level at once', async () => {
  const { q } = fairQueue();
  for (const key of ['a/1', 'b/1', 'c/1', 'a/2']) q.add(key, { priority: LOW_PRIORITY });
  q.add('b/1'); // up to 0: b has no key left at -100, so it leaves that level's turn order
  assert.equal(q.lengthOfGroup('b'), 1);
  q.add('b/2', { priority: LOW_PRIORITY }); // b rejoins -100 at the back, behind c
  assert.deepEqual(await drain(q), ['b/1', 'a/1', 'c/1', 'b/2', 'a/2']);
});

test('delayed and rate-limited adds join their group when due; shutdown drops every group and drains the workers', async () => {
  const { q, clock } = fairQueue();
  q.add('a/1');
  q.add('a/2');
  q.addAfter('b/1', 50);
  q.addRateLimited('b/2');
  assert.equal(q.lengthOfGroup('b'), 0);
  await clock.advance(50);
  assert.equal(q.lengthOfGroup('b'), 2);
  const held = await q.get();
  assert.deepEqual(held, { shutdown: false, key: 'a/1' });
  q.add('c/1');
  const stopping = q.shutdown({ drainTimeoutMs: 1_000 });
  assert.equal(q.length, 0);
  assert.equal(q.lengthOfGroup('b'), 0);
  assert.deepEqual(await q.get(), { shutdown: true });
  q.add('c/2');
  assert.equal(q.length, 0, 'no adds after shutdown, whatever the group');
  q.done('a/1');
  assert.deepEqual(await stopping, { drained: true });
});

test('a fairness key that is not a function is refused', () => {
  assert.throws(
    () => new Workqueue({ fairnessKey: 'cluster' as unknown as (key: string) => string }),
    InvalidOptionError,
  );
});

/** The spec, restated as plainly as possible: the oracle for random sequences of operations. */
class FairModel {
  private readonly dirty = new Map<string, number>();
  private readonly processing = new Set<string>();
  /** Per priority: the groups in turn order, and each group's keys with when they were queued. */
  private readonly levels = new Map<
    number,
    { turns: string[]; groups: Map<string, { key: string; atMs: number }[]> }
  >();
  private lastJumped = false;

  constructor(
    private readonly clock: FakeClock,
    private readonly agingMs: number,
  ) {}

  get length(): number {
    let n = 0;
    for (const level of this.levels.values()) for (const keys of level.groups.values()) n += keys.length;
    return n;
  }

  lengthOfGroup(group: string): number {
    let n = 0;
    for (const level of this.levels.values()) n += level.groups.get(group)?.length ?? 0;
    return n;
  }

  add(key: string, priority: number): void {
    const current = this.dirty.get(key);
    if (current !== undefined) {
      if (priority <= current) return;
      this.dirty.set(key, priority);
      if (!this.processing.has(key)) {
        this.remove(key, current);
        this.queue(key, priority);
      }
      return;
    }
    this.dirty.set(key, priority);
    if (!this.processing.has(key)) this.queue(key, priority);
  }

  get(): string | undefined {
    const priorities = [...this.levels.keys()].sort((a, b) => b - a);
    if (priorities.length === 0) return undefined;
    let priority = priorities[0]!;
    if (priorities.length > 1 && !this.lastJumped) {
      const dueBy = this.clock.monotonicNow() - this.agingMs;
      let oldest = Infinity;
      for (const p of priorities.slice(1)) {
        const atMs = Math.min(...[...this.levels.get(p)!.groups.values()].flat().map((e) => e.atMs));
        if (atMs <= dueBy && atMs < oldest) [oldest, priority] = [atMs, p];
      }
      if (oldest !== Infinity) this.lastJumped = true;
    } else {
      this.lastJumped = false;
    }
    const level = this.levels.get(priority)!;
    const group = level.turns.shift()!;
    const keys = level.groups.get(group)!;
    const { key } = keys.shift()!;
    if (keys.length > 0) level.turns.push(group);
    else level.groups.delete(group);
    if (level.groups.size === 0) this.levels.delete(priority);
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  done(key: string): void {
    if (!this.processing.delete(key)) return;
    const priority = this.dirty.get(key);
    if (priority !== undefined) this.queue(key, priority);
  }

  private queue(key: string, priority: number): void {
    let level = this.levels.get(priority);
    if (!level) this.levels.set(priority, (level = { turns: [], groups: new Map() }));
    const group = byCluster(key);
    let keys = level.groups.get(group);
    if (!keys) {
      level.groups.set(group, (keys = []));
      level.turns.push(group);
    }
    keys.push({ key, atMs: this.clock.monotonicNow() });
  }

  private remove(key: string, priority: number): void {
    const level = this.levels.get(priority)!;
    const group = byCluster(key);
    const keys = level.groups.get(group)!;
    keys.splice(
      keys.findIndex((e) => e.key === key),
      1,
    );
    if (keys.length === 0) {
      level.groups.delete(group);
      level.turns.splice(level.turns.indexOf(group), 1);
    }
    if (level.groups.size === 0) this.levels.delete(priority);
  }
}

type Op =
  | { readonly op: 'add'; readonly key: string; readonly priority: number }
  | { readonly op: 'get' }
  | { readonly op: 'done'; readonly pick: number }
  | { readonly op: 'advance'; readonly ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      key: fc
        .tuple(fc.constantFrom('g0', 'g1', 'g2', 'g3'), fc.integer({ min: 0, max: 3 }))
        .map(([group, i]) => `${group}/ns/k${i}`),
      priority: fc.constantFrom(LOW_PRIORITY, -1, 0, 0, 3),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('get' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('done' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }) },
);

test('random adds at random priorities across four groups, gets, dones and clock steps hand out keys exactly as the round-robin model does (fast-check, seed 26)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 50, maxLength: 300, size: 'max' }), async (ops) => {
      const clock = new FakeClock(0);
      const agingMs = 40;
      const q = new Workqueue({ clock, priorityAgingMs: agingMs, fairnessKey: byCluster });
      const model = new FairModel(clock, agingMs);
      const held: string[] = [];
      for (const step of ops) {
        if (step.op === 'add') {
          q.add(step.key, { priority: step.priority });
          model.add(step.key, step.priority);
        } else if (step.op === 'get') {
          const want = model.get();
          if (want === undefined) {
            assert.equal(q.length, 0, 'the model is empty');
            continue;
          }
          assert.deepEqual(await q.get(), { shutdown: false, key: want });
          held.push(want);
        } else if (step.op === 'done') {
          if (held.length === 0) continue;
          const key = held.splice(step.pick % held.length, 1)[0]!;
          q.done(key);
          model.done(key);
        } else {
          await clock.advance(step.ms);
        }
        assert.equal(q.length, model.length);
        for (const group of ['g0', 'g1', 'g2', 'g3']) assert.equal(q.lengthOfGroup(group), model.lengthOfGroup(group));
      }
    }),
    { seed: 26, numRuns: 300 },
  );
});
