import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { ApiError } from '../client/api-error.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { LeaderElector } from './leader-elector.js';
import { LeadershipLostError } from './leadership-lost-error.js';
import { LEASE_TYPE, formatMicroTime, type Lease } from './lease-record.js';
import { FakeLeaseApi } from './testing/fake-lease-api.js';
import { TEST_LEASE, TEST_NAMESPACE, startCandidate } from './testing/candidate.js';

function setup(): { clock: FakeClock; api: FakeLeaseApi } {
  const clock = new FakeClock();
  return { clock, api: new FakeLeaseApi({ clock }) };
}

/** A Lease held by `holder` whose own timestamps claim it was last renewed an hour ago. */
function heldByOther(clock: FakeClock, holder = 'old-leader', extra: Partial<NonNullable<Lease['spec']>> = {}): Lease {
  const anHourAgo = formatMicroTime(clock.now() - 3_600_000);
  return {
    ...LEASE_TYPE,
    metadata: { name: TEST_LEASE, namespace: TEST_NAMESPACE },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      acquireTime: anHourAgo,
      renewTime: anHourAgo,
      leaseTransitions: 3,
      ...extra,
    },
  };
}

const stored = (api: FakeLeaseApi): Lease => api.read(TEST_NAMESPACE, TEST_LEASE)!;

