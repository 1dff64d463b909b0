import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Registry } from 'prom-client';
import { InvalidArgumentError, InvalidOptionError } from '../core/errors.js';
import { FakeClock } from '../core/fake-clock.js';
import { seededRandom } from '../core/seeded-random.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { DEFAULT_PRIORITY_AGING_MS, LOW_PRIORITY, Workqueue } from './workqueue.js';

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

test('keys go out highest priority first, first in first out within a priority', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  q.add('low-1', { priority: LOW_PRIORITY });
  q.add('normal-1');
  q.add('low-2', { priority: LOW_PRIORITY });
  q.add('high-1', { priority: 10 });
  q.add('normal-2', { priority: 0 });
  assert.equal(q.length, 5);
  assert.deepEqual(Object.fromEntries(q.lengthByPriority()), { 10: 1, 0: 2, [-100]: 2 });
  assert.deepEqual(await drain(q), ['high-1', 'normal-1', 'normal-2', 'low-1', 'low-2']);
  assert.equal(q.length, 0);
});

test('a waiting key added again at a higher priority moves up, to the back of its new priority; a lower one never moves it down', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  for (const key of ['a', 'b', 'c']) q.add(key, { priority: LOW_PRIORITY });
  q.add('n');
  q.add('c'); // a watch event for a key still waiting from the initial list
  q.add('n', { priority: LOW_PRIORITY }); // no effect: n keeps 0
  assert.equal(q.length, 4, 'still one entry per key');
  assert.deepEqual(await drain(q), ['n', 'c', 'a', 'b']);
});

test('a key raised and handed out, then queued again at its old priority, runs once, in its new place', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  q.add('a', { priority: LOW_PRIORITY });
  q.add('b', { priority: LOW_PRIORITY });
  q.add('a'); // up to 0: leaves a stale entry at -100, before b
  assert.deepEqual(await drain(q, 1), ['a']);
  q.add('a', { priority: LOW_PRIORITY }); // queued again at -100, after b
  assert.equal(q.length, 2);
  assert.deepEqual(await drain(q), ['b', 'a']);
  assert.equal(q.length, 0);
  q.add('z');
  assert.deepEqual(await drain(q), ['z'], 'no stale entry of a is handed out');
});

test('a key in flight keeps the priority it was handed out at, and a re-add while in flight runs after done at the higher one', async () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  q.add('a', { priority: LOW_PRIORITY });
  const first = await q.get();
  assert.deepEqual(first, { shutdown: false, key: 'a' });
  assert.equal(q.priorityOf('a'), LOW_PRIORITY);
  assert.equal(q.priorityOf('never-added'), undefined);
  q.add('a', { priority: LOW_PRIORITY });
  q.add('a', { priority: 5 }); // dirty while in flight: remembered for when it is queued
  q.add('b', { priority: 1 });
  q.done('a');
  assert.deepEqual(await drain(q, 1), ['a'], 'a runs again at 5, before b at 1');
  assert.deepEqual(await drain(q), ['b']);
  q.add('c');
  await q.get();
  assert.equal(q.priorityOf('c'), 0);
});

test('delayed and rate-limited adds carry their priority; repeated requests keep the highest', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  q.addAfter('late', 50, { priority: LOW_PRIORITY });
  q.addAfter('late', 80, { priority: 7 }); // later time loses, higher priority wins
  q.addRateLimited('retry', { priority: LOW_PRIORITY });
  q.add('normal');
  await clock.advance(50);
  assert.equal(q.waitingCount, 0);
  assert.deepEqual(await drain(q), ['late', 'normal', 'retry']);
});

test('with priorityQueue: false, keys go out first in first out whatever their priority', async () => {
  const q = new Workqueue({ clock: new FakeClock(0), priorityQueue: false });
  assert.equal(q.isPriorityQueue, false);
  q.add('low', { priority: LOW_PRIORITY });
  q.add('high', { priority: 100 });
  q.add('low', { priority: 1000 });
  const next = await q.get();
  assert.deepEqual(next, { shutdown: false, key: 'low' });
  assert.equal(q.priorityOf('low'), 0);
  q.done('low');
  assert.deepEqual(await drain(q), ['high']);
});

