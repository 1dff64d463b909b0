/**
 * Dependents on the fake client: graph order, parallel independent dependents, the stop at a
 * not-ready one with a requeue, reverse-order deletion, kept dependents, the conditions written to
 * the primary, and a graph that cannot run refused where it is declared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { kind } from '../../client/kind.js';
import { kinds } from '../../client/kinds.js';
import { FakeClock } from '../../core/fake-clock.js';
import { done, requeueAfter } from '../../core/result.js';
import { FakeClient, isWrite, type FakeRequest } from '../../testing/fake-client/index.js';
import { getCondition } from '../conditions.js';
import { computeKstatus } from '../../core/kstatus-rules.js';
import { gizmo, GIZMO as GIZMO_TYPE, GIZMO_CRD, type Gizmo } from '../testing/gizmo.js';
import { immediateClock } from '../testing/immediate-clock.js';
import { DEFAULT_NOT_READY_REQUEUE_MS, dependentsOf, type DependentWrite, type Dependents } from './dependents.js';

/** The name-to-object map of a built graph. */
type DependentsOf<G> = G extends Dependents<Gizmo, infer D> ? D : never;
import { InvalidDependentsError } from './invalid-dependents-error.js';

const GIZMO = kind<Gizmo>(GIZMO_TYPE.apiVersion, GIZMO_TYPE.kind);
const FIELD_MANAGER = 'gizmo-controller';

/** Secret → ConfigMap → Deployment, the Deployment ready once its status says a replica is. */
function chain(options: { configReady?: boolean } = {}) {
  return dependentsOf(GIZMO, { fieldManager: FIELD_MANAGER })
    .add({
      name: 'secret',
      kind: kinds.Secret,
      write: 'create',
      desired: (g): Secret => ({
        metadata: { name: `${g.metadata.name}-secret`, namespace: g.metadata.namespace },
        stringData: { password: 'pw' },
      }),
    })
    .add({
      name: 'config',
      kind: kinds.ConfigMap,
      dependsOn: ['secret'],
      desired: (g, { dependency }) => ({
        metadata: { name: `${g.metadata.name}-config`, namespace: g.metadata.namespace },
        data: { size: String(g.spec.size), secret: dependency('secret')?.metadata?.name ?? '' },
      }),
      readyWhen: () => options.configReady ?? true,
    })
    .add({
      name: 'deployment',
      kind: kinds.Deployment,
      dependsOn: ['config'],
      desired: (g) => deploymentFor(g),
      readyWhen: (d) => ({
        ready: (d.status?.readyReplicas ?? 0) >= 1,
        message: `${d.status?.readyReplicas ?? 0}/1 ready`,
      }),
    })
    .build();
}

function deploymentFor(g: Gizmo): Deployment {
  const labels = { app: g.metadata.name! };
  return {
    metadata: { name: `${g.metadata.name}-app`, namespace: g.metadata.namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'app:1' }] } },
    },
  };
}

async function setup() {
  const clock = new FakeClock();
  const client = new FakeClient({ clock, crds: [GIZMO_CRD] });
  const primary = await client.create<Gizmo>(gizmo('ns', 'g', { size: 2 }));
  client.clearRequests();
  return { clock, client, primary };
}

const writes = (client: FakeClient) =>
  client.requests.filter((r) => isWrite(r) && r.subresource === undefined).map((r) => `${r.verb} ${r.kind}`);

