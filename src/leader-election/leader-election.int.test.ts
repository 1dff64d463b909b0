import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidOptionError } from '../core/errors.js';
import { KubeClient } from '../client/kube-client.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { LeaderElector } from './leader-elector.js';
import { JITTER_FACTOR } from './leader-elector-options.js';
import type { Lease } from './lease-record.js';
import { findOverlap } from './testing/intervals.js';
import {
  EXIT_BAD_OPTIONS,
  EXIT_LEADERSHIP_LOST,
  ReplicaGroup,
  type ReplicaGroupOptions,
  type ReplicaRecord,
} from './testing/replica-group.js';

// Short timings keep the suite quick; the bench measures the defaults.
const TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 } as const;
/** Slack for process scheduling on a loaded 2-core machine (other suites run alongside). */
const MARGIN_MS = 1_000;
/** How late a timer may fire and a log line land on a loaded machine. */
const TIMER_SLACK_MS = 400;
/** Timestamps in records and in the Lease are whole milliseconds. */
const CLOCK_ROUNDING_MS = 2;
const STARTUP_MS = 30_000;
const NS = 'default';

let env: TestEnv;
let dir: string;
let groups: ReplicaGroup[] = [];

before(async () => {
  env = await TestEnv.start();
  dir = await mkdtemp(join(tmpdir(), 'leader-election-int-'));
});

afterEach(async () => {
  for (const g of groups) await g.stopAll();
  groups = [];
});

