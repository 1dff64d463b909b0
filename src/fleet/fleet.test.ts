import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { Counter, Registry } from 'prom-client';
import { informerMetrics } from '../cache/cache-metrics.js';
import { kinds } from '../client/kinds.js';
import type { Client } from '../client/contracts.js';
import { whenAborted } from '../core/abort.js';
import { FakeClock } from '../core/fake-clock.js';
import { recordingLogger } from '../logging/recording-logger.js';
import type { HealthCheck } from '../manager/health-checks.js';
import { Manager } from '../manager/manager.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { quietClient } from '../manager/testing/quiet-client.js';
import type { ClusterEngagement } from './cluster-engagement.js';
import {
  InvalidClusterNameError,
  type ClusterEvents,
  type ClusterProvider,
  type MemberCluster,
} from './cluster-provider.js';
import { Fleet } from './fleet.js';
import type { FleetOptions } from './fleet-options.js';
import type { FleetReconcileContext } from './fleet-reconciler.js';
import type { FleetRequest } from './fleet-request.js';

const CM = kinds.ConfigMap;

function configMap(name: string, value: string, namespace = 'ns'): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { value } };
}

/** A member's fake that counts close() calls, as a real client with sockets would be closed. */
class ClosableFake extends FakeClient {
  closed = 0;
  close(): void {
    this.closed++;
  }
}

function member(name: string, client: Client, revision = '1', labels?: Record<string, string>): MemberCluster {
  return { name, revision, ...(labels ? { labels } : {}), connect: () => Promise.resolve(client) };
}

/** The test's own static provider: engages `initial` at start; `events` lets a test engage and disengage later. */
class TestProvider implements ClusterProvider {
  readonly description = 'test clusters';
  events: ClusterEvents | undefined;
  constructor(private readonly initial: readonly MemberCluster[] = []) {}
  async start(signal: AbortSignal, events: ClusterEvents): Promise<void> {
    this.events = events;
    for (const c of this.initial) events.engage(c);
    await whenAborted(signal);
  }
  requiredPermissions() {
    return [
      { resource: { apiVersion: 'v1', kind: 'Secret' }, verbs: ['list', 'watch'] as const, reason: 'test provider' },
    ];
  }
}

/** Yields to the event loop until `cond` holds (no timers: the fake clock never moves by itself). */
async function until(what: string, cond: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (await cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`never happened: ${what}`);
}

interface Seen {
  readonly cluster: string;
  readonly name: string;
  readonly fromGet: string | undefined;
  readonly fromClient: string | undefined;
  readonly listed: readonly string[];
}

function fleetManager(provider: ClusterProvider, fleet: Partial<FleetOptions> = {}, extra: { host?: Client } = {}) {
  const logger = recordingLogger();
  const registry = new Registry();
  const manager = new Manager({
    client: extra.host ?? quietClient(),
    clock: new FakeClock(0),
    metricsPort: 0,
    healthPort: 0,
    logger,
    registry,
    fleet: { provider, ...fleet },
  });
  return { manager, logger, registry };
}

/** A fleet controller of ConfigMaps recording what each reconcile read (through get() and through the cluster's client). */
function recordConfigMaps(manager: Manager, name = 'configmaps'): Seen[] {
  const seen: Seen[] = [];
  manager
    .fleetController(name)
    .for(CM)
    .complete(async (request: FleetRequest, ctx: FleetReconcileContext<ConfigMap>) => {
      const fromGet = (await ctx.get())?.data?.['value'];
      const viaClient = await ctx.cluster.client
        .get(CM, request.name, { namespace: request.namespace ?? '', signal: ctx.signal })
        .catch(() => undefined);
      const listed = (await ctx.cluster.client.list(CM, { namespace: 'ns', signal: ctx.signal })).items.map(
        (c) => `${c.metadata?.name}=${c.data?.['value']}`,
      );
      ctx.log.info({}, 'reconciled');
      seen.push({
        cluster: request.cluster,
        name: request.name,
        fromGet,
        fromClient: viaClient?.data?.['value'],
        listed,
      });
    });
  return seen;
}