test('reconciles in dependency order, reports each dependent in the conditions, and comes back while one is not ready', async () => {
  const { clock, client, primary } = await setup();
  const dependents = chain();
  assert.deepEqual(dependents.names, ['secret', 'config', 'deployment']);
  const report = await dependents.reconcile(client, primary, { clock });
  assert.deepEqual(writes(client), ['create Secret', 'patch ConfigMap', 'patch Deployment']);
  assert.deepEqual(report.result, requeueAfter(DEFAULT_NOT_READY_REQUEUE_MS));
  assert.equal(report.ready, false);
  assert.deepEqual(
    report.states.map((s) => [s.name, s.state]),
    [
      ['secret', 'ready'],
      ['config', 'ready'],
      ['deployment', 'notReady'],
    ],
  );
  // Typed from the kinds: the report hands back a Deployment, a ConfigMap.
  const deployment: Deployment | undefined = report.object('deployment');
  const config: ConfigMap | undefined = report.object('config');
  assert.equal(config?.data?.secret, 'g-secret');
  assert.equal(deployment?.metadata?.ownerReferences?.[0]?.uid, primary.metadata.uid);

  const written = await client.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.equal(written.status?.observedGeneration, primary.metadata.generation);
  const conditions = written.status?.conditions;
  assert.equal(getCondition(conditions, 'SecretReady')?.status, 'True');
  assert.equal(getCondition(conditions, 'ConfigReady')?.status, 'True');
  assert.deepEqual(
    [getCondition(conditions, 'DeploymentReady')?.status, getCondition(conditions, 'DeploymentReady')?.reason],
    ['False', 'NotReady'],
  );
  assert.equal(getCondition(conditions, 'DeploymentReady')?.message, '0/1 ready');
  assert.equal(
    getCondition(conditions, 'DeploymentReady')?.lastTransitionTime,
    new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
  );
  assert.equal(computeKstatus(written).status, 'InProgress');
  assert.equal(getCondition(conditions, 'Reconciling')?.reason, 'DependentsNotReady');

  // The Deployment becomes ready: everything is, Ready=True, done; a further reconcile writes nothing.
  await client.patchStatus(kinds.Deployment, 'g-app', { status: { readyReplicas: 1 } }, { namespace: 'ns' });
  clock.step(60_000);
  const second = await dependents.reconcile(client, written, { clock });
  assert.deepEqual(second.result, done());
  const ready = second.primary;
  assert.equal(computeKstatus(ready).status, 'Current');
  assert.equal(getCondition(ready.status?.conditions, 'Ready')?.reason, 'DependentsReady');
  client.clearRequests();
  await dependents.reconcile(client, ready, { clock });
  assert.deepEqual(client.requests.filter(isWrite), [], 'a converged graph costs no write');
});

test('a field someone else changed is applied back, though the spec hash still matches', async () => {
  const { client, primary } = await setup();
  const dependents = chain();
  await dependents.reconcile(client, primary, { clock: immediateClock });
  await client.patch(kinds.ConfigMap, 'g-config', { data: { size: '99' } }, { type: 'merge', namespace: 'ns' });
  client.clearRequests();
  await dependents.reconcile(client, primary, { clock: immediateClock });
  assert.deepEqual(writes(client), ['patch ConfigMap'], 'only the drifted dependent is applied');
  assert.equal((await client.get(kinds.ConfigMap, 'g-config', { namespace: 'ns' })).data?.size, '2');
});

test('a not-ready dependent holds back what depends on it: nothing after it is written', async () => {
  const { client, primary } = await setup();
  const report = await chain({ configReady: false }).reconcile(client, primary, { clock: immediateClock });
  assert.deepEqual(writes(client), ['create Secret', 'patch ConfigMap']);
  const deployment = report.states.find((s) => s.name === 'deployment');
  assert.equal(deployment?.state, 'waiting');
  assert.equal(deployment?.message, 'waiting for config');
  assert.equal(report.result.kind, 'requeueAfter');
  const written = await client.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.equal(getCondition(written.status?.conditions, 'DeploymentReady')?.reason, 'WaitingForDependencies');
});

/** Counts requests in flight at once: each is held for a few turns of the event loop. */
function trackInFlight(client: FakeClient, filter: (r: FakeRequest) => boolean) {
  const seen = { now: 0, max: 0 };
  client.intercept(async (req) => {
    if (!filter(req)) return;
    seen.now++;
    seen.max = Math.max(seen.max, seen.now);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    seen.now--;
  });
  return seen;
}