after(async () => {
  for (const g of groups) await g.stopAll();
  await env?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function group(name: string, options: Partial<ReplicaGroupOptions> = {}): ReplicaGroup {
  const g = new ReplicaGroup({
    kubeconfigPath: env.kubeconfigPath,
    namespace: NS,
    name,
    dir,
    timings: TIMINGS,
    ...options,
  });
  groups.push(g);
  return g;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function readLease(name: string): Promise<{ status: number; body: Lease }> {
  return env.request<Lease>('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${name}`);
}

/** Starts three replicas and returns the first leader once both standbys have seen it. */
async function threeReplicas(g: ReplicaGroup): Promise<ReplicaRecord> {
  for (const id of ['r0', 'r1', 'r2']) g.spawn(id);
  const leader = await g.waitForLeader(STARTUP_MS);
  await g.waitFor(
    'both standbys to see the leader',
    (rs) => {
      const seen = new Set(
        rs.filter((r) => r.ev === 'leader-seen' && r.leader === leader.id && r.id !== leader.id).map((r) => r.id),
      );
      return seen.size === 2 ? true : undefined;
    },
    STARTUP_MS,
  );
  return leader;
}

function assertNoOverlap(g: ReplicaGroup): void {
  const overlap = findOverlap(g.intervals());
  assert.equal(overlap, undefined, `leader-only work overlapped: ${JSON.stringify(overlap)}\n${g.describe()}`);
}

test('three replicas: exactly one does leader-only work at any moment, through a SIGTERM and a kill -9 hand-over', async () => {
  const g = group('three-replicas');
  const first = await threeReplicas(g);
  await sleep(TIMINGS.leaseDurationMs + 1_000); // several renew rounds with standbys watching
  const steady = g.records().filter((r) => r.ev === 'work');
  assert.ok(steady.length > 20, `${steady.length} work records\n${g.describe()}`);
  assert.deepEqual([...new Set(steady.map((r) => r.id))], [first.id], 'only the leader worked');
  assert.equal(g.records().filter((r) => r.ev === 'start').length, 1, 'no churn while the leader renews');

  const termAt = g.signal(first.id, 'SIGTERM');
  const second = await g.waitForLeader(5_000, termAt, first.id);
  g.spawn('r3');
  await sleep(1_000);
  const killAt = g.signal(second.id, 'SIGKILL');
  const third = await g.waitForLeader(TIMINGS.leaseDurationMs + 3_000, killAt, second.id);
  await sleep(1_000);

  assertNoOverlap(g);
  assert.equal(new Set(g.intervals().map((i) => i.who)).size, 3);
  const lastSecond = g
    .records()
    .filter((r) => r.ev === 'work')
    .filter((r) => r.t > third.t + 200);
  assert.deepEqual([...new Set(lastSecond.map((r) => r.id))], [third.id]);
});

test('kill -9 of the leader: a standby leads within leaseDuration + retryPeriod (+ margin), never before the lease could expire', async (t) => {
  const g = group('kill-leader');
  const leader = await threeReplicas(g);
  await sleep(1_300);
  const killAt = g.signal(leader.id, 'SIGKILL');
  // The dead leader's last renew, stamped (on this host's clock) just before it was sent.
  const lastRenewAt = Date.parse((await readLease('kill-leader')).body.spec!.renewTime!);
  const next = await g.waitForLeader(TIMINGS.leaseDurationMs + 5_000, killAt, leader.id);
  const failoverMs = next.t - killAt;
  const bound = TIMINGS.leaseDurationMs + JITTER_FACTOR * TIMINGS.retryPeriodMs + MARGIN_MS;
  t.diagnostic(`kill -9 failover: ${failoverMs} ms (bound ${bound} ms)`);
  assert.ok(failoverMs <= bound, `failover took ${failoverMs} ms (bound ${bound})\n${g.describe()}`);
  // A standby saw that renew only after it was sent, and must wait a full lease from seeing it.
  assert.ok(
    next.t - lastRenewAt >= TIMINGS.leaseDurationMs - CLOCK_ROUNDING_MS,
    `took over ${next.t - lastRenewAt} ms after the last renew`,
  );
  assert.equal((await g.replica(leader.id).exited).signal, 'SIGKILL');
  const lease = await readLease('kill-leader');
  assert.equal(lease.body.spec?.holderIdentity, next.id);
  assert.equal(lease.body.spec?.leaseTransitions, 1);
  assertNoOverlap(g);
});

test('SIGTERM of the leader releases the Lease: a standby leads within about one retry period', async (t) => {
  const g = group('term-leader');
  const leader = await threeReplicas(g);
  await sleep(1_000);
  const termAt = g.signal(leader.id, 'SIGTERM');
  const next = await g.waitForLeader(5_000, termAt, leader.id);
  const failoverMs = next.t - termAt;
  const bound = JITTER_FACTOR * TIMINGS.retryPeriodMs + MARGIN_MS;
  t.diagnostic(`SIGTERM failover: ${failoverMs} ms (bound ${bound} ms)`);
  assert.ok(failoverMs <= bound, `failover took ${failoverMs} ms (bound ${bound})\n${g.describe()}`);
  assert.equal((await g.replica(leader.id).exited).code, 0, 'a clean shutdown exits 0');
  const stop = g.records().find((r) => r.id === leader.id && r.ev === 'stop')!;
  assert.ok(stop.t <= next.t, 'the old leader stopped its work before the new one started');
  assert.equal((await readLease('term-leader')).body.spec?.holderIdentity, next.id);
  assertNoOverlap(g);
});

test('bad options are rejected at construction with a message naming the option, before any API call', async () => {
  const client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
  try {
    assert.throws(
      () =>
        new LeaderElector({
          client,
          name: 'bad-options',
          namespace: NS,
          leaseDurationMs: 3_000,
          renewDeadlineMs: 3_000,
        }),
      (e: unknown) =>
        e instanceof InvalidOptionError && e.option === 'renewDeadlineMs' && /renewDeadlineMs/.test(e.message),
    );
  } finally {
    await client.close();
  }
  const g = group('bad-options', { timings: { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 } });
  const r = g.spawn('bad');
  assert.equal((await r.exited).code, EXIT_BAD_OPTIONS);
  assert.match(
    g.describe(),
    /invalid option retryPeriodMs: 1\.2 × retryPeriodMs \(2000\) must be less than renewDeadlineMs \(2000\)/,
  );
  assert.equal((await readLease('bad-options')).status, 404, 'never touched the Lease');
});

test('kube-apiserver paused longer than renewDeadline: the leader stops its work before its deadline passes; after resume exactly one leader continues', async (t) => {
  const g = group('apiserver-paused');
  const leader = await threeReplicas(g);
  await sleep(1_000);
  const pausedAt = Date.now();
  env.pause('kube-apiserver');
  g.note('test', 'paused', pausedAt);
  let resumedAt: number;
  try {
    await sleep(TIMINGS.leaseDurationMs + 1_500);
  } finally {
    env.resume('kube-apiserver');
    resumedAt = Date.now();
    g.note('test', 'resumed', resumedAt);
  }
  // Its last successful renew started before the pause, so its deadline fell within renewDeadline of it.
  const stop = g.records().find((r) => r.id === leader.id && r.ev === 'stop');
  assert.ok(stop, `the leader did not stop while the API server was paused\n${g.describe()}`);
  t.diagnostic(`leader stopped ${stop.t - pausedAt} ms after the pause (renewDeadline ${TIMINGS.renewDeadlineMs} ms)`);
  assert.ok(
    stop.t <= pausedAt + TIMINGS.renewDeadlineMs + TIMER_SLACK_MS,
    `stopped ${stop.t - pausedAt} ms after the pause`,
  );
  assert.ok(
    !g.records().some((r) => r.ev === 'start' && r.t > pausedAt && r.t < resumedAt),
    'nobody could acquire while the API server was frozen',
  );
  assert.equal((await g.replica(leader.id).exited).code, EXIT_LEADERSHIP_LOST, 'the old leader exits non-zero');

  const next = await g.waitForLeader(TIMINGS.leaseDurationMs + 10_000, resumedAt);
  await sleep(TIMINGS.leaseDurationMs);
  const now = Date.now();
  const open = g.intervals(now).filter((i) => i.end === now);
  assert.deepEqual(
    open.map((i) => i.who),
    [next.id],
    `exactly one leader after resume\n${g.describe()}`,
  );
  assertNoOverlap(g);
});
