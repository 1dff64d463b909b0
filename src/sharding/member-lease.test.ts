import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/api-error.js';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import { silentLogger } from '../core/logger.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { LEASE_TYPE, holderOf, type Lease } from '../leader-election/lease-record.js';
import { MemberLease } from './member-lease.js';
import { RingMembership } from './ring-membership.js';
import { seededRandom } from '../core/seeded-random.js';
import { MEMBER_LABEL, RING_LABEL, resolveShardingOptions } from './sharding-options.js';

const TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };

function setup() {
  const clock = new FakeClock();
  const client = new FakeClient({ clock });
  const sharding = resolveShardingOptions({
    ring: 'db',
    namespace: 'ops',
    identity: 'replica-1',
    mode: 'label',
    ...TIMINGS,
  });
  const member = new MemberLease({ client, sharding, clock, logger: silentLogger });
  return { clock, client, sharding, member };
}

test('the membership Lease is created labelled with the ring and member id, held by the identity, and released after the work stopped', async () => {
  const { clock, client, sharding, member } = setup();
  const stop = new AbortController();
  let workStopped = false;
  let releasedWhileWorking = false;
  const run = member.run(stop.signal, async (signal) => {
    await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
    // Still working: the Lease must still be ours.
    const lease = await client.get<Lease>(LEASE_TYPE, member.name, { namespace: 'ops' });
    releasedWhileWorking = holderOf(lease) === '';
    workStopped = true;
  });
  await clock.advance(0);
  const lease = await client.get<Lease>(LEASE_TYPE, member.name, { namespace: 'ops' });
  assert.equal(member.name, `db-${sharding.memberId}`);
  assert.deepEqual(lease.metadata?.labels, { [RING_LABEL]: 'db', [MEMBER_LABEL]: sharding.memberId });
  assert.equal(holderOf(lease), 'replica-1');
  assert.equal(member.isHeld(), true);
  stop.abort();
  await run;
  assert.equal(workStopped, true);
  assert.equal(releasedWhileWorking, false);
  assert.equal(
    holderOf(await client.get<Lease>(LEASE_TYPE, member.name, { namespace: 'ops' })),
    '',
    'released once the work stopped',
  );
});

test('fencing order: a member that cannot renew stops its work before any observer can see its Lease expire', async () => {
  const { clock, client, member } = setup();
  const observerStop = new AbortController();
  let leftAtMs: number | undefined;
  const observer = new RingMembership({
    client,
    ring: 'db',
    namespace: 'ops',
    leaseDurationMs: TIMINGS.leaseDurationMs,
    clock,
    logger: silentLogger,
    onChange: (c) => {
      if (c.left.length > 0) leftAtMs = clock.monotonicNow();
    },
  });
  const observing = observer.start(observerStop.signal);
  let abortedAtMs: number | undefined;
  const stop = new AbortController();
  const run = member.run(stop.signal, (signal) => {
    signal.addEventListener('abort', () => (abortedAtMs = clock.monotonicNow()), { once: true });
  });
  const outcome = run.then(
    () => 'resolved',
    (err: { code?: string }) => err.code,
  );
  await clock.advance(5_000); // healthy renewals for a while
  assert.deepEqual(observer.liveMembers().length, 1);
  assert.equal(abortedAtMs, undefined);
  // From now on every renewal fails (a partition between the member and the API server).
  const cutAtMs = clock.monotonicNow();
  client.intercept((req) =>
    req.verb === 'update' && req.kind === 'Lease' ? new ApiError({ status: 503, message: 'partitioned' }) : undefined,
  );
  for (let i = 0; i < 100 && leftAtMs === undefined; i++) await clock.advance(100);
  await flushMicrotasks();
  assert.ok(
    abortedAtMs !== undefined && leftAtMs !== undefined,
    `aborted at ${abortedAtMs}, observed dead at ${leftAtMs}`,
  );
  assert.ok(abortedAtMs < leftAtMs, 'the work stopped before the Lease could be seen as expired');
  // The margin is at least leaseDuration - renewDeadline, less the renew period the observer's last sighting may lag.
  assert.ok(
    leftAtMs - abortedAtMs >= TIMINGS.leaseDurationMs - TIMINGS.renewDeadlineMs - TIMINGS.retryPeriodMs,
    `margin ${leftAtMs - abortedAtMs} ms`,
  );
  assert.ok(
    abortedAtMs - cutAtMs <= TIMINGS.renewDeadlineMs,
    `stopped ${abortedAtMs - cutAtMs} ms after the last renew could succeed`,
  );
  assert.equal(await outcome, 'ERR_LEADERSHIP_LOST');
  stop.abort();
  observerStop.abort();
  await observing;
});

test('a seeded random source gives a member the same id on every run; without one every resolution is a new incarnation', () => {
  const options = { ring: 'db', namespace: 'ops', identity: 'replica-1', mode: 'label' as const, ...TIMINGS };
  const seeded = (seed: number): string => resolveShardingOptions(options, seededRandom(seed)).memberId;
  assert.equal(seeded(7), seeded(7));
  assert.notEqual(seeded(7), seeded(8));
  assert.notEqual(resolveShardingOptions(options).memberId, resolveShardingOptions(options).memberId);
});

test('the membership elector draws its retry jitter from the random source it is given', async () => {
  const clock = new FakeClock();
  const client = new FakeClient({ clock });
  // Every read of the Lease fails, so the elector keeps retrying after a jittered wait.
  client.intercept((req) => (req.verb === 'get' ? new ApiError({ status: 503, message: 'unavailable' }) : undefined));
  let draws = 0;
  const random = seededRandom(1);
  const member = new MemberLease({
    client,
    sharding: resolveShardingOptions({
      ring: 'db',
      namespace: 'ops',
      identity: 'replica-1',
      mode: 'label',
      ...TIMINGS,
    }),
    clock,
    logger: silentLogger,
    random: () => {
      draws++;
      return random();
    },
  });
  const stop = new AbortController();
  const run = member.run(stop.signal, () => undefined);
  await clock.advance(3 * TIMINGS.retryPeriodMs);
  stop.abort();
  await clock.advance(TIMINGS.leaseDurationMs);
  await run;
  assert.ok(draws >= 2, `jitter drawn ${draws} times from the given source`);
});