test('independent dependents run in parallel; a chain runs one at a time', async () => {
  const independent = dependentsOf(GIZMO, { fieldManager: FIELD_MANAGER })
    .add({
      name: 'a',
      kind: kinds.ConfigMap,
      desired: (g) => ({ metadata: { name: 'a', namespace: g.metadata.namespace } }),
    })
    .add({
      name: 'b',
      kind: kinds.ConfigMap,
      desired: (g) => ({ metadata: { name: 'b', namespace: g.metadata.namespace } }),
    })
    .add({
      name: 'c',
      kind: kinds.Secret,
      desired: (g) => ({ metadata: { name: 'c', namespace: g.metadata.namespace } }),
    })
    .build();
  const parallel = await setup();
  const inParallel = trackInFlight(parallel.client, (r) => r.kind !== 'Gizmo');
  await independent.reconcile(parallel.client, parallel.primary, { clock: immediateClock });
  assert.equal(inParallel.max, 3);

  const serial = await setup();
  const inSeries = trackInFlight(serial.client, (r) => r.kind !== 'Gizmo');
  await chain().reconcile(serial.client, serial.primary, { clock: immediateClock });
  assert.equal(inSeries.max, 1);
});

test('cleanup deletes in reverse order, waiting for each dependent to be gone before its dependencies', async () => {
  const { client, primary } = await setup();
  const dependents = chain();
  await dependents.reconcile(client, primary, { clock: immediateClock });
  // Something else holds the Deployment for a while (a finalizer of its own).
  await client.patch(
    kinds.Deployment,
    'g-app',
    { metadata: { finalizers: ['example.com/hold'] } },
    { type: 'merge', namespace: 'ns' },
  );
  client.clearRequests();
  const first = await dependents.cleanup(client, primary);
  assert.deepEqual(first, requeueAfter(1000));
  assert.deepEqual(writes(client), ['delete Deployment'], 'the ConfigMap and Secret wait for the Deployment');
  assert.deepEqual(await dependents.cleanup(client, primary), requeueAfter(1000));
  await client.patch(kinds.Deployment, 'g-app', { metadata: { finalizers: null } }, { type: 'merge', namespace: 'ns' });
  client.clearRequests();
  assert.equal(await dependents.cleanup(client, primary), undefined);
  assert.deepEqual(writes(client), ['delete ConfigMap', 'delete Secret']);
  for (const [type, name] of [
    [kinds.Deployment, 'g-app'],
    [kinds.ConfigMap, 'g-config'],
    [kinds.Secret, 'g-secret'],
  ] as const)
    await assert.rejects(client.get<unknown>(type, name, { namespace: 'ns' }), { code: 'ERR_API' });
});

test('a kept dependent has no owner reference, survives cleanup, and is released if it still names the primary', async () => {
  const { client, primary } = await setup();
  const dependents = dependentsOf(GIZMO, { fieldManager: FIELD_MANAGER })
    .add({
      name: 'data',
      kind: kinds.ConfigMap,
      onDelete: 'keep',
      desired: (g) => ({ metadata: { name: 'data', namespace: g.metadata.namespace } }),
    })
    .add({
      name: 'view',
      kind: kinds.ConfigMap,
      dependsOn: ['data'],
      desired: (g) => ({ metadata: { name: 'view', namespace: g.metadata.namespace } }),
    })
    .build();
  await dependents.reconcile(client, primary, { clock: immediateClock });
  assert.equal((await client.get(kinds.ConfigMap, 'data', { namespace: 'ns' })).metadata?.ownerReferences, undefined);
  // An older version of the operator owned it: cleanup lets go of it instead of leaving it to the garbage collector.
  const ref = {
    apiVersion: GIZMO.apiVersion,
    kind: GIZMO.kind,
    name: 'g',
    uid: primary.metadata.uid!,
    controller: true,
  };
  await client.patch(
    kinds.ConfigMap,
    'data',
    { metadata: { ownerReferences: [ref] } },
    { type: 'merge', namespace: 'ns' },
  );
  assert.equal(await dependents.cleanup(client, primary), undefined);
  const kept = await client.get(kinds.ConfigMap, 'data', { namespace: 'ns' });
  assert.deepEqual(kept.metadata?.ownerReferences ?? [], []);
  await assert.rejects(client.get(kinds.ConfigMap, 'view', { namespace: 'ns' }), { code: 'ERR_API' });
});