test('a priority that is not an integer is refused; so is a negative aging time', () => {
  const q = new Workqueue({ clock: new FakeClock(0) });
  assert.throws(() => q.add('a', { priority: 0.5 }), InvalidArgumentError);
  assert.throws(() => q.add('a', { priority: Number.NaN }), InvalidArgumentError);
  assert.throws(() => q.addAfter('a', 10, { priority: Infinity }), InvalidArgumentError);
  assert.equal(q.length, 0);
  assert.throws(() => new Workqueue({ priorityAgingMs: -1 }), InvalidOptionError);
});

/**
 * A steady stream of normal-priority keys that never lets the queue run dry (each hand-out adds a
 * fresh key), and low-priority keys queued at the start: the starvation scenario.
 */
async function streamWithLowKeys(
  agingMs: number,
  lowKeys: number,
): Promise<{ q: Workqueue; clock: FakeClock; next: () => Promise<string> }> {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock, priorityAgingMs: agingMs });
  for (let i = 0; i < lowKeys; i++) q.add(`low-${i}`, { priority: LOW_PRIORITY });
  let fresh = 0;
  for (let i = 0; i < 3; i++) q.add(`normal-${fresh++}`);
  const next = async (): Promise<string> => {
    const got = await q.get();
    assert.equal(got.shutdown, false);
    const key = got.shutdown ? '' : got.key;
    q.done(key);
    q.add(`normal-${fresh++}`);
    await clock.advance(100); // each reconcile takes 100 ms
    return key;
  };
  return { q, clock, next };
}

test('aging: a low-priority key is not starved by a steady stream of normal ones — once overdue it gets every second hand-out', async () => {
  const { next } = await streamWithLowKeys(DEFAULT_PRIORITY_AGING_MS, 3);
  const order: string[] = [];
  // Until the low keys have waited 10 s (100 hand-outs of 100 ms), only normal keys go out.
  for (let i = 0; i < 100; i++) order.push(await next());
  assert.ok(
    order.every((k) => k.startsWith('normal-')),
    'before the aging time, priority is strict',
  );
  // Then the overdue low keys alternate with the normal stream, oldest first.
  const after: string[] = [];
  for (let i = 0; i < 6; i++) after.push(await next());
  assert.deepEqual(
    after.map((k) => k.split('-')[0]),
    ['low', 'normal', 'low', 'normal', 'low', 'normal'],
  );
  assert.deepEqual(
    after.filter((k) => k.startsWith('low-')),
    ['low-0', 'low-1', 'low-2'],
  );
});

test('aging off (priorityAgingMs: Infinity): the same stream starves the low-priority key — what the aging rule prevents', async () => {
  const { next, q } = await streamWithLowKeys(Infinity, 1);
  for (let i = 0; i < 1_000; i++) assert.notEqual(await next(), 'low-0');
  assert.deepEqual(Object.fromEntries(q.lengthByPriority()), { 0: 3, [-100]: 1 });
});

test('aging: a normal key added during a long backlog of overdue low keys waits behind at most one of them', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock, priorityAgingMs: 1_000 });
  for (let i = 0; i < 100; i++) q.add(`low-${i}`, { priority: LOW_PRIORITY });
  await clock.advance(5_000); // every low key is overdue
  for (let edit = 0; edit < 5; edit++) {
    q.add(`edit-${edit}`);
    const out = await drain(q, 2);
    assert.ok(out.includes(`edit-${edit}`), `edit ${edit} went out within two hand-outs (${out.join(', ')})`);
  }
});

/** The spec, restated as slowly as possible: the oracle for random sequences of operations. */
class ModelQueue {
  private readonly dirty = new Map<string, number>();
  private readonly processing = new Set<string>();
  /** Queued keys: priority, when queued, and a tie-breaking sequence number. */
  private queued: { key: string; priority: number; atMs: number; seq: number }[] = [];
  private seq = 0;
  private lastJumped = false;

  constructor(
    private readonly clock: FakeClock,
    private readonly agingMs: number,
  ) {}

