/**
 * A fleet controller's defaults against one member whose reconciles hang (a member that serves
 * reads and holds every write open): the other members' work goes on (issue 35).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { Registry } from 'prom-client';
import { kinds } from '../client/kinds.js';
import type { Client } from '../client/contracts.js';
import { whenAborted } from '../core/abort.js';
import { InvalidOptionError } from '../core/errors.js';
import { FakeClock } from '../core/fake-clock.js';
import { silentLogger } from '../core/logger.js';
import { Manager } from '../manager/manager.js';
import {
  DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES,
  DEFAULT_FLEET_RECONCILE_TIMEOUT_MS,
  type FleetControllerOptions,
} from '../controller/fleet-controller-options.js';
import { quietClient } from '../manager/testing/quiet-client.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import type { ClusterEvents, ClusterProvider, MemberCluster } from './cluster-provider.js';

const CM = kinds.ConfigMap;

function configMaps(prefix: string, n: number): ConfigMap[] {
  return Array.from({ length: n }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${prefix}-${i}`, namespace: 'ns' },
  }));
}

function member(name: string, client: Client): MemberCluster {
  return { name, revision: '1', connect: () => Promise.resolve(client) };
}

class TestProvider implements ClusterProvider {
  readonly description = 'test clusters';
  constructor(private readonly initial: readonly MemberCluster[]) {}
  async start(signal: AbortSignal, events: ClusterEvents): Promise<void> {
    for (const c of this.initial) events.engage(c);
    await whenAborted(signal);
  }
  requiredPermissions() {
    return [];
  }
}

/** Yields to the event loop until `cond` holds (no timers: the fake clock never moves by itself). */
async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`never happened: ${what}`);
}

async function settle(rounds = 200): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}

/**
 * Members `stuck` (10 ConfigMaps, every reconcile waits until its signal aborts) and `ok` (5, each
 * reconcile returns at once), one fleet controller with `options`.
 */
function stalledFleet(options?: FleetControllerOptions) {
  const clock = new FakeClock(0);
  const provider = new TestProvider([
    member('stuck', new FakeClient({ objects: configMaps('s', 10) })),
    member('ok', new FakeClient({ objects: configMaps('o', 5) })),
  ]);
  const manager = new Manager({
    client: quietClient(),
    clock,
    metricsPort: 0,
    healthPort: 0,
    logger: silentLogger,
    registry: new Registry(),
    fleet: { provider },
  });
  const okDone = new Set<string>();
  const stuckSignals: AbortSignal[] = [];
  let stuckInFlight = 0;
  let stuckMaxInFlight = 0;
  const builder = manager.fleetController('status').for(CM);
  if (options) builder.withOptions(options);
  const controller = builder.complete(async (request, ctx) => {
    if (request.cluster === 'ok') {
      okDone.add(request.name);
      return;
    }
    stuckInFlight++;
    stuckMaxInFlight = Math.max(stuckMaxInFlight, stuckInFlight);
    stuckSignals.push(ctx.signal);
    try {
      await whenAborted(ctx.signal); // a write held open: only the reconcile's signal ends it
      throw ctx.signal.reason;
    } finally {
      stuckInFlight--;
    }
  });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  return {
    clock,
    controller,
    okDone,
    stuckSignals,
    stuck: () => ({ inFlight: stuckInFlight, maxInFlight: stuckMaxInFlight }),
    async stop() {
      stop.abort();
      await running;
    },
  };
}

test('by default a member whose reconciles hang holds 2 of the 4 workers, and the other member is reconciled in full (regression: 0/5)', async () => {
  const fleet = stalledFleet();
  try {
    assert.equal(fleet.controller.workerCount, DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES);
    assert.equal(DEFAULT_FLEET_MAX_CONCURRENT_RECONCILES, 4);
    await until('both members listed and the stuck one at its cap', () => fleet.stuck().inFlight === 2);
    await until('every object of the healthy member reconciled', () => fleet.okDone.size === 5);
    await settle();
    assert.equal(fleet.stuck().maxInFlight, 2, 'never more than its cap');
    assert.equal(fleet.controller.queue.lengthOfGroup('stuck'), 8, 'its other keys wait, queued');
  } finally {
    await fleet.stop();
  }
});

test('by default a fleet reconcile is aborted after 60 s (ERR_RECONCILE_TIMEOUT), and the member’s next keys get the workers', async () => {
  const fleet = stalledFleet();
  try {
    await until('the stuck member at its cap', () => fleet.stuck().inFlight === 2);
    assert.equal(DEFAULT_FLEET_RECONCILE_TIMEOUT_MS, 60_000);
    fleet.clock.step(DEFAULT_FLEET_RECONCILE_TIMEOUT_MS - 1);
    await settle();
    assert.equal(fleet.stuckSignals.filter((s) => s.aborted).length, 0, 'not a millisecond early');
    fleet.clock.step(1);
    await until('the next two stuck keys in flight', () => fleet.stuckSignals.length === 4);
    const [first, second] = fleet.stuckSignals;
    assert.equal((first!.reason as { code?: string }).code, 'ERR_RECONCILE_TIMEOUT');
    assert.equal((second!.reason as { code?: string }).code, 'ERR_RECONCILE_TIMEOUT');
    assert.equal(fleet.stuck().maxInFlight, 2);
  } finally {
    await fleet.stop();
  }
});

test('maxConcurrentReconcilesPerCluster and reconcileTimeoutMs are the user’s to set: 3 workers, 1 per cluster, no timeout', async () => {
  const fleet = stalledFleet({
    maxConcurrentReconciles: 3,
    maxConcurrentReconcilesPerCluster: 1,
    reconcileTimeoutMs: 0,
  });
  try {
    assert.equal(fleet.controller.workerCount, 3);
    await until('every object of the healthy member reconciled', () => fleet.okDone.size === 5);
    await until('the stuck member at its cap', () => fleet.stuck().inFlight === 1);
    fleet.clock.step(10 * DEFAULT_FLEET_RECONCILE_TIMEOUT_MS);
    await settle();
    assert.equal(fleet.stuck().maxInFlight, 1);
    assert.equal(fleet.stuckSignals.length, 1, 'no timeout: the one reconcile still hangs');
    assert.equal(fleet.stuckSignals[0]!.aborted, false);
  } finally {
    await fleet.stop();
  }
});

test('maxConcurrentReconcilesPerCluster must be an integer from 1 to maxConcurrentReconciles: InvalidOptionError names it', () => {
  for (const options of [
    { maxConcurrentReconcilesPerCluster: 0 },
    { maxConcurrentReconcilesPerCluster: 5 },
    { maxConcurrentReconcilesPerCluster: 1.5 },
    { maxConcurrentReconciles: 2, maxConcurrentReconcilesPerCluster: 3 },
  ]) {
    const manager = new Manager({
      client: quietClient(),
      metricsPort: 0,
      healthPort: 0,
      fleet: { provider: new TestProvider([]) },
    });
    assert.throws(
      () =>
        manager
          .fleetController('x')
          .for(CM)
          .withOptions(options)
          .complete(() => Promise.resolve()),
      (e: unknown) =>
        e instanceof InvalidOptionError &&
        e.option === 'maxConcurrentReconcilesPerCluster' &&
        /fleet controller x: must be an integer from 1 to maxConcurrentReconciles/.test(e.message),
      JSON.stringify(options),
    );
  }
});