test('a failed dependent: its condition says why, its dependents wait, and the error is rethrown unchanged', async () => {
  const { client, primary } = await setup();
  const boom = Object.assign(new Error('admission webhook denied the ConfigMap'), { code: 'ERR_TERMINAL' });
  client.intercept((req) => (req.kind === 'ConfigMap' && isWrite(req) ? boom : undefined));
  await assert.rejects(chain().reconcile(client, primary, { clock: immediateClock }), (err) => err === boom);
  assert.deepEqual(writes(client), ['create Secret', 'patch ConfigMap']);
  const written = await client.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  const config = getCondition(written.status?.conditions, 'ConfigReady');
  assert.deepEqual([config?.status, config?.reason, config?.message], ['False', 'ReconcileFailed', boom.message]);
  assert.equal(getCondition(written.status?.conditions, 'DeploymentReady')?.reason, 'WaitingForDependencies');
  // A terminal error cannot be retried away: kstatus Stalled (Failed to Flux and Argo CD).
  assert.equal(computeKstatus(written).status, 'Failed');
});

test('status: false writes nothing to the primary; a function adds its fields, conditions its own conditions', async () => {
  const { client, primary } = await setup();
  await chain().reconcile(client, primary, { clock: immediateClock, status: false });
  assert.equal(
    client.countRequests((r) => r.subresource === 'status'),
    0,
  );
  const report = await chain().reconcile(client, primary, {
    clock: immediateClock,
    status: (outcome) => ({ message: `${outcome.states.filter((s) => s.state === 'ready').length} ready` }),
  });
  assert.equal(report.primary.status?.message, '2 ready');
  const withOwn = await chain().reconcile(client, report.primary, {
    clock: immediateClock,
    conditions: () => [{ type: 'Provisioned', status: 'True', reason: 'ResourcesCreated', message: 'all there' }],
  });
  const provisioned = getCondition(withOwn.primary.status?.conditions, 'Provisioned');
  assert.deepEqual([provisioned?.status, provisioned?.observedGeneration], ['True', primary.metadata.generation]);
  assert.equal(getCondition(withOwn.primary.status?.conditions, 'ConfigReady')?.status, 'True');
});

test('desired reading a dependent it does not depend on fails that dependent with a clear message', async () => {
  const { client, primary } = await setup();
  const dependents = dependentsOf(GIZMO, { fieldManager: FIELD_MANAGER })
    .add({
      name: 'a',
      kind: kinds.ConfigMap,
      desired: (g) => ({ metadata: { name: 'a', namespace: g.metadata.namespace } }),
    })
    .add({
      name: 'b',
      kind: kinds.ConfigMap,
      desired: (g, { dependency }) => ({
        metadata: { name: `b-${dependency('a')?.metadata?.name}`, namespace: g.metadata.namespace },
      }),
    })
    .build();
  await assert.rejects(
    dependents.reconcile(client, primary, { clock: immediateClock }),
    /dependent b reads a, which it does not depend on/,
  );
});