async function running(manager: Manager) {
  const stop = new AbortController();
  const done = manager.start(stop.signal);
  return {
    async stop() {
      stop.abort();
      await done;
    },
  };
}

function readyCheck(manager: Manager): () => Promise<boolean> {
  const checks = (manager as unknown as { readyChecks: Map<string, HealthCheck> }).readyChecks;
  return async () => {
    for (const check of checks.values()) if ((await check()) === false) return false;
    return true;
  };
}

async function seriesOf(registry: Registry, cluster: string): Promise<string[]> {
  const text = await registry.metrics();
  return text
    .split('\n')
    .filter((l) => !l.startsWith('#') && (l.includes(`cluster="${cluster}"`) || l.includes(`informer="${cluster}/`)));
}

function gc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

test('a cluster engaged at run time is reconciled, reading only its own objects through ctx.get() and ctx.cluster.client', async () => {
  const east = new FakeClient({ objects: [configMap('a', 'east')] });
  const west = new FakeClient({ objects: [configMap('a', 'west'), configMap('b', 'west')] });
  const provider = new TestProvider([member('east', east)]);
  const { manager } = fleetManager(provider);
  const seen = recordConfigMaps(manager);
  const run = await running(manager);
  try {
    await until('east reconciled', () => seen.some((s) => s.cluster === 'east'));
    assert.deepEqual(seen, [{ cluster: 'east', name: 'a', fromGet: 'east', fromClient: 'east', listed: ['a=east'] }]);
    provider.events!.engage(member('west', west));
    await until('west reconciled twice', () => seen.filter((s) => s.cluster === 'west').length === 2);
    assert.deepEqual(
      seen.filter((s) => s.cluster === 'west').sort((x, y) => x.name.localeCompare(y.name)),
      [
        { cluster: 'west', name: 'a', fromGet: 'west', fromClient: 'west', listed: ['a=west', 'b=west'] },
        { cluster: 'west', name: 'b', fromGet: 'west', fromClient: 'west', listed: ['a=west', 'b=west'] },
      ],
    );
    assert.deepEqual(
      manager
        .fleet!.clusters()
        .map((c) => c.name)
        .sort(),
      ['east', 'west'],
    );
    // A change in one member reconciles that member's key only.
    await west.create(configMap('c', 'west'));
    await until('west/c reconciled', () => seen.some((s) => s.cluster === 'west' && s.name === 'c'));
    assert.equal(seen.filter((s) => s.cluster === 'east').length, 1);
  } finally {
    await run.stop();
  }
});

test('a member named apps leaving removes its own series only: the host\'s apps/v1 Deployment series and a user\'s series labelled cluster="apps" stay', async () => {
  const apps = new FakeClient({ objects: [configMap('a', 'apps')] });
  const provider = new TestProvider([member('apps', apps)]);
  const { manager, registry } = fleetManager(provider);
  // What the host's Deployment informer writes (its name is `apps/v1 Deployment`), and a user's own counter.
  const host = informerMetrics(registry, 'apps/v1 Deployment');
  host.list();
  host.setSynced(true);
  host.setState(undefined, 'watching');
  host.event('ADDED');
  host.setObjects(3);
  host.setLastEventAt(1_000);
  host.setPending('deployments', 0);
  host.restart('gone');
  host.invalidObject('watch');
  const mine = new Counter({
    name: 'my_cluster_things_total',
    help: "a user's",
    labelNames: ['cluster'],
    registers: [registry],
  });
  mine.inc({ cluster: 'apps' });
  const hostSeries = async () =>
    (await registry.metrics())
      .split('\n')
      .filter((l) => !l.startsWith('#') && l.includes('informer="apps/v1 Deployment"'));
  const before = await hostSeries();
  assert.equal(before.length, 9);
  const seen = recordConfigMaps(manager);
  const run = await running(manager);
  try {
    await until('apps reconciled', () => seen.length === 1);
    const text = await registry.metrics();
    assert.match(text, /fleet_reconciles_total\{controller="configmaps",cluster="apps",result="success"\} 1/);
    assert.match(text, /cache_synced\{informer="apps\/v1 ConfigMap"\} 1/);
    void provider.events!.disengage('apps');
    await (manager.fleet as Fleet).whenLeft('apps');
    const after = await registry.metrics();
    assert.deepEqual(await hostSeries(), before, "the host's series stay");
    assert.match(after, /^my_cluster_things_total\{cluster="apps"\} 1$/m);
    assert.doesNotMatch(after, /informer="apps\/v1 ConfigMap"/);
    assert.doesNotMatch(after, /fleet_reconciles_total\{[^}]*cluster="apps"/);
  } finally {
    await run.stop();
  }
});