test('a candidate creates the absent Lease and leads at once, with a well-formed record', async () => {
  const { clock, api } = setup();
  const a = startCandidate(clock, api, 'a');
  await clock.advance(0);
  assert.equal(a.elector.isLeader(), true);
  assert.equal(a.terms.length, 1);
  const spec = stored(api).spec!;
  assert.equal(spec.holderIdentity, 'a');
  assert.equal(spec.leaseDurationSeconds, 15);
  assert.equal(spec.leaseTransitions, 0);
  assert.match(spec.renewTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.equal(api.writes[0]!.verb, 'create');
  assert.deepEqual(a.leadersSeen, ['a']);
  assert.equal(a.elector.getLeader(), 'a');
  a.stop();
  await a.done;
});

test('the leader renews every retry period with the resourceVersion it last wrote', async () => {
  const { clock, api } = setup();
  const a = startCandidate(clock, api, 'a');
  await clock.advance(10_001);
  const renews = api.writes.filter((w) => w.verb === 'update');
  assert.equal(renews.length, 5);
  assert.deepEqual(
    renews.map((w) => w.atMs),
    [2_000, 4_000, 6_000, 8_000, 10_000],
  );
  assert.equal(a.elector.isLeader(), true);
  a.stop();
  await a.done;
});

test("a follower does not take over before leaseDuration on its own clock, even when the holder's timestamps are an hour old", async () => {
  const { clock, api } = setup();
  api.put(heldByOther(clock));
  const b = startCandidate(clock, api, 'b');
  await clock.advance(14_999);
  assert.equal(b.elector.isLeader(), false, 'clock skew must not shorten the lease');
  assert.equal(b.terms.length, 0);
  assert.equal(api.writes.length, 1, 'only the seeded record: no write by b');
  assert.equal(b.elector.getLeader(), 'old-leader');
  await clock.advance(1);
  assert.equal(b.elector.isLeader(), true, 'takes over right when the lease expires on its clock');
  assert.equal(b.terms[0]!.startMs, 15_000);
  assert.equal(stored(api).spec?.holderIdentity, 'b');
  assert.equal(stored(api).spec?.leaseTransitions, 4);
  assert.deepEqual(b.leadersSeen, ['old-leader', 'b']);
  b.stop();
  await b.done;
});

test('a follower that keeps seeing the record change never takes over, and does once it stops changing', async () => {
  const { clock, api } = setup();
  api.put(heldByOther(clock));
  const b = startCandidate(clock, api, 'b');
  for (let i = 0; i < 10; i++) {
    await clock.advance(5_000);
    // The holder renews (a new resourceVersion) with a renewTime far in the past: only the change counts.
    api.put(
      { ...stored(api), spec: { ...stored(api).spec, renewTime: formatMicroTime(clock.now() - 86_400_000) } },
      'old-leader',
    );
  }
  assert.equal(b.terms.length, 0);
  const lastChange = clock.monotonicNow();
  await clock.advance(15_000 + 2_400);
  assert.equal(b.elector.isLeader(), true);
  const took = b.terms[0]!.startMs - lastChange;
  assert.ok(took >= 15_000 && took <= 15_000 + 2_400, `took over ${took} ms after the last change`);
  b.stop();
  await b.done;
});

test('a leader whose renews hang stops leading at renewDeadline after its last successful renew, before any follower can take over', async () => {
  const { clock, api } = setup();
  api.faults = (r) =>
    r.caller === 'a' && r.verb === 'update' && clock.monotonicNow() >= 5_000 ? { hang: true } : undefined;
  const a = startCandidate(clock, api, 'a');
  await clock.advance(100);
  const b = startCandidate(clock, api, 'b');
  await clock.advance(30_000);
  // a renewed at 2 s and 4 s; the renew sent at 6 s hangs.
  const lastRenew = api.writes.filter((w) => w.caller === 'a').at(-1)!.atMs;
  assert.equal(lastRenew, 4_000);
  const term = a.terms[0]!;
  assert.equal(term.endMs, lastRenew + 10_000, 'leader signal aborted exactly at the renew deadline');
  assert.equal(term.reason, 'renew-deadline-exceeded');
  assert.ok(term.signal.reason instanceof LeadershipLostError);
  assert.ok(a.outcome instanceof LeadershipLostError, 'start() rejects: the hung renew was cut off at the deadline');
  assert.equal(api.abortedRequests, 1, 'the one hung renew was abandoned, at the deadline');
  assert.equal(a.outcome.reason, 'renew-deadline-exceeded');
  assert.equal(a.elector.isLeader(), false);
  const bStart = b.terms[0]!.startMs;
  assert.ok(bStart >= lastRenew + 15_000, `b took over at ${bStart}, leaseDuration after a's last renew`);
  assert.ok(term.endMs! < bStart, 'a stopped before b started');
  b.stop();
  await b.done;
});

test('transient renew errors within the deadline do not end leadership; errors until the deadline do', async () => {
  const { clock, api } = setup();
  const fail500 = { error: new ApiError({ status: 500, message: 'etcd leader changed' }) };
  api.faults = (r) =>
    r.verb === 'update' && clock.monotonicNow() >= 5_000 && clock.monotonicNow() < 9_000 ? fail500 : undefined;
  const a = startCandidate(clock, api, 'a');
  await clock.advance(20_000);
  assert.equal(a.elector.isLeader(), true, 'renews at 6 s and 8 s failed, 10 s succeeded');
  assert.equal(a.terms[0]!.endMs, undefined);

  api.faults = () => fail500;
  const failingFrom = clock.monotonicNow();
  await clock.advance(12_000);
  const lastRenew = api.writes.at(-1)!.atMs;
  assert.ok(lastRenew <= failingFrom);
  assert.equal(a.terms[0]!.endMs, lastRenew + 10_000);
  assert.ok(a.outcome instanceof LeadershipLostError);
});

test('a 409 on renew when the Lease now names another holder ends leadership at once, without overwriting it', async () => {
  const { clock, api } = setup();
  const registry = createMetricsRegistry();
  const a = startCandidate(clock, api, 'a', { registry });
  await clock.advance(3_000);
  const usurper = api.put({ ...stored(api), spec: { ...stored(api).spec, holderIdentity: 'x' } });
  await clock.advance(1_000);
  assert.equal(a.terms[0]!.endMs, 4_000);
  assert.equal(a.terms[0]!.reason, 'lease-lost');
  assert.deepEqual(stored(api), usurper, "the other holder's record is untouched");
  assert.equal(api.writes.at(-1)!.caller, 'someone-else');
  assert.ok(a.outcome instanceof LeadershipLostError && a.outcome.reason === 'lease-lost');
  assert.deepEqual(a.leadersSeen, ['a', 'x']);
});

test('a Lease deleted under the leader ends leadership at the next renew', async () => {
  const { clock, api } = setup();
  const a = startCandidate(clock, api, 'a');
  await clock.advance(3_000);
  api.remove(TEST_NAMESPACE, TEST_LEASE);
  await clock.advance(1_000);
  assert.equal(a.terms[0]!.endMs, 4_000);
  assert.equal(a.terms[0]!.reason, 'lease-lost');
  assert.equal(api.read(TEST_NAMESPACE, TEST_LEASE), undefined, 'not re-created by the old leader');
  assert.ok(a.outcome instanceof LeadershipLostError);
});

test('isLeader() turns false at the deadline even when the fencing timer runs late (a blocked event loop), and a late renew does not revive it', async () => {
  const { clock, api } = setup();
  // Every timer of this elector fires 3 s late.
  const lateClock = {
    now: () => clock.now(),
    monotonicNow: () => clock.monotonicNow(),
    setTimer: (ms: number, fn: () => void) => clock.setTimer(ms + 3_000, fn),
  };
  // The first renew is sent at 5 s (its 2 s wait ran 3 s late) and answered at 10.5 s.
  api.faults = (r) => (r.verb === 'update' ? { responseDelayMs: 5_500 } : undefined);
  const a = startCandidate(clock, api, 'a', { clock: lateClock });
  await clock.advance(9_999);
  assert.equal(a.elector.isLeader(), true);
  await clock.advance(1);
  assert.equal(a.elector.isLeader(), false, 'past created-at + renewDeadline');
  assert.equal(a.terms[0]!.endMs, undefined, 'the fencing timer has not run yet');
  await clock.advance(500);
  assert.equal(
    a.terms[0]!.endMs,
    10_500,
    'the answer that came after the deadline ended the term instead of extending it',
  );
  assert.equal(a.terms[0]!.reason, 'renew-deadline-exceeded');
  assert.equal(a.elector.isLeader(), false);
});

test('a 409 on renew when the Lease is still ours takes the slow path (get + update), keeps leading, and is counted', async () => {
  const { clock, api } = setup();
  const registry = createMetricsRegistry();
  const a = startCandidate(clock, api, 'a', { registry });
  await clock.advance(3_000);
  api.put({ ...stored(api), metadata: { ...stored(api).metadata, labels: { team: 'db' } } });
  await clock.advance(1_000);
  assert.equal(a.elector.isLeader(), true);
  assert.equal(api.requests.get('a:get'), 2, 'the read before creating it, and one re-read');
  assert.equal(api.writes.at(-1)!.caller, 'a');
  assert.deepEqual(stored(api).metadata?.labels, { team: 'db' }, "the other writer's change is kept");
  assert.match(
    await registry.getSingleMetricAsString('leader_election_slowpath_total'),
    /^leader_election_slowpath_total\{name="my-operator"\} 1$/m,
  );
  a.stop();
  await a.done;
});

test('a 409 on acquire re-reads instead of overwriting, and the lease clock starts over', async () => {
  const { clock, api } = setup();
  api.put(heldByOther(clock));
  let injected = false;
  api.faults = (r) => {
    if (r.caller !== 'b' || r.verb !== 'update' || injected) return undefined;
    injected = true;
    // The old holder renews between b's read and b's write.
    return {
      beforeHandle: () =>
        api.put(
          { ...stored(api), spec: { ...stored(api).spec, renewTime: formatMicroTime(clock.now()) } },
          'old-leader',
        ),
    };
  };
  const b = startCandidate(clock, api, 'b');
  await clock.advance(15_000);
  assert.equal(injected, true);
  assert.equal(b.elector.isLeader(), false);
  assert.equal(stored(api).spec?.holderIdentity, 'old-leader');
  assert.equal(
    api.requests.get('b:update'),
    1,
    'no second write: the conflict was re-read, and the re-read showed a live holder',
  );
  await clock.advance(14_999);
  assert.equal(b.elector.isLeader(), false, 'waits a full leaseDuration from the re-read');
  await clock.advance(1);
  assert.equal(b.elector.isLeader(), true);
  b.stop();
  await b.done;
});

test('AlreadyExists on create means someone else created it: re-read and follow', async () => {
  const { clock, api } = setup();
  api.faults = (r) => (r.verb === 'create' ? { beforeHandle: () => api.put(heldByOther(clock, 'x')) } : undefined);
  const b = startCandidate(clock, api, 'b');
  await clock.advance(5_000);
  assert.equal(b.elector.isLeader(), false);
  assert.equal(stored(api).spec?.holderIdentity, 'x');
  assert.deepEqual(b.leadersSeen, ['x']);
  b.stop();
  await b.done;
  assert.equal(b.outcome, 'resolved');
});

test('an empty holder (a released Lease) is taken at once', async () => {
  const { clock, api } = setup();
  api.put(heldByOther(clock, '', { leaseDurationSeconds: 1 }));
  const b = startCandidate(clock, api, 'b');
  await clock.advance(0);
  assert.equal(b.elector.isLeader(), true);
  assert.equal(stored(api).spec?.leaseTransitions, 4);
  b.stop();
  await b.done;
});

test('shutdown while leading releases the Lease (empty holder, 1 s) and a standby takes over within a retry period', async () => {
  const { clock, api } = setup();
  const a = startCandidate(clock, api, 'a');
  await clock.advance(500);
  const b = startCandidate(clock, api, 'b');
  await clock.advance(4_500);
  a.stop();
  const stopAt = clock.monotonicNow();
  await clock.advance(0);
  assert.equal(a.outcome, 'resolved');
  assert.equal(a.terms[0]!.reason, 'shutdown');
  assert.equal(a.terms[0]!.endMs, stopAt);
  const release = api.writes.find((w) => w.caller === 'a' && w.holder === '')!;
  assert.equal(release.verb, 'update', 'released with an update carrying the resourceVersion');
  assert.equal(release.lease.spec?.leaseDurationSeconds, 1);
  await clock.advance(2_400);
  assert.equal(b.elector.isLeader(), true);
  assert.ok(b.terms[0]!.startMs - stopAt <= 2_400);
  b.stop();
  await b.done;
});

test('on shutdown the Lease is released only after leader-only work stopped, and kept renewed meanwhile', async () => {
  const { clock, api } = setup();
  const a = startCandidate(clock, api, 'a', {
    // Work that takes 3 s to wind down after its signal aborts.
    onStartedLeading: (signal) =>
      new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => clock.setTimer(3_000, resolve), { once: true }),
      ),
  });
  await clock.advance(5_000);
  a.stop();
  await clock.advance(2_999);
  assert.equal(a.outcome, 'running');
  assert.equal(stored(api).spec?.holderIdentity, 'a', 'not released while work runs');
  assert.ok(
    api.writes.some((w) => w.atMs > 5_000 && w.atMs < 7_999 && w.holder === 'a'),
    'renewed while stopping',
  );
  await clock.advance(1);
  assert.equal(a.outcome, 'resolved');
  assert.equal(stored(api).spec?.holderIdentity, '');
});

