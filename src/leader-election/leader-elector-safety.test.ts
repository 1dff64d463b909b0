import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock } from '../core/clock.js';
import { FakeClock } from '../core/fake-clock.js';
import { ApiError } from '../client/api-error.js';
import { FakeLeaseApi, type FakeLeaseFault } from './testing/fake-lease-api.js';
import { startCandidate, type Candidate } from './testing/candidate.js';
import { findOverlap, type Interval } from './testing/intervals.js';
import { seededRandom } from '../core/seeded-random.js';

/** A process's view of time: its own wall-clock skew and monotonic origin over the shared fake time. */
function skewedClock(base: FakeClock, wallOffsetMs: number, monotonicOffsetMs: number): Clock {
  return {
    now: () => base.now() + wallOffsetMs,
    monotonicNow: () => base.monotonicNow() + monotonicOffsetMs,
    setTimer: (ms, fn) => base.setTimer(ms, fn),
  };
}

const TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 } as const;
const SIMULATED_MS = 90_000;

/**
 * Three candidates (and replacements) on one fake Lease API with random latency on both legs,
 * errors, hung requests, writes whose answer is lost, partitions of one candidate, whole-server
 * pauses, skewed clocks, shutdowns and restarts (sometimes reusing the identity of a candidate that is
 * still running, partitioned: a zombie). Returns every leadership interval on the shared timeline.
 */
async function simulate(seed: number): Promise<{ intervals: Interval[]; maxSimultaneous: number; partitions: number }> {
  const rnd = seededRandom(seed);
  const clock = new FakeClock();
  const partitionedUntil = new Map<string, number>();
  let partitions = 0;
  const api = new FakeLeaseApi({
    clock,
    faults: (r): FakeLeaseFault => {
      if ((partitionedUntil.get(r.caller) ?? -1) > clock.monotonicNow()) return { hang: true };
      const x = rnd();
      const latency = { requestDelayMs: Math.floor(rnd() * 250), responseDelayMs: Math.floor(rnd() * 250) };
      if (x < 0.05) return { ...latency, error: new ApiError({ status: 500, message: 'injected' }) };
      if (x < 0.08) return { ...latency, dropResponse: true };
      if (x < 0.1) return { hang: true };
      return latency;
    },
  });
  const all: Candidate[] = [];
  const live: Candidate[] = [];
  let next = 0;
  const spawn = (identity = `c${next++}`): void => {
    const c = startCandidate(clock, api, identity, {
      ...TIMINGS,
      reenterCandidacy: true,
      random: rnd,
      clock: skewedClock(clock, Math.floor((rnd() - 0.5) * 7_200_000), Math.floor(rnd() * 1e6)),
    });
    all.push(c);
    live.push(c);
  };
  for (let i = 0; i < 3; i++) spawn();

  let maxSimultaneous = 0;
  while (clock.monotonicNow() < SIMULATED_MS) {
    await clock.advance(1 + Math.floor(rnd() * 150));
    maxSimultaneous = Math.max(maxSimultaneous, all.filter((c) => c.elector.isLeader()).length);
    const event = rnd();
    if (event < 0.004) {
      // Partition one candidate: its requests hang, its terms must end on their own deadline.
      const victim = live[Math.floor(rnd() * live.length)]!;
      partitionedUntil.set(victim.elector.identity, clock.monotonicNow() + 1_000 + rnd() * 6_000);
      partitions++;
    } else if (event < 0.006) {
      api.pause();
      clock.setTimer(500 + rnd() * 4_000, () => api.resume());
    } else if (event < 0.008 && live.length > 1) {
      // Clean shutdown of one, and a fresh replacement.
      const victim = live.splice(Math.floor(rnd() * live.length), 1)[0]!;
      victim.stop();
      spawn();
    } else if (event < 0.009) {
      // A replacement with the identity of one that is cut off for good but still running.
      const zombie = live[Math.floor(rnd() * live.length)]!;
      partitionedUntil.set(zombie.elector.identity, Number.POSITIVE_INFINITY);
      spawn(zombie.elector.identity);
    }
  }
  api.resume();
  const endMs = clock.monotonicNow();
  const intervals = all.flatMap((c, i) =>
    c.terms.map((t) => ({ who: `${c.elector.identity}#${i}`, start: t.startMs, end: t.endMs ?? endMs })),
  );
  for (const c of all) c.stop();
  await clock.advance(10_000);
  return { intervals, maxSimultaneous, partitions };
}

test('the overlap check finds overlapping leadership and accepts back-to-back terms', () => {
  assert.ok(
    findOverlap([
      { who: 'a', start: 0, end: 10 },
      { who: 'b', start: 9, end: 20 },
    ]),
  );
  assert.ok(
    findOverlap([
      { who: 'a', start: 0, end: 100 },
      { who: 'b', start: 10, end: 20 },
      { who: 'c', start: 30, end: 40 },
    ]),
  );
  assert.equal(
    findOverlap([
      { who: 'a', start: 0, end: 10 },
      { who: 'b', start: 10, end: 20 },
    ]),
    undefined,
  );
});

test('two electors are never leader at once under random interleavings, faults, skew and restarts', async () => {
  let terms = 0;
  let partitions = 0;
  for (let seed = 1; seed <= 30; seed++) {
    const { intervals, maxSimultaneous, partitions: p } = await simulate(seed);
    partitions += p;
    const overlap = findOverlap(intervals);
    assert.equal(overlap, undefined, `seed ${seed}: ${JSON.stringify(overlap)}`);
    assert.ok(maxSimultaneous <= 1, `seed ${seed}: ${maxSimultaneous} electors reported isLeader() at once`);
    // Progress, so the check is not vacuous: someone led for a good part of the run.
    const ledMs = intervals.reduce((sum, i) => sum + (i.end - i.start), 0);
    assert.ok(ledMs > SIMULATED_MS * 0.3, `seed ${seed}: only ${ledMs} ms of leadership in ${SIMULATED_MS} ms`);
    terms += intervals.length;
  }
  assert.ok(terms > 60, `only ${terms} terms over all seeds: the faults did not force enough hand-overs`);
  assert.ok(partitions > 0);
});