test('beyond maxClusters a member is refused — logged, counted, kept waiting — and engaged, in name order, once another leaves', async () => {
  const provider = new TestProvider(['a', 'b', 'd', 'c'].map((n) => member(n, new FakeClient())));
  const { manager, logger, registry } = fleetManager(provider, { maxClusters: 2 });
  const run = await running(manager);
  try {
    const fleet = manager.fleet as Fleet;
    await until('two engaged', () => fleet.health().length === 2);
    assert.deepEqual(
      fleet.health().map((h) => h.name),
      ['a', 'b'],
    );
    const refused = logger.entries.filter((e) => e.msg?.startsWith('member cluster refused'));
    assert.deepEqual(
      refused.map((e) => [e.obj['cluster'], e.obj['maxClusters']]),
      [
        ['d', 2],
        ['c', 2],
      ],
    );
    assert.match(
      await registry.metrics(),
      /^fleet_provider_refused_total\{provider="fleet",reason="max_clusters"\} 2$/m,
    );
    // Engaged again while waiting (a new revision): still waiting, not reported twice.
    provider.events!.engage(member('d', new FakeClient(), '2'));
    assert.equal(logger.entries.filter((e) => e.msg?.startsWith('member cluster refused')).length, 2);
    await provider.events!.disengage('a');
    assert.deepEqual(
      fleet
        .health()
        .map((h) => h.name)
        .sort(),
      ['b', 'c'],
    );
    await provider.events!.disengage('c');
    assert.deepEqual(
      fleet
        .health()
        .map((h) => [h.name, h.revision])
        .sort(),
      [
        ['b', '1'],
        ['d', '2'],
      ],
    );
  } finally {
    await run.stop();
  }
  assert.throws(() => fleetManager(provider, { maxClusters: 0 }), { code: 'ERR_INVALID_OPTION' });
});

test('log lines of a fleet reconcile carry cluster, namespace and name; metrics carry the cluster and lose it when it leaves', async () => {
  const east = new FakeClient({ objects: [configMap('a', 'east')] });
  const west = new FakeClient({ objects: [configMap('a', 'west')] });
  const provider = new TestProvider([member('east', east), member('west', west)]);
  const { manager, logger, registry } = fleetManager(provider);
  const seen = recordConfigMaps(manager);
  const run = await running(manager);
  try {
    await until('both reconciled', () => seen.length === 2);
    const line = logger.entries.find((e) => e.msg === 'reconciled' && e.bindings['cluster'] === 'east');
    assert.ok(line, 'a reconcile line bound with cluster east');
    assert.equal(line.bindings['namespace'], 'ns');
    assert.equal(line.bindings['name'], 'a');
    assert.equal(line.bindings['controller'], 'configmaps');
    assert.equal(typeof line.bindings['reconcileID'], 'string');
    const text = await registry.metrics();
    assert.match(text, /fleet_reconciles_total\{controller="configmaps",cluster="east",result="success"\} 1/);
    assert.match(text, /fleet_cluster_synced\{cluster="east"\} 1/);
    assert.match(text, /fleet_clusters\{state="ready"\} 2/);
    assert.match(text, /cache_synced\{informer="east\/v1 ConfigMap"\} 1/);
    void provider.events!.disengage('east');
    await (manager.fleet as Fleet).whenLeft('east');
    assert.deepEqual(await seriesOf(registry, 'east'), []);
    assert.ok((await seriesOf(registry, 'west')).length > 0, 'west keeps its series');
    assert.match(await registry.metrics(), /fleet_clusters\{state="ready"\} 1/);
  } finally {
    await run.stop();
  }
});