test('on shutdown, work that does not stop within workStopTimeoutMs leaves the Lease to expire instead of releasing it', async () => {
  const { clock, api } = setup();
  const log = recordingLogger();
  const a = startCandidate(clock, api, 'a', { logger: log, onStartedLeading: () => new Promise<void>(() => {}) });
  await clock.advance(1_000);
  a.stop();
  await clock.advance(5_000);
  assert.equal(a.outcome, 'resolved');
  assert.equal(stored(api).spec?.holderIdentity, 'a');
  assert.ok(log.entries.some((e) => e.level === 'warn' && /not releasing the lease/.test(e.msg ?? '')));
});

test('with reenterCandidacy a leader that lost the Lease follows again and can lead again; start() resolves on abort', async () => {
  const { clock, api } = setup();
  const a = startCandidate(clock, api, 'a', { reenterCandidacy: true });
  await clock.advance(3_000);
  api.pause();
  await clock.advance(12_000);
  assert.equal(a.terms[0]!.endMs, 12_000, 'lost at the deadline of the renew written at 2 s');
  assert.equal(a.outcome, 'running');
  api.resume();
  // The renew sent at 4 s was applied on resume, after a gave up on it: a record a did not see itself
  // write, so a waits it out like anyone else's.
  await clock.advance(14_000);
  assert.equal(a.terms.length, 1);
  await clock.advance(2_000);
  assert.equal(a.terms.length, 2);
  assert.equal(a.elector.isLeader(), true);
  a.stop();
  await clock.advance(0);
  assert.equal(a.outcome, 'resolved');
});