test('a graph that cannot run is refused at build(), naming what is wrong', () => {
  const base = () => dependentsOf(GIZMO, { fieldManager: FIELD_MANAGER });
  const cm = (name: string) => ({ metadata: { name } });
  assert.throws(
    () =>
      base()
        .add({ name: 'a', kind: kinds.ConfigMap, dependsOn: ['c'] as never, desired: () => cm('a') })
        .add({ name: 'b', kind: kinds.ConfigMap, dependsOn: ['a'], desired: () => cm('b') })
        .add({ name: 'c', kind: kinds.ConfigMap, dependsOn: ['b'], desired: () => cm('c') })
        .build(),
    (err) =>
      err instanceof InvalidDependentsError &&
      err.code === 'ERR_INVALID_DEPENDENTS' &&
      err.message === 'dependents of helpers.operator-runtime.dev/v1 Gizmo: dependency cycle a → c → b → a',
  );
  assert.throws(
    () =>
      base()
        .add({ name: 'a', kind: kinds.ConfigMap, dependsOn: ['missing'] as never, desired: () => cm('a') })
        .build(),
    /a depends on "missing", which is not declared \(declared: a\)/,
  );
  assert.throws(
    () =>
      base()
        .add({ name: 'a', kind: kinds.ConfigMap, desired: () => cm('a') })
        .add({ name: 'a', kind: kinds.Secret, desired: () => cm('a') })
        .build(),
    /a is declared twice/,
  );
  assert.throws(
    () =>
      base()
        .add({ name: 'my config', kind: kinds.ConfigMap, desired: () => cm('a') })
        .build(),
    /name "my config" must start with a letter/,
  );
  assert.throws(
    () =>
      base()
        .add({ name: 'a', kind: kinds.ConfigMap, conditionType: 'not ok', desired: () => cm('a') })
        .build(),
    /a: invalid condition type/,
  );
  assert.throws(() => dependentsOf(GIZMO, { fieldManager: '' }).build(), /fieldManager is required/);
  // In TypeScript an unknown dependency does not compile: dependsOn names only what was added before.
  // @ts-expect-error 'nope' is not a declared dependent
  base().add({ name: 'a', kind: kinds.ConfigMap, dependsOn: ['nope'], desired: () => cm('a') });
});

test('an aborted reconcile starts no further dependent and writes no status', async () => {
  const { client, primary } = await setup();
  const ac = new AbortController();
  client.intercept((req) => void (req.kind === 'Secret' && req.verb === 'create' ? ac.abort() : undefined));
  await assert.rejects(chain().reconcile(client, primary, { clock: immediateClock, signal: ac.signal }), {
    code: 'ERR_ABORTED',
  });
  assert.deepEqual(writes(client), ['create Secret']);
  assert.equal(
    client.countRequests((r) => r.subresource === 'status'),
    0,
  );
});

test('notReadyRequeueAfterMs: false ends a reconcile with a not-ready dependent without a requeue (the watch of its kind brings the next)', async () => {
  const { clock, client, primary } = await setup();
  const dependents = dependentsOf(GIZMO, { fieldManager: FIELD_MANAGER, notReadyRequeueAfterMs: false })
    .add({ name: 'deployment', kind: kinds.Deployment, desired: deploymentFor, readyWhen: () => false })
    .build();
  const report = await dependents.reconcile(client, primary, { clock });
  assert.equal(report.ready, false);
  assert.deepEqual(report.result, done());
});

test('onWrite hears each write as it returns, typed by name, whether or not a later one fails, and not an unchanged dependent', async () => {
  const { client, primary } = await setup();
  const heard: string[] = [];
  const onWrite = (write: DependentWrite<DependentsOf<ReturnType<typeof chain>>>) => {
    // Narrowed by name: the Secret's object is a Secret.
    if (write.name === 'secret') assert.equal(write.object.stringData?.password ?? 'stored', 'stored');
    heard.push(`${write.name} ${write.operation}`);
  };
  const boom = new Error('the Deployment is refused');
  const stop = client.intercept((req) => (req.kind === 'Deployment' && isWrite(req) ? boom : undefined));
  await assert.rejects(chain().reconcile(client, primary, { clock: immediateClock, onWrite }), (err) => err === boom);
  assert.deepEqual(heard, ['secret created', 'config created'], 'heard though the Deployment failed after them');
  stop();
  heard.length = 0;
  await chain().reconcile(client, primary, { clock: immediateClock, onWrite });
  assert.deepEqual(heard, ['deployment created'], 'the Secret and ConfigMap were unchanged');
});