test('a disengaged cluster is never reconciled again: its in-flight reconcile is aborted, its informers stop, its client is closed and its engagement is collectable', async () => {
  const east = new ClosableFake({ objects: [configMap('a', 'east')] });
  const provider = new TestProvider([member('east', east)]);
  const { manager } = fleetManager(provider);
  const calls: string[] = [];
  let inFlight: AbortSignal | undefined;
  manager
    .fleetController('blocking')
    .for(CM)
    .complete(async (request, ctx) => {
      calls.push(`${request.cluster}/${request.name}`);
      if (request.name === 'slow') {
        inFlight = ctx.signal;
        await whenAborted(ctx.signal);
      }
    });
  const run = await running(manager);
  try {
    await until('east/a reconciled', () => calls.includes('east/a'));
    await east.create(configMap('slow', 'east'));
    await until('slow in flight', () => inFlight !== undefined);
    let view: ClusterEngagement | undefined = manager.fleet!.cluster('east') as ClusterEngagement;
    const engagementRef = new WeakRef(view);
    const informerRef = new WeakRef(view.informersFor(CM)[0]!);
    const clientRef = new WeakRef(view.client);
    assert.equal(view.informersFor(CM)[0]!.health().name, 'east/v1 ConfigMap');
    view = undefined;
    void provider.events!.disengage('east');
    await (manager.fleet as Fleet).whenLeft('east');
    assert.equal(inFlight!.aborted, true);
    assert.equal((inFlight!.reason as { code?: string }).code, 'ERR_CLUSTER_DISENGAGED');
    assert.equal(east.closed, 1);
    assert.equal(manager.fleet!.cluster('east'), undefined);
    assert.deepEqual(manager.fleet!.health(), []);
    const before = calls.length;
    // Writes to the departed member reach nobody: its watch is gone.
    const watchesBefore = east.countRequests({ verb: 'watch' });
    await east.create(configMap('after', 'east'));
    for (let i = 0; i < 200; i++) await new Promise((r) => setImmediate(r));
    assert.equal(calls.length, before);
    assert.equal(east.countRequests({ verb: 'watch' }), watchesBefore);
    const collect = gc();
    const alive = () =>
      [engagementRef, informerRef, clientRef]
        .filter((r) => r.deref() !== undefined)
        .map((r) => (r === engagementRef ? 'engagement' : r === informerRef ? 'informer' : 'client'));
    // A few rounds: finalization of what the last tasks still held may need the loop to turn.
    for (let round = 0; round < 10 && alive().length > 0; round++) {
      await new Promise((r) => setImmediate(r));
      collect();
    }
    assert.deepEqual(alive(), []);
  } finally {
    await run.stop();
  }
});

test('re-engaging with a new revision replaces the caches; the same revision is a no-op', async () => {
  const first = new ClosableFake({ objects: [configMap('a', 'one')] });
  const second = new ClosableFake({ objects: [configMap('a', 'two')] });
  const provider = new TestProvider([member('east', first, 'r1')]);
  const { manager } = fleetManager(provider);
  const seen = recordConfigMaps(manager);
  const run = await running(manager);
  try {
    await until('first revision reconciled', () => seen.some((s) => s.fromGet === 'one'));
    const old = manager.fleet!.cluster('east') as ClusterEngagement;
    const oldInformer = old.informersFor(CM)[0]!;
    provider.events!.engage(member('east', first, 'r1', { tier: 'gold' }));
    assert.equal(manager.fleet!.cluster('east'), old, 'same revision: the same engagement');
    assert.deepEqual(old.labels, { tier: 'gold' });
    provider.events!.engage(member('east', second, 'r2'));
    await until('second revision reconciled', () => seen.some((s) => s.fromGet === 'two'));
    const replaced = manager.fleet!.cluster('east') as ClusterEngagement;
    assert.notEqual(replaced, old);
    assert.equal(replaced.revision, 'r2');
    assert.notEqual(replaced.informersFor(CM)[0], oldInformer);
    assert.equal(first.closed, 1);
    assert.equal(second.closed, 0);
    assert.equal(old.signal.aborted, true);
    assert.deepEqual(seen.at(-1), { cluster: 'east', name: 'a', fromGet: 'two', fromClient: 'two', listed: ['a=two'] });
  } finally {
    await run.stop();
  }
  assert.equal(second.closed, 1, 'stopping the manager closes every member client');
});