test('a record naming our identity that we did not write (a predecessor with the same name) is waited out like any other', async () => {
  const { clock, api } = setup();
  api.put(heldByOther(clock, 'pod-0'));
  const b = startCandidate(clock, api, 'pod-0');
  await clock.advance(14_999);
  assert.equal(b.elector.isLeader(), false, 'the predecessor may still be running its term');
  await clock.advance(1);
  assert.equal(b.elector.isLeader(), true);
  assert.equal(stored(api).spec?.leaseTransitions, 3, 'same holder name: no transition');
  b.stop();
  await b.done;
});

test('leader_election_master_status is 1 while leading and 0 otherwise', async () => {
  const { clock, api } = setup();
  const registry = createMetricsRegistry();
  startCandidate(clock, api, 'a', { registry });
  await clock.advance(0);
  assert.match(
    await registry.getSingleMetricAsString('leader_election_master_status'),
    /^leader_election_master_status\{name="my-operator"\} 1$/m,
  );
  const other = createMetricsRegistry();
  const b = startCandidate(clock, api, 'b', { registry: other });
  await clock.advance(0);
  assert.match(
    await other.getSingleMetricAsString('leader_election_master_status'),
    /^leader_election_master_status\{name="my-operator"\} 0$/m,
  );
  api.pause();
  await clock.advance(10_000);
  assert.match(
    await registry.getSingleMetricAsString('leader_election_master_status'),
    /^leader_election_master_status\{name="my-operator"\} 0$/m,
  );
  b.stop();
  api.resume();
  await b.done;
});

