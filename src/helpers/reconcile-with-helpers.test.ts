/**
 * The helpers composed the way a reconciler uses them — an action chain over the fake client —
 * to pin down the property that matters most: a reconcile that finds the world as it wants it
 * makes zero writes, and one that finds a change makes exactly the writes the change needs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { Registry } from 'prom-client';
import { ignoreNotFound } from '../client/api-error.js';
import type { Client } from '../client/client.js';
import { done, type Result } from '../core/result.js';
import { FakeClock } from '../core/fake-clock.js';
import { conflictFor, FakeClient, isStatusWrite, isWrite } from '../testing/fake-client/index.js';
import { runActions, type Action } from './actions.js';
import { applyOwned } from './apply-owned.js';
import { setCondition } from './conditions.js';
import { createOrPatch } from './create-or-patch.js';
import { handleFinalizer } from './finalizer-flow.js';
import { gizmo, GIZMO, GIZMO_CRD, type Gizmo } from './testing/gizmo.js';
import { immediateClock } from './testing/immediate-clock.js';
import { setControllerReference } from './owner-references.js';
import { retryOnConflict } from './retry-on-conflict.js';
import { patchStatus } from './status.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const FIN = 'gizmos.example.com/cleanup';

interface Ctx {
  readonly client: Client;
  readonly clock: FakeClock;
  obj: Gizmo;
  readonly ops: string[];
}

const finalizer: Action<Ctx> = {
  name: 'finalizer',
  async run(ctx) {
    const step = await handleFinalizer(ctx.client, ctx.obj, {
      name: FIN,
      cleanup: async () => void ctx.ops.push('cleanup'),
      retry: { clock: immediateClock },
    });
    if (step.kind === 'stop') return done();
    ctx.obj = step.object;
  },
};

const config: Action<Ctx> = {
  name: 'config',
  async run(ctx) {
    const owner = ctx.obj;
    const res = await createOrPatch(
      ctx.client,
      { ...CM, metadata: { name: 'g-config', namespace: 'ns' } } as ConfigMap,
      (cm) => {
        cm.data = { ...cm.data, size: String(owner.spec.size) };
        setControllerReference(owner, cm);
      },
    );
    ctx.ops.push(`config:${res.operation}`);
  },
};

const palette: Action<Ctx> = {
  name: 'palette',
  async run(ctx) {
    const desired = setControllerReference(ctx.obj, {
      ...CM,
      metadata: { name: 'g-palette', namespace: 'ns' },
      data: { color: ctx.obj.spec.color ?? 'none' },
    } as ConfigMap);
    const current = await ignoreNotFound(ctx.client.get<ConfigMap>(CM, 'g-palette', { namespace: 'ns' }));
    const res = await applyOwned(ctx.client, desired, { fieldManager: 'gizmo-controller', current });
    ctx.ops.push(`palette:${res.operation}`);
  },
};

const status: Action<Ctx> = {
  name: 'status',
  async run(ctx) {
    const res = await retryOnConflict(
      async (attempt) => {
        const cur = attempt === 1 ? ctx.obj : await ctx.client.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
        const conditions = setCondition(
          cur.status?.conditions,
          {
            type: 'Ready',
            status: 'True',
            reason: 'Reconciled',
            message: 'ok',
            observedGeneration: ctx.obj.metadata.generation,
          },
          { clock: ctx.clock },
        );
        return patchStatus(
          ctx.client,
          cur,
          { ...cur.status, conditions },
          { observedGeneration: ctx.obj.metadata.generation },
        );
      },
      { clock: immediateClock },
    );
    ctx.ops.push(`status:${res.changed ? 'written' : 'unchanged'}`);
  },
};

async function reconcile(
  fake: FakeClient,
  clock: FakeClock,
  registry?: Registry,
): Promise<{ result: Result; ops: string[] }> {
  const obj = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  const ctx: Ctx = { client: fake, clock, obj, ops: [] };
  const report = await runActions([finalizer, config, palette, status], ctx, { controller: 'gizmo', clock, registry });
  return { result: report.result, ops: ctx.ops };
}

async function setup(): Promise<{ fake: FakeClient; clock: FakeClock }> {
  const clock = new FakeClock();
  const fake = new FakeClient({ crds: [GIZMO_CRD], clock });
  await fake.create(gizmo('ns', 'g', { size: 2, color: 'blue' }));
  fake.clearRequests();
  return { fake, clock };
}

test('the first reconcile writes what is missing; the next ones write nothing at all', async () => {
  const { fake, clock } = await setup();
  const first = await reconcile(fake, clock);
  assert.deepEqual(first.ops, ['config:created', 'palette:applied', 'status:written']);
  assert.equal(fake.countRequests(isWrite), 4, 'finalizer, config, palette, status');
  fake.clearRequests();
  clock.step(60_000);
  for (let i = 0; i < 3; i++) {
    const again = await reconcile(fake, clock);
    assert.deepEqual(again.ops, ['config:unchanged', 'palette:unchanged', 'status:unchanged']);
    assert.deepEqual(again.result, { kind: 'done' });
  }
  assert.equal(fake.countRequests(isWrite), 0);
  assert.equal(fake.countRequests(), 9, 'three reads per reconcile, nothing else');
});

test('a spec change makes exactly the writes it needs, and status records the new generation', async () => {
  const { fake, clock } = await setup();
  await reconcile(fake, clock);
  await fake.patch(GIZMO, 'g', { spec: { color: 'red' } }, { type: 'merge', namespace: 'ns' });
  fake.clearRequests();
  const after = await reconcile(fake, clock);
  assert.deepEqual(after.ops, ['config:unchanged', 'palette:applied', 'status:written']);
  assert.equal(fake.countRequests(isWrite), 2);
  const g = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.equal(g.status?.observedGeneration, 2);
  assert.equal(g.status?.conditions?.[0]?.observedGeneration, 2);
});

test('with every other status write rejected as a conflict, the reconcile still converges', async () => {
  const { fake, clock } = await setup();
  let statusWrites = 0;
  fake.intercept((req) => (isStatusWrite(req) && ++statusWrites % 2 === 1 ? conflictFor(req) : undefined));
  const first = await reconcile(fake, clock);
  assert.deepEqual(first.ops.at(-1), 'status:written');
  assert.equal(statusWrites, 2, 'the first status write conflicted, the re-read one went through');
  const g = await fake.get<Gizmo>(GIZMO, 'g', { namespace: 'ns' });
  assert.equal(g.status?.conditions?.[0]?.type, 'Ready');
});

test('deleting the gizmo runs cleanup once, removes our finalizer and ends the chain', async () => {
  const { fake, clock } = await setup();
  const registry = new Registry();
  await reconcile(fake, clock, registry);
  await fake.delete(GIZMO, 'g', { namespace: 'ns' });
  const res = await reconcile(fake, clock, registry);
  assert.deepEqual(res.ops, ['cleanup']);
  assert.equal(await ignoreNotFound(fake.get(GIZMO, 'g', { namespace: 'ns' })), undefined);
  const metric = await registry.getSingleMetricAsString('operator_action_duration_seconds');
  assert.match(
    metric,
    /operator_action_duration_seconds_count\{controller="gizmo",action="finalizer",result="done"\} 1/,
  );
  assert.match(
    metric,
    /operator_action_duration_seconds_count\{controller="gizmo",action="status",result="continue"\} 1/,
  );
});