test("a member whose lists always fail leaves the others reconciling; /readyz stays ready with readiness 'host' and not with 'all-clusters'", async () => {
  for (const readiness of ['host', 'all-clusters'] as const) {
    const healthy = new FakeClient({ objects: [configMap('a', 'ok')] });
    const broken = new FakeClient({ objects: [configMap('a', 'never')] });
    broken.intercept((req) =>
      req.verb === 'list' || req.verb === 'watch' ? new Error('connection refused') : undefined,
    );
    const provider = new TestProvider([member('broken', broken), member('healthy', healthy)]);
    const { manager, logger } = fleetManager(provider, { readiness });
    const seen = recordConfigMaps(manager);
    const ready = readyCheck(manager);
    const run = await running(manager);
    try {
      await until('healthy reconciled', () => seen.some((s) => s.cluster === 'healthy'));
      await until('the broken member failed at least once', () =>
        manager.fleet!.health().some((h) => h.name === 'broken' && h.informers.some((i) => i.consecutiveFailures > 0)),
      );
      await healthy.create(configMap('b', 'ok'));
      await until('healthy/b reconciled', () => seen.some((s) => s.name === 'b'));
      assert.ok(seen.every((s) => s.cluster === 'healthy'));
      assert.equal(await ready(), readiness === 'host', `readiness ${readiness}`);
      assert.ok(!logger.entries.some((e) => JSON.stringify(e).includes('token')));
    } finally {
      await run.stop();
    }
  }
});

test('a member whose connect() fails is logged by name, retried with backoff on the clock, and joins once it connects', async () => {
  const clock = new FakeClock(0);
  const fake = new FakeClient({ objects: [configMap('a', 'late')] });
  let attempts = 0;
  const flaky: MemberCluster = {
    name: 'flaky',
    revision: '1',
    connect: () => (++attempts < 3 ? Promise.reject(new Error('dial tcp: refused')) : Promise.resolve(fake)),
  };
  const logger = recordingLogger();
  const manager = new Manager({
    client: quietClient(),
    clock,
    metricsPort: 0,
    healthPort: 0,
    logger,
    registry: new Registry(),
    fleet: { provider: new TestProvider([flaky]) },
  });
  const seen = recordConfigMaps(manager);
  const run = await running(manager);
  try {
    await until('first failure logged', () => attempts === 1 && manager.fleet!.health()[0]?.state === 'unhealthy');
    const failure = logger.entries.find((e) => e.msg === 'connecting to member cluster failed');
    assert.equal(failure?.bindings['cluster'], 'flaky');
    assert.equal(seen.length, 0);
    await until('backoff timer set', () => clock.pendingTimers > 0);
    await clock.advance(1_000);
    await until('second attempt', () => attempts === 2);
    await clock.advance(1_999);
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    assert.equal(attempts, 2, 'the second retry waits twice as long');
    await clock.advance(1);
    await until('reconciled once connected', () => seen.length === 1);
    assert.equal(seen[0]!.fromGet, 'late');
  } finally {
    await run.stop();
  }
});

test('two fleet controllers on one fleet share each member informer', async () => {
  const east = new FakeClient({ objects: [configMap('a', 'east')] });
  const { manager } = fleetManager(new TestProvider([member('east', east)]));
  const one = recordConfigMaps(manager, 'one');
  const two = recordConfigMaps(manager, 'two');
  const run = await running(manager);
  try {
    await until('both reconciled', () => one.length === 1 && two.length === 1);
    const [health] = manager.fleet!.health();
    assert.equal(health!.informers.length, 1);
    assert.deepEqual(health!.informers[0]!.handlers.map((h) => h.name).sort(), ['one:ConfigMap', 'two:ConfigMap']);
    assert.equal(
      east.countRequests({ verb: 'watch', kind: 'ConfigMap' }) +
        east.countRequests({ verb: 'list', kind: 'ConfigMap' }) <=
        2,
      true,
    );
  } finally {
    await run.stop();
  }
});