  add(key: string, priority: number): void {
    const current = this.dirty.get(key);
    if (current !== undefined) {
      if (priority <= current) return;
      this.dirty.set(key, priority);
      const entry = this.queued.find((e) => e.key === key);
      if (entry) Object.assign(entry, { priority, atMs: this.clock.monotonicNow(), seq: this.seq++ });
      return;
    }
    this.dirty.set(key, priority);
    if (!this.processing.has(key)) this.queue(key);
  }

  get(): string | undefined {
    if (this.queued.length === 0) return undefined;
    const byPriority = [...this.queued].sort((a, b) => b.priority - a.priority || a.seq - b.seq);
    let pick = byPriority[0]!;
    const overdue = this.queued
      .filter((e) => e.priority < pick.priority && e.atMs <= this.clock.monotonicNow() - this.agingMs)
      .sort((a, b) => a.atMs - b.atMs || b.priority - a.priority || a.seq - b.seq);
    const distinctPriorities = new Set(this.queued.map((e) => e.priority)).size;
    if (distinctPriorities > 1 && !this.lastJumped && overdue[0]) {
      pick = overdue[0];
      this.lastJumped = true;
    } else {
      this.lastJumped = false;
    }
    this.queued = this.queued.filter((e) => e !== pick);
    this.dirty.delete(pick.key);
    this.processing.add(pick.key);
    return pick.key;
  }

  done(key: string): void {
    if (!this.processing.delete(key)) return;
    if (this.dirty.has(key)) this.queue(key);
  }

  private queue(key: string): void {
    this.queued.push({ key, priority: this.dirty.get(key)!, atMs: this.clock.monotonicNow(), seq: this.seq++ });
  }
}

test('random adds at random priorities, gets, dones and clock steps hand out keys exactly as the model does (30 seeds)', async () => {
  for (let seed = 1; seed <= 30; seed++) {
    const random = seededRandom(seed);
    const clock = new FakeClock(0);
    const agingMs = 40;
    const q = new Workqueue({ clock, priorityAgingMs: agingMs });
    const model = new ModelQueue(clock, agingMs);
    const held: string[] = [];
    const priorities = [LOW_PRIORITY, -1, 0, 0, 3];
    for (let step = 0; step < 600; step++) {
      const op = random();
      if (op < 0.5) {
        const key = `k${Math.floor(random() * 10)}`;
        const priority = priorities[Math.floor(random() * priorities.length)]!;
        q.add(key, { priority });
        model.add(key, priority);
      } else if (op < 0.75) {
        const want = model.get();
        if (want === undefined) {
          assert.equal(q.length, 0, `seed ${seed} step ${step}: the model is empty`);
          continue;
        }
        const got = await q.get();
        assert.deepEqual(got, { shutdown: false, key: want }, `seed ${seed} step ${step}`);
        held.push(want);
      } else if (op < 0.95) {
        if (held.length === 0) continue;
        const key = held.splice(Math.floor(random() * held.length), 1)[0]!;
        q.done(key);
        model.done(key);
      } else {
        await clock.advance(Math.floor(random() * 30));
      }
    }
  }
});

async function depthSeries(registry: Registry): Promise<Record<string, number>> {
  const family = (await registry.getMetricsAsJSON()).find((m) => m.name === 'workqueue_depth');
  return Object.fromEntries(
    (family?.values ?? []).map((v) => [String((v.labels as Record<string, unknown>).priority), v.value]),
  );
}

test('workqueue_depth has one series per priority seen, the default one from the start, none going away', async () => {
  const registry = createMetricsRegistry();
  const q = new Workqueue({ name: 'widgets', registry, clock: new FakeClock(0) });
  assert.deepEqual(await depthSeries(registry), { 0: 0 });
  q.add('a', { priority: LOW_PRIORITY });
  q.add('b', { priority: LOW_PRIORITY });
  q.add('c');
  assert.deepEqual(await depthSeries(registry), { 0: 1, [-100]: 2 });
  q.add('b'); // raised: counted at its new priority
  assert.deepEqual(await depthSeries(registry), { 0: 2, [-100]: 1 });
  await drain(q);
  assert.deepEqual(await depthSeries(registry), { 0: 0, [-100]: 0 });
  assert.match(await registry.metrics(), /^workqueue_depth\{name="widgets",controller="widgets",priority="-100"\} 0$/m);
});
