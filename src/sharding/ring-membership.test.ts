import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
import { silentLogger } from '../core/logger.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { LEASE_TYPE, formatMicroTime, type Lease } from '../leader-election/lease-record.js';
import { RingMembership, type MembershipChange } from './ring-membership.js';
import { MEMBER_LABEL, RING_LABEL, memberLeaseName } from './sharding-options.js';

const RING = 'db';
const NAMESPACE = 'ops';
const LEASE_MS = 3_000;

function lease(member: string, holder: string, nowMs: number): Lease {
  return {
    ...LEASE_TYPE,
    metadata: {
      name: memberLeaseName(RING, member),
      namespace: NAMESPACE,
      labels: { [RING_LABEL]: RING, [MEMBER_LABEL]: member },
    },
    spec: { holderIdentity: holder, leaseDurationSeconds: 3, renewTime: formatMicroTime(nowMs) },
  };
}

async function setup(): Promise<{
  clock: FakeClock;
  client: FakeClient;
  membership: RingMembership;
  changes: MembershipChange[];
  stop: () => Promise<void>;
}> {
  const clock = new FakeClock();
  const client = new FakeClient({ clock });
  const changes: MembershipChange[] = [];
  const membership = new RingMembership({
    client,
    ring: RING,
    namespace: NAMESPACE,
    leaseDurationMs: LEASE_MS,
    clock,
    logger: silentLogger,
    onChange: (c) => changes.push(c),
  });
  const controller = new AbortController();
  const run = membership.start(controller.signal);
  await membership.waitForSync(controller.signal);
  return {
    clock,
    client,
    membership,
    changes,
    stop: async () => {
      controller.abort();
      await run;
    },
  };
}

/** The holder renews: a write that changes the Lease's resourceVersion. */
async function renew(client: FakeClient, clock: FakeClock, member: string, holder = `id-${member}`): Promise<void> {
  await client.patch(
    LEASE_TYPE,
    memberLeaseName(RING, member),
    { spec: { holderIdentity: holder, renewTime: formatMicroTime(clock.now()) } },
    { type: 'merge', namespace: NAMESPACE },
  );
  await flushMicrotasks();
}

test('a member is live while its Lease keeps changing, and dead leaseDuration after the last change seen, on the observer’s clock', async () => {
  const { clock, client, membership, changes, stop } = await setup();
  try {
    await client.create(lease('a', 'id-a', clock.now()));
    await client.create(lease('b', 'id-b', clock.now()));
    await flushMicrotasks();
    assert.deepEqual(membership.liveMembers(), ['a', 'b']);
    for (let i = 0; i < 5; i++) {
      await clock.advance(2_000);
      await renew(client, clock, 'a'); // b stops renewing
      if (i === 0) assert.deepEqual(membership.liveMembers(), ['a', 'b'], 'b is live 2 s after its last change');
    }
    assert.deepEqual(membership.liveMembers(), ['a']);
    assert.deepEqual(changes.at(-1), { live: ['a'], joined: [], left: ['b'] });
    // b's left was reported exactly once, at its expiry (3 s after creation), not at a renew of a.
    assert.equal(changes.filter((c) => c.left.includes('b')).length, 1);
  } finally {
    await stop();
  }
});

test('the renewTime written inside the Lease is never trusted: a record from "the future" still expires on our clock', async () => {
  const { clock, client, membership, stop } = await setup();
  try {
    const fromTheFuture = lease('a', 'id-a', clock.now() + 3_600_000);
    await client.create(fromTheFuture);
    await flushMicrotasks();
    assert.deepEqual(membership.liveMembers(), ['a']);
    await clock.advance(LEASE_MS + 1);
    assert.deepEqual(membership.liveMembers(), []);
    assert.equal(membership.expiry('a').expired, true);
  } finally {
    await stop();
  }
});

test('a released Lease (empty holder) is dead at once; a deleted one only leaseDuration after its last change', async () => {
  const { clock, client, membership, stop } = await setup();
  try {
    await client.create(lease('a', 'id-a', clock.now()));
    await client.create(lease('b', 'id-b', clock.now()));
    await flushMicrotasks();
    await clock.advance(1_000);
    await renew(client, clock, 'a', '');
    assert.deepEqual(membership.liveMembers(), ['b']);
    assert.equal(membership.expiry('a').expired, true);

    await client.delete(LEASE_TYPE, memberLeaseName(RING, 'b'), { namespace: NAMESPACE });
    await flushMicrotasks();
    // Deleting renews nobody: b may still work until its last renew + renewDeadline.
    const e = membership.expiry('b');
    assert.deepEqual(
      { expired: e.expired, remainingMs: e.remainingMs },
      { expired: false, remainingMs: LEASE_MS - 1_000 },
    );
    await clock.advance(LEASE_MS - 1_000);
    assert.equal(membership.expiry('b').expired, true);
  } finally {
    await stop();
  }
});

test('a member named by a label but never seen counts as dead only leaseDuration after we first looked', async () => {
  const { clock, membership, stop } = await setup();
  try {
    assert.deepEqual(membership.expiry('ghost'), { expired: false, remainingMs: LEASE_MS });
    await clock.advance(LEASE_MS - 1);
    assert.equal(membership.expiry('ghost').expired, false);
    await clock.advance(1);
    assert.equal(membership.expiry('ghost').expired, true);
  } finally {
    await stop();
  }
});

test('the confirming read sees a renewal the watch has not delivered, so a live member is never taken for dead', async () => {
  const clock = new FakeClock();
  const client = new FakeClient({ clock });
  // Never started: stands for a watch that lags behind every renewal.
  const membership = new RingMembership({
    client,
    ring: RING,
    namespace: NAMESPACE,
    leaseDurationMs: LEASE_MS,
    clock,
    logger: silentLogger,
  });
  await client.create(lease('a', 'id-a', clock.now()));
  assert.equal(membership.expiry('a').expired, false);
  await clock.advance(LEASE_MS);
  assert.equal(membership.expiry('a').expired, true, 'by the stale view alone a would look dead');
  await renew(client, clock, 'a');
  const confirmed = await membership.confirmExpired('a', new AbortController().signal);
  assert.deepEqual(confirmed, { expired: false, remainingMs: LEASE_MS });
  // Unchanged since that read: dead a full leaseDuration later, and the read confirms it.
  await clock.advance(LEASE_MS);
  assert.equal((await membership.confirmExpired('a', new AbortController().signal)).expired, true);
});

test('stale Leases: only dead ones unchanged for the given time are offered for deletion, with the resourceVersion seen', async () => {
  const { clock, client, membership, stop } = await setup();
  try {
    await client.create(lease('gone', 'id-gone', clock.now()));
    await client.create(lease('alive', 'id-alive', clock.now()));
    await flushMicrotasks();
    await renew(client, clock, 'gone', ''); // released
    for (let i = 0; i < 10; i++) {
      await clock.advance(1_000);
      await renew(client, clock, 'alive');
    }
    assert.deepEqual(membership.staleLeases(30_000), [], 'released 10 s ago: not stale yet');
    for (let i = 0; i < 20; i++) {
      await clock.advance(1_000);
      await renew(client, clock, 'alive');
    }
    const rv = (await client.get<Lease>(LEASE_TYPE, memberLeaseName(RING, 'gone'), { namespace: NAMESPACE })).metadata
      ?.resourceVersion;
    assert.deepEqual(membership.staleLeases(30_000), [
      { memberId: 'gone', name: memberLeaseName(RING, 'gone'), resourceVersion: rv },
    ]);
  } finally {
    await stop();
  }
});