test('owns() maps an owned object to its controlling owner in the same cluster', async () => {
  const owner = configMap('owner', 'east');
  const east = new FakeClient({ objects: [owner] });
  const { manager } = fleetManager(new TestProvider([member('east', east)]));
  const reconciled: string[] = [];
  manager
    .fleetController('owner')
    .for(CM)
    .owns(kinds.Secret)
    .complete(async (r) => void reconciled.push(`${r.cluster}/${r.namespace}/${r.name}`));
  const run = await running(manager);
  try {
    await until('owner reconciled', () => reconciled.length === 1);
    const uid = east.peek(CM, 'owner', 'ns')!.metadata!.uid!;
    await east.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'child',
        namespace: 'ns',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid, controller: true }],
      },
    });
    await until('owner reconciled for its child', () => reconciled.length === 2);
    assert.deepEqual(reconciled, ['east/ns/owner', 'east/ns/owner']);
  } finally {
    await run.stop();
  }
});

test('an invalid cluster name is refused with a clear error, and nothing of it is engaged', async () => {
  const provider = new TestProvider();
  const { manager } = fleetManager(provider);
  recordConfigMaps(manager);
  const run = await running(manager);
  try {
    await until('provider started', () => provider.events !== undefined);
    for (const name of ['East', 'a/b', '', 'x'.repeat(64), '-edge']) {
      assert.throws(
        () => provider.events!.engage(member(name, new FakeClient())),
        (err: unknown) => err instanceof InvalidClusterNameError && /is not a DNS label/.test(err.message),
        name,
      );
    }
    assert.deepEqual(manager.fleet!.health(), []);
  } finally {
    await run.stop();
  }
});

test('a cluster engaged before the fleet starts is engaged at start; the last engage of a name wins, a disengage drops it', async () => {
  const registry = new Registry();
  const fleet = new Fleet(
    { provider: new TestProvider() },
    { clock: new FakeClock(0), logger: recordingLogger(), registry },
  );
  fleet.watchKind(CM);
  fleet.engage(member('east', new FakeClient(), '1'));
  fleet.engage(member('east', new FakeClient(), '2'));
  fleet.engage(member('west', new FakeClient()));
  void fleet.disengage('west');
  assert.deepEqual(fleet.health(), []);
  const stop = new AbortController();
  const done = fleet.start(stop.signal);
  await until('east connected', () => fleet.cluster('east') !== undefined);
  assert.deepEqual(
    fleet.health().map((h) => [h.name, h.revision]),
    [['east', '2']],
  );
  stop.abort();
  await done;
  assert.deepEqual(fleet.health(), []);
});

test("options and permissions: sharded needs the manager's sharding, fleet controllers need the fleet option, member RBAC is kept apart from the host’s", () => {
  assert.throws(
    () =>
      new Manager({
        client: quietClient(),
        metricsPort: 0,
        healthPort: 0,
        fleet: { provider: new TestProvider(), sharded: true },
      }),
    /fleet\.sharded: dividing clusters among replicas needs the manager's sharding option/,
  );
  const plain = new Manager({ client: quietClient(), metricsPort: 0, healthPort: 0 });
  assert.throws(() => plain.fleetController('x'), /needs the manager's fleet option/);
  assert.equal(plain.fleet, undefined);
  const { manager } = fleetManager(new TestProvider());
  recordConfigMaps(manager);
  assert.ok(manager.permissions().some((p) => p.resource.kind === 'Secret' && p.reason === 'test provider'));
  assert.ok(!manager.permissions().some((p) => p.resource.kind === 'ConfigMap'));
  assert.ok(manager.memberPermissions().some((p) => p.resource.kind === 'ConfigMap' && p.verbs.includes('watch')));
});
