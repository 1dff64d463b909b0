/**
 * The DatabaseFleet reconciler over FakeClients: one host, member clusters as ClusterViews, a
 * FakeClock. Each member's Database operator is played by `settle` (observedGeneration caught up,
 * Ready) and `degrade` (phase Degraded), as its reconciler would write them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TerminalError,
  isNotFound,
  patchStatus,
  type ClusterView,
  type EventType,
  type KubeObject,
  type Result,
} from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import {
  FakeClient,
  conflictFor,
  internalErrorFor,
  isWrite,
  type FakeRequest,
} from 'operator-runtime/testing/fake-client';
import { FakeClock, recordingLogger } from 'operator-runtime/testing';
import { DATABASE, type Database } from './database.js';
import { DATABASE_FLEET, type DatabaseFleet, type DatabaseFleetSpec } from './database-fleet.js';
import {
  DEFAULT_CONSISTENCY_CHECK_MS,
  DEFAULT_ROLLOUT_POLL_MS,
  DatabaseFleetReconciler,
} from './database-fleet-reconciler.js';

const NS = 'database-operator-system';
const FLEET = 'postgres-fleet';

interface Member extends ClusterView {
  readonly fake: FakeClient;
  labels: Record<string, string>;
  synced: boolean;
}

interface Recorded {
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

class Bed {
  readonly clock = new FakeClock(Date.UTC(2026, 11, 2, 12));
  readonly host = new FakeClient({ clock: this.clock, crds: [customResourceDefinition(DATABASE_FLEET)] });
  readonly members: Member[] = [];
  readonly events: Recorded[] = [];
  readonly reconciler: DatabaseFleetReconciler;

  constructor(names: readonly string[], labels: Record<string, string> = { env: 'prod' }) {
    for (const name of names) this.addMember(name, labels);
    this.reconciler = new DatabaseFleetReconciler({
      client: this.host,
      fleet: { clusters: () => this.members },
      recorder: {
        event: (obj: KubeObject, type: EventType, reason: string, message: string) => {
          assert.equal(obj.kind, 'DatabaseFleet');
          this.events.push({ type, reason, message });
        },
      },
      clock: this.clock,
    });
  }

  addMember(name: string, labels: Record<string, string>, databases = ['orders', 'users']): Member {
    const fake = new FakeClient({
      clock: this.clock,
      crds: [customResourceDefinition(DATABASE)],
      objects: databases.map((db) => ({
        apiVersion: 'example.com/v1',
        kind: 'Database',
        metadata: { name: db, namespace: 'shop', labels: { tier: db === 'users' ? 'gold' : 'silver' } },
        spec: { engine: 'postgres', version: '15', replicas: 1, storage: '1Gi' },
      })),
    });
    const member: Member = { name, labels, fake, client: fake, apiClient: fake, synced: true };
    this.members.push(member);
    return member;
  }

  member(name: string): Member {
    return this.members.find((m) => m.name === name)!;
  }

  async createFleet(spec: DatabaseFleetSpec): Promise<void> {
    await this.host.create({
      apiVersion: 'example.com/v1',
      kind: 'DatabaseFleet',
      metadata: { name: FLEET, namespace: NS },
      spec,
    });
  }

  async fleet(): Promise<DatabaseFleet> {
    return this.host.get(DATABASE_FLEET, FLEET, { namespace: NS });
  }

  async reconcile(): Promise<Result | void> {
    const controller = new AbortController();
    return this.reconciler.reconcile(
      { namespace: NS, name: FLEET },
      {
        signal: controller.signal,
        log: recordingLogger(),
        reconcileID: 'r',
        cluster: { name: '', labels: {}, client: this.host, apiClient: this.host, synced: true },
        get: () =>
          this.host.get(DATABASE_FLEET, FLEET, { namespace: NS }).catch((err: unknown) => {
            if (isNotFound(err)) return undefined;
            throw err;
          }),
      },
    );
  }

  /** Reconciles and then clears the event list, returning the events of that reconcile. */
  async step(): Promise<{ result: Result | void; events: Recorded[] }> {
    this.clock.step(DEFAULT_ROLLOUT_POLL_MS);
    const result = await this.reconcile();
    return { result, events: this.events.splice(0) };
  }

  async databases(member: string): Promise<Database[]> {
    return (await this.member(member).fake.list(DATABASE)).items;
  }

  async versions(member: string): Promise<string[]> {
    return (await this.databases(member)).map((d) => d.spec.version);
  }

  /** The member's Database operator: every Database observed at its generation and Ready. */
  async settle(member: string): Promise<void> {
    for (const db of await this.databases(member))
      await patchStatus(this.member(member).fake, db, {
        phase: 'Ready',
        readyReplicas: 1,
        conditions: [
          { type: 'Ready', status: 'True', reason: 'ReplicasReady', message: '1/1', lastTransitionTime: now(this) },
        ],
      });
  }

  /** One of the member's Databases turns Degraded on what it runs now. */
  async degrade(member: string, name: string): Promise<void> {
    const db = (await this.databases(member)).find((d) => d.metadata.name === name)!;
    await patchStatus(this.member(member).fake, db, {
      phase: 'Degraded',
      readyReplicas: 0,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'ReplicasNotReady',
          message: '0/1 replicas ready',
          lastTransitionTime: now(this),
        },
      ],
    });
  }

  memberWrites(): Record<string, number> {
    return Object.fromEntries(this.members.map((m) => [m.name, m.fake.countRequests(isWrite)]));
  }

  clearRequests(): void {
    this.host.clearRequests();
    for (const m of this.members) m.fake.clearRequests();
  }
}