test('every transition is logged with the lease and identity', async () => {
  const { clock, api } = setup();
  const log = recordingLogger();
  api.put(heldByOther(clock));
  const b = startCandidate(clock, api, 'b', { logger: log });
  await clock.advance(15_000);
  b.stop();
  await clock.advance(0);
  const msgs = log.entries.map((e) => e.msg);
  for (const m of [
    'attempting to acquire the leader lease',
    'new leader observed',
    'lease expired: taking it over',
    'became leader',
    'stopped leading',
    'released the leader lease',
  ]) {
    assert.ok(msgs.includes(m), `missing "${m}" in ${JSON.stringify(msgs)}`);
  }
  assert.ok(log.entries.every((e) => e.bindings.lease === 'ops/my-operator' && e.bindings.identity === 'b'));
});

test('an already-aborted signal resolves start() without a request; a second start() is refused', async () => {
  const { clock, api } = setup();
  const e = new LeaderElector({ client: api.client('a'), name: TEST_LEASE, namespace: TEST_NAMESPACE, clock });
  await e.start(AbortSignal.abort());
  assert.equal(api.requests.size, 0);
  await assert.rejects(e.start(new AbortController().signal), /already started/);
});

test('hooks that throw do not stop the election', async () => {
  const { clock, api } = setup();
  const a = startCandidate(clock, api, 'a', {
    onNewLeader: () => {
      throw new Error('boom');
    },
    onStartedLeading: () => Promise.reject(new Error('work failed')),
  });
  await clock.advance(5_000);
  assert.equal(a.elector.isLeader(), true);
  a.stop();
  await a.done;
  assert.equal(a.outcome, 'resolved');
});

test("run() passes the manager's leader-only hook the same leader signal", async () => {
  const { clock, api } = setup();
  const e = new LeaderElector({ client: api.client('a'), name: TEST_LEASE, namespace: TEST_NAMESPACE, clock });
  const ac = new AbortController();
  let signal: AbortSignal | undefined;
  const done = e.run(ac.signal, (s) => void (signal = s));
  await clock.advance(0);
  assert.equal(signal?.aborted, false);
  ac.abort();
  await done;
  assert.equal(signal?.aborted, true);
});