function now(bed: Bed): string {
  return new Date(bed.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
}

function clusterStates(fleet: DatabaseFleet): string[] {
  return (fleet.status?.clusters ?? []).map((c) => `${c.name}:${c.state}:${c.ready}/${c.databases}`);
}

function condition(fleet: DatabaseFleet, type: string): string | undefined {
  const c = fleet.status?.conditions?.find((x) => x.type === type);
  return c && `${c.status}/${c.reason}`;
}

const SPEC: DatabaseFleetSpec = { version: '16', clusterSelector: { matchLabels: { env: 'prod' } } };

describe('DatabaseFleetReconciler', () => {
  test('rolls a version out across 3 members one at a time, halts on a Degraded member, resumes when it recovers, ends Consistent', async () => {
    const bed = new Bed(['member-c', 'member-a', 'member-b']);
    bed.addMember('staging', { env: 'staging' });
    await bed.createFleet(SPEC);

    // 1. the first member by name gets the version; no other is touched.
    let { result, events } = await bed.step();
    assert.deepEqual(result, { kind: 'requeueAfter', requeueAfterMs: DEFAULT_ROLLOUT_POLL_MS });
    assert.deepEqual(await bed.versions('member-a'), ['16', '16']);
    assert.deepEqual(await bed.versions('member-b'), ['15', '15']);
    assert.deepEqual(await bed.versions('member-c'), ['15', '15']);
    let fleet = await bed.fleet();
    assert.equal(fleet.status?.phase, 'RollingOut');
    assert.equal(fleet.status?.currentCluster, 'member-a');
    assert.equal(fleet.status?.observedGeneration, fleet.metadata.generation);
    assert.deepEqual(clusterStates(fleet), ['member-a:Upgrading:0/2', 'member-b:Pending:0/2', 'member-c:Pending:0/2']);
    assert.equal(condition(fleet, 'Progressing'), 'True/UpgradingCluster');
    assert.deepEqual(
      events.map((e) => e.reason),
      ['RolloutStarted', 'ClusterUpgradeStarted'],
    );
    assert.match(events[0]!.message, /rolling 16 out to 3 of 3 clusters, one at a time, starting with member-a/);
    assert.match(
      events[1]!.message,
      /cluster member-a: spec\.version set to 16 on 2 Databases \(shop\/orders, shop\/users\)/,
    );

    // 2. member-a not Ready yet: the rollout waits and writes nothing to any member.
    bed.clearRequests();
    ({ events } = await bed.step());
    assert.deepEqual(bed.memberWrites(), { 'member-c': 0, 'member-a': 0, 'member-b': 0, staging: 0 });
    assert.deepEqual(events, []);
    assert.equal(condition(await bed.fleet(), 'Progressing'), 'True/WaitingForCluster');

    // 3. member-a Ready on 16: member-b is next.
    await bed.settle('member-a');
    ({ events } = await bed.step());
    assert.deepEqual(await bed.versions('member-b'), ['16', '16']);
    assert.deepEqual(await bed.versions('member-c'), ['15', '15']);
    assert.deepEqual(
      events.map((e) => e.reason),
      ['ClusterUpgraded', 'ClusterUpgradeStarted'],
    );
    assert.match(events[0]!.message, /cluster member-a: 2 Databases Ready on 16/);

    // 4. a Database of member-b turns Degraded: halted there, member-c untouched however long it lasts.
    await bed.settle('member-b');
    await bed.degrade('member-b', 'users');
    ({ result, events } = await bed.step());
    fleet = await bed.fleet();
    assert.equal(fleet.status?.phase, 'Halted');
    assert.equal(fleet.status?.currentCluster, 'member-b');
    assert.deepEqual(clusterStates(fleet), ['member-a:UpToDate:2/2', 'member-b:Degraded:1/2', 'member-c:Pending:0/2']);
    assert.match(fleet.status!.clusters![1]!.message, /Database shop\/users is Degraded: 0\/1 replicas ready/);
    assert.equal(condition(fleet, 'Degraded'), 'True/ClusterDegraded');
    assert.equal(condition(fleet, 'Ready'), 'False/RolloutHalted');
    assert.deepEqual(events, [
      {
        type: 'Warning',
        reason: 'RolloutHalted',
        message:
          'halted at cluster member-b: cluster member-b is Degraded: Database shop/users is Degraded: 0/1 replicas ready; no other cluster is touched until it recovers',
      },
    ]);
    assert.deepEqual(result, { kind: 'requeueAfter', requeueAfterMs: DEFAULT_ROLLOUT_POLL_MS });
    const haltedSince = fleet.status!.conditions!.find((c) => c.type === 'Degraded')!.lastTransitionTime;
    bed.clearRequests();
    for (let i = 0; i < 5; i++) {
      ({ events } = await bed.step());
      assert.deepEqual(events, [], 'halted: said once, not on every poll');
    }
    assert.deepEqual(await bed.versions('member-c'), ['15', '15']);
    assert.deepEqual(bed.memberWrites(), { 'member-c': 0, 'member-a': 0, 'member-b': 0, staging: 0 });
    assert.equal(
      (await bed.fleet()).status!.conditions!.find((c) => c.type === 'Degraded')!.lastTransitionTime,
      haltedSince,
      'lastTransitionTime moves only when the status does',
    );

    // 5. member-b recovers: the rollout resumes on member-c.
    await bed.settle('member-b');
    ({ events } = await bed.step());
    assert.deepEqual(
      events.map((e) => e.reason),
      ['ClusterUpgraded', 'RolloutResumed', 'ClusterUpgradeStarted'],
    );
    assert.match(events[1]!.message, /cluster member-b recovered/);
    assert.deepEqual(await bed.versions('member-c'), ['16', '16']);
    fleet = await bed.fleet();
    assert.equal(condition(fleet, 'Degraded'), 'False/AsExpected');

    // 6. member-c Ready: Consistent; every member on 16, the unselected one untouched.
    await bed.settle('member-c');
    ({ result, events } = await bed.step());
    fleet = await bed.fleet();
    assert.equal(fleet.status?.phase, 'Consistent');
    assert.equal(fleet.status?.currentCluster, undefined);
    assert.deepEqual(clusterStates(fleet), ['member-a:UpToDate:2/2', 'member-b:UpToDate:2/2', 'member-c:UpToDate:2/2']);
    assert.equal(condition(fleet, 'Ready'), 'True/VersionConsistent');
    assert.equal(condition(fleet, 'Progressing'), 'False/RolloutComplete');
    assert.deepEqual(
      events.map((e) => e.reason),
      ['ClusterUpgraded', 'RolloutComplete'],
    );
    assert.equal(events[1]!.message, 'every selected cluster (3) runs 16');
    assert.deepEqual(result, { kind: 'requeueAfter', requeueAfterMs: DEFAULT_CONSISTENCY_CHECK_MS });
    for (const m of ['member-a', 'member-b', 'member-c']) assert.deepEqual(await bed.versions(m), ['16', '16']);
    assert.deepEqual(await bed.versions('staging'), ['15', '15']);
  });

  test('a Consistent fleet reconciled again writes nothing anywhere and records nothing', async () => {
    const bed = new Bed(['a', 'b']);
    await bed.createFleet(SPEC);
    for (let i = 0; i < 4; i++) {
      await bed.step();
      for (const m of ['a', 'b']) await bed.settle(m);
    }
    assert.equal((await bed.fleet()).status?.phase, 'Consistent');
    bed.clearRequests();
    const { events } = await bed.step();
    assert.deepEqual(events, []);
    assert.equal(bed.host.countRequests(isWrite), 0);
    assert.deepEqual(bed.memberWrites(), { a: 0, b: 0 });
  });

  test('a member whose caches have not synced halts the rollout as Unreachable and is not written to', async () => {
    const bed = new Bed(['a', 'b']);
    bed.member('a').synced = false;
    await bed.createFleet(SPEC);
    const { events } = await bed.step();
    const fleet = await bed.fleet();
    assert.equal(fleet.status?.phase, 'Halted');
    assert.deepEqual(clusterStates(fleet), ['a:Unreachable:0/0', 'b:Pending:0/2']);
    assert.equal(fleet.status!.clusters![0]!.message, "the cluster's caches have not synced");
    assert.equal(condition(fleet, 'Degraded'), 'True/ClusterUnreachable');
    assert.deepEqual(bed.memberWrites(), { a: 0, b: 0 });
    assert.deepEqual(
      events.map((e) => e.reason),
      ['RolloutHalted'],
    );
    bed.member('a').synced = true;
    await bed.step();
    assert.deepEqual(await bed.versions('a'), ['16', '16']);
  });

  test('a member whose Databases cannot be listed is Unreachable with the status code only', async () => {
    const bed = new Bed(['a']);
    bed.member('a').fake.intercept((req: FakeRequest) => (req.verb === 'list' ? internalErrorFor(req) : undefined));
    await bed.createFleet(SPEC);
    await bed.step();
    const fleet = await bed.fleet();
    assert.deepEqual(clusterStates(fleet), ['a:Unreachable:0/0']);
    assert.equal(fleet.status!.clusters![0]!.message, 'Databases could not be listed: 500 InternalError');
  });

  test('the rollout stays on the cluster it was on when that cluster becomes unreachable mid-flight', async () => {
    const bed = new Bed(['a', 'b']);
    await bed.createFleet(SPEC);
    await bed.step(); // a in flight
    bed.member('a').synced = false;
    await bed.step();
    const fleet = await bed.fleet();
    assert.equal(fleet.status?.phase, 'Halted');
    assert.equal(fleet.status?.currentCluster, 'a');
    assert.deepEqual(await bed.versions('b'), ['15', '15']);
  });

  test('a cluster that leaves the selector is dropped from the status and never touched', async () => {
    const bed = new Bed(['a', 'b']);
    await bed.createFleet(SPEC);
    await bed.step();
    assert.deepEqual(clusterStates(await bed.fleet()), ['a:Upgrading:0/2', 'b:Pending:0/2']);
    bed.member('b').labels = { env: 'retired' };
    await bed.settle('a');
    await bed.step();
    const fleet = await bed.fleet();
    assert.deepEqual(clusterStates(fleet), ['a:UpToDate:2/2']);
    assert.equal(fleet.status?.phase, 'Consistent');
    assert.deepEqual(await bed.versions('b'), ['15', '15']);
  });

  test('matchExpressions select clusters, and databaseSelector selects which Databases in each', async () => {
    const bed = new Bed([]);
    bed.addMember('eu', { env: 'prod', region: 'eu' });
    bed.addMember('us', { env: 'prod', region: 'us' });
    bed.addMember('ap', { env: 'prod', region: 'ap' });
    await bed.createFleet({
      version: '16',
      clusterSelector: { matchExpressions: [{ key: 'region', operator: 'In', values: ['eu', 'us'] }] },
      databaseSelector: { matchLabels: { tier: 'gold' } },
    });
    await bed.step();
    const fleet = await bed.fleet();
    assert.deepEqual(clusterStates(fleet), ['eu:Upgrading:0/1', 'us:Pending:0/1']);
    assert.deepEqual(await bed.versions('eu'), ['15', '16']); // orders (silver) stays, users (gold) moves
  });

  test('paused: the status is reported, nothing is written to a member', async () => {
    const bed = new Bed(['a']);
    await bed.createFleet({ ...SPEC, paused: true });
    const { result } = await bed.step();
    const fleet = await bed.fleet();
    assert.equal(fleet.status?.phase, 'Paused');
    assert.deepEqual(bed.memberWrites(), { a: 0 });
    assert.deepEqual(result, { kind: 'requeueAfter', requeueAfterMs: DEFAULT_CONSISTENCY_CHECK_MS });
  });

  test("a Database changed since it was read is re-read on the 409 and patched, keeping the other writer's change", async () => {
    const bed = new Bed(['a']);
    await bed.createFleet(SPEC);
    const a = bed.member('a').fake;
    let raced = false;
    a.intercept(async (req: FakeRequest) => {
      if (raced || req.verb !== 'patch' || req.kind !== 'Database' || req.name !== 'orders') return undefined;
      raced = true;
      // Someone else writes in between our read and our patch.
      await a.patch(DATABASE, 'orders', { spec: { replicas: 3 } }, { type: 'merge', namespace: 'shop' });
      return undefined;
    });
    const done = bed.reconcile();
    let settled = false;
    void done.finally(() => (settled = true));
    while (!settled) await bed.clock.advance(20); // the conflict retry's backoff runs on the fake clock
    await done;
    const orders = (await bed.databases('a')).find((d) => d.metadata.name === 'orders')!;
    assert.equal(orders.spec.version, '16');
    assert.equal(orders.spec.replicas, 3);
    assert.ok(raced);
    assert.equal(
      a.requests.filter((r) => r.verb === 'patch' && r.name === 'orders' && r.kind === 'Database').length,
      3,
      'ours (409), theirs, ours again',
    );
  });

  test('a status write that conflicts is re-read and retried', async () => {
    const bed = new Bed(['a']);
    await bed.createFleet(SPEC);
    let failed = false;
    bed.host.intercept((req: FakeRequest) => {
      if (failed || req.subresource !== 'status') return undefined;
      failed = true;
      return conflictFor(req);
    });
    const done = bed.reconcile();
    let settled = false;
    void done.finally(() => (settled = true));
    while (!settled) await bed.clock.advance(20);
    await done;
    assert.ok(failed);
    assert.equal((await bed.fleet()).status?.phase, 'RollingOut');
  });

  test('a selector the schema lets through but Kubernetes would not parse is reported and not retried', async () => {
    const bed = new Bed(['a']);
    await bed.createFleet({ version: '16', clusterSelector: { matchExpressions: [{ key: 'env', operator: 'Near' }] } });
    await assert.rejects(bed.reconcile(), TerminalError);
    const fleet = await bed.fleet();
    assert.equal(condition(fleet, 'Ready'), 'False/InvalidSelector');
    assert.deepEqual(
      bed.events.map((e) => e.reason),
      ['InvalidSelector'],
    );
    assert.deepEqual(bed.memberWrites(), { a: 0 });
  });

  test('a new version while Consistent starts a new rollout from the first cluster', async () => {
    const bed = new Bed(['a', 'b']);
    await bed.createFleet(SPEC);
    for (let i = 0; i < 4; i++) {
      await bed.step();
      for (const m of ['a', 'b']) await bed.settle(m);
    }
    bed.events.splice(0);
    const fleet = await bed.fleet();
    await bed.host.patch(DATABASE_FLEET, FLEET, { spec: { version: '16.1' } }, { type: 'merge', namespace: NS });
    const { events } = await bed.step();
    assert.deepEqual(
      events.map((e) => e.reason),
      ['RolloutStarted', 'ClusterUpgradeStarted'],
    );
    const after = await bed.fleet();
    assert.equal(after.status?.targetVersion, '16.1');
    assert.equal(after.status?.observedGeneration, fleet.metadata.generation + 1);
    assert.deepEqual(await bed.versions('a'), ['16.1', '16.1']);
    assert.deepEqual(await bed.versions('b'), ['16', '16']);
  });
});
