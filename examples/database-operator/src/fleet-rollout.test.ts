import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Condition } from 'operator-runtime';
import {
  decideRollout,
  isDatabaseDone,
  type ObservedCluster,
  type ObservedDatabase,
  type RolloutDecision,
} from './fleet-rollout.js';

const T = '16';
const TIME = '2026-01-01T00:00:00Z';

function ready(status: 'True' | 'False', reason = status === 'True' ? 'ReplicasReady' : 'ReplicasNotReady'): Condition {
  return { type: 'Ready', status, reason, message: `ready ${status}`, lastTransitionTime: TIME };
}

/** A Database in one of the states the rollout tells apart. */
function db(
  name: string,
  state: 'old' | 'old-degraded' | 'set' | 'done' | 'degraded' | 'stale-ready',
  namespace = 'ns',
): ObservedDatabase {
  const base = { namespace, name };
  switch (state) {
    case 'old': // runs the old version, Ready
      return {
        ...base,
        generation: 1,
        specVersion: '15',
        observedGeneration: 1,
        phase: 'Ready',
        conditions: [ready('True')],
      };
    case 'old-degraded':
      return {
        ...base,
        generation: 1,
        specVersion: '15',
        observedGeneration: 1,
        phase: 'Degraded',
        conditions: [ready('False', 'ReplicasNotReady')],
      };
    case 'stale-ready': // version just set: its reconciler has not seen it, the old Ready still shows
      return {
        ...base,
        generation: 2,
        specVersion: T,
        observedGeneration: 1,
        phase: 'Ready',
        conditions: [ready('True')],
      };
    case 'set': // seen, not Ready yet
      return {
        ...base,
        generation: 2,
        specVersion: T,
        observedGeneration: 2,
        phase: 'Provisioning',
        conditions: [ready('False')],
      };
    case 'done':
      return {
        ...base,
        generation: 2,
        specVersion: T,
        observedGeneration: 2,
        phase: 'Ready',
        conditions: [ready('True')],
      };
    case 'degraded':
      return {
        ...base,
        generation: 2,
        specVersion: T,
        observedGeneration: 2,
        phase: 'Degraded',
        conditions: [ready('False', 'UnsupportedVersion')],
      };
  }
}

function cluster(name: string, ...databases: ObservedDatabase[]): ObservedCluster {
  return { name, reachable: true, databases };
}

function unreachable(name: string): ObservedCluster {
  return { name, reachable: false, message: 'caches not synced' };
}

function states(d: RolloutDecision): Record<string, string> {
  return Object.fromEntries(d.clusters.map((c) => [c.name, c.state]));
}

function conditionStatus(d: RolloutDecision): Record<string, string> {
  return Object.fromEntries(d.conditions.map((c) => [c.type, `${c.status}/${c.reason}`]));
}

describe('decideRollout', () => {
  test('a fleet whose every cluster runs the target is Consistent and takes no action', () => {
    const d = decideRollout({
      targetVersion: T,
      clusters: [cluster('b', db('x', 'done')), cluster('a', db('x', 'done'), db('y', 'done'))],
    });
    assert.deepEqual(d.action, { kind: 'done' });
    assert.equal(d.phase, 'Consistent');
    assert.equal(d.currentCluster, undefined);
    assert.deepEqual(
      d.clusters.map((c) => [c.name, c.state, c.databases, c.ready, c.versions]),
      [
        ['a', 'UpToDate', 2, 2, [T]],
        ['b', 'UpToDate', 1, 1, [T]],
      ],
    );
    assert.deepEqual(conditionStatus(d), {
      Ready: 'True/VersionConsistent',
      Progressing: 'False/RolloutComplete',
      Degraded: 'False/AsExpected',
    });
  });

  test('a new version starts on the first cluster by name, and only there', () => {
    const d = decideRollout({
      targetVersion: T,
      clusters: [
        cluster('c', db('x', 'old')),
        cluster('a', db('y', 'old'), db('x', 'old')),
        cluster('b', db('x', 'old')),
      ],
    });
    assert.deepEqual(d.action, {
      kind: 'upgrade',
      cluster: 'a',
      databases: [
        { namespace: 'ns', name: 'x' },
        { namespace: 'ns', name: 'y' },
      ],
    });
    assert.equal(d.phase, 'RollingOut');
    assert.equal(d.currentCluster, 'a');
    assert.deepEqual(states(d), { a: 'Upgrading', b: 'Pending', c: 'Pending' });
    assert.deepEqual(d.clusters[0]!.versions, ['15', T]);
    assert.equal(conditionStatus(d).Progressing, 'True/UpgradingCluster');
  });

  test('while a cluster is in flight the next one is not touched: the rollout waits', () => {
    for (const inFlight of ['set', 'stale-ready'] as const) {
      const d = decideRollout({
        targetVersion: T,
        clusters: [cluster('a', db('x', 'done'), db('y', inFlight)), cluster('b', db('x', 'old'))],
      });
      assert.equal(d.action.kind, 'wait', inFlight);
      assert.equal(d.currentCluster, 'a');
      assert.deepEqual(states(d), { a: 'Upgrading', b: 'Pending' });
      assert.equal(d.clusters[0]!.ready, 1);
      assert.equal(conditionStatus(d).Progressing, 'True/WaitingForCluster');
    }
  });

  test('a Database Ready on an older generation is not done: Ready must be for the version set', () => {
    assert.equal(isDatabaseDone(db('x', 'stale-ready'), T), false);
    assert.equal(isDatabaseDone(db('x', 'done'), T), true);
    assert.equal(isDatabaseDone(db('x', 'old'), T), false);
  });

  test('once the in-flight cluster is Ready, the next cluster by name is upgraded', () => {
    const d = decideRollout({
      targetVersion: T,
      clusters: [cluster('c', db('x', 'old')), cluster('a', db('x', 'done')), cluster('b', db('x', 'old'))],
    });
    assert.deepEqual(d.action, { kind: 'upgrade', cluster: 'b', databases: [{ namespace: 'ns', name: 'x' }] });
    assert.deepEqual(states(d), { a: 'UpToDate', b: 'Upgrading', c: 'Pending' });
  });

  test('a partly upgraded cluster gets the rest of its Databases, not the next cluster', () => {
    const d = decideRollout({
      targetVersion: T,
      clusters: [cluster('a', db('x', 'set'), db('y', 'old')), cluster('b', db('x', 'old'))],
    });
    assert.deepEqual(d.action, { kind: 'upgrade', cluster: 'a', databases: [{ namespace: 'ns', name: 'y' }] });
  });

  test('a Degraded Database in the in-flight cluster halts the rollout there, touching no other cluster', () => {
    const d = decideRollout({
      targetVersion: T,
      clusters: [cluster('a', db('x', 'degraded'), db('y', 'old')), cluster('b', db('x', 'old'))],
    });
    assert.equal(d.action.kind, 'halt');
    assert.ok(d.action.kind === 'halt' && d.action.cause === 'Degraded' && d.action.cluster === 'a');
    assert.equal(d.phase, 'Halted');
    assert.equal(d.currentCluster, 'a');
    assert.deepEqual(states(d), { a: 'Degraded', b: 'Pending' });
    assert.match(d.clusters[0]!.message, /Database ns\/x is Degraded: ready False/);
    assert.deepEqual(conditionStatus(d), {
      Ready: 'False/RolloutHalted',
      Progressing: 'False/ClusterDegraded',
      Degraded: 'True/ClusterDegraded',
    });
  });

  test('a Degraded condition halts as the Degraded phase does', () => {
    const degraded: ObservedDatabase = {
      ...db('x', 'set'),
      conditions: [
        ready('False'),
        { type: 'Degraded', status: 'True', reason: 'Crashloop', message: 'pod restarts', lastTransitionTime: TIME },
      ],
    };
    const d = decideRollout({ targetVersion: T, clusters: [cluster('a', degraded), cluster('b', db('x', 'old'))] });
    assert.equal(d.action.kind, 'halt');
    assert.match(d.clusters[0]!.message, /pod restarts/);
  });

  test('after the Degraded Database recovers the rollout resumes where it was', () => {
    const d = decideRollout({
      targetVersion: T,
      previousCurrentCluster: 'a',
      clusters: [cluster('a', db('x', 'done'), db('y', 'done')), cluster('b', db('x', 'old'))],
    });
    assert.equal(d.action.kind, 'upgrade');
    assert.equal(d.currentCluster, 'b');
  });

  test('the next cluster is not started while it is Degraded on the old version', () => {
    const d = decideRollout({
      targetVersion: T,
      clusters: [cluster('a', db('x', 'done')), cluster('b', db('x', 'old-degraded'))],
    });
    assert.ok(d.action.kind === 'halt' && d.action.cluster === 'b' && d.action.cause === 'Degraded');
  });

  test('an unreachable cluster halts the rollout and is reported Unreachable', () => {
    const d = decideRollout({
      targetVersion: T,
      clusters: [cluster('a', db('x', 'old')), unreachable('b'), cluster('c', db('x', 'old'))],
    });
    assert.ok(d.action.kind === 'halt' && d.action.cluster === 'b' && d.action.cause === 'Unreachable');
    assert.deepEqual(states(d), { a: 'Pending', b: 'Unreachable', c: 'Pending' });
    assert.equal(d.clusters[1]!.message, 'caches not synced');
    assert.equal(conditionStatus(d).Degraded, 'True/ClusterUnreachable');
  });

  test('an unreachable cluster the rollout was on stays current: it may still be in flight', () => {
    const d = decideRollout({
      targetVersion: T,
      previousCurrentCluster: 'b',
      clusters: [unreachable('a'), unreachable('b'), cluster('c', db('x', 'old'))],
    });
    assert.ok(d.action.kind === 'halt' && d.action.cluster === 'b');
    assert.equal(d.currentCluster, 'b');
  });

  test('the in-flight cluster finishes its step while another cluster is unreachable, then the rollout halts', () => {
    const onA = decideRollout({
      targetVersion: T,
      clusters: [cluster('a', db('x', 'set')), unreachable('b')],
    });
    assert.equal(onA.action.kind, 'wait');
    const afterA = decideRollout({
      targetVersion: T,
      previousCurrentCluster: 'a',
      clusters: [cluster('a', db('x', 'done')), unreachable('b')],
    });
    assert.ok(afterA.action.kind === 'halt' && afterA.action.cluster === 'b');
  });

  test('a cluster that already runs the target counts as done and is skipped', () => {
    const d = decideRollout({
      targetVersion: T,
      clusters: [cluster('a', db('x', 'done')), cluster('b', db('x', 'done')), cluster('c', db('x', 'old'))],
    });
    assert.ok(d.action.kind === 'upgrade' && d.action.cluster === 'c');
  });

  test('a cluster with no selected Databases is UpToDate; no cluster at all is Consistent', () => {
    const empty = decideRollout({ targetVersion: T, clusters: [cluster('a')] });
    assert.deepEqual(states(empty), { a: 'UpToDate' });
    assert.equal(empty.phase, 'Consistent');
    const none = decideRollout({ targetVersion: T, clusters: [] });
    assert.equal(none.phase, 'Consistent');
    assert.match(none.conditions[0]!.message!, /no member cluster is selected/);
  });

  test('only the selected clusters are reported: a cluster that left the selection is gone from the status', () => {
    const d = decideRollout({
      targetVersion: T,
      previousCurrentCluster: 'gone',
      clusters: [cluster('a', db('x', 'old'))],
    });
    assert.deepEqual(
      d.clusters.map((c) => c.name),
      ['a'],
    );
    assert.ok(d.action.kind === 'upgrade' && d.action.cluster === 'a');
  });

  test('paused: no action, the state is still reported', () => {
    const d = decideRollout({
      targetVersion: T,
      paused: true,
      clusters: [cluster('a', db('x', 'old')), cluster('b', db('x', 'old'))],
    });
    assert.deepEqual(d.action, { kind: 'paused' });
    assert.equal(d.phase, 'Paused');
    assert.deepEqual(states(d), { a: 'Pending', b: 'Pending' });
    const consistent = decideRollout({ targetVersion: T, paused: true, clusters: [cluster('a', db('x', 'done'))] });
    assert.equal(consistent.phase, 'Consistent');
  });

  test('the versions seen in a cluster are listed, sorted and distinct', () => {
    const d = decideRollout({
      targetVersion: T,
      clusters: [cluster('a', db('x', 'done'), { ...db('y', 'old'), specVersion: '14' }, db('z', 'old'))],
    });
    assert.deepEqual(d.clusters[0]!.versions, ['14', '15', T]);
  });

  test('the same input gives the same decision whatever the order clusters and Databases come in', () => {
    const clusters = [
      cluster('b', db('y', 'old'), db('x', 'old')),
      cluster('a', db('x', 'done')),
      unreachable('c'),
      cluster('d', db('x', 'old')),
    ];
    const one = decideRollout({ targetVersion: T, clusters });
    const other = decideRollout({
      targetVersion: T,
      clusters: [...clusters].reverse().map((c) => (c.reachable ? { ...c, databases: [...c.databases].reverse() } : c)),
    });
    assert.deepEqual(one, other);
  });
});

// ---- the rollout against a simulated fleet ---------------------------------------------------

interface SimDb {
  specVersion: string;
  generation: number;
  observedGeneration: number;
  degraded: boolean;
  ready: boolean;
  /** Has been Ready on T at least once since T was set: it is past "in flight", whatever happens later. */
  reachedTarget: boolean;
}

interface SimCluster {
  readonly name: string;
  reachable: boolean;
  readonly dbs: SimDb[];
}

type Event =
  | { readonly kind: 'fleet' }
  | { readonly kind: 'reconcile'; readonly cluster: number; readonly db: number }
  | { readonly kind: 'degrade' | 'recover'; readonly cluster: number; readonly db: number }
  | { readonly kind: 'cut'; readonly cluster: number }
  | { readonly kind: 'heal'; readonly cluster: number };

/** The Database reconciler in the model: observes the spec; Ready unless degraded. */
function reconcileDb(d: SimDb): void {
  d.observedGeneration = d.generation;
  d.ready = !d.degraded;
  if (d.ready && d.specVersion === T) d.reachedTarget = true;
}

function observe(c: SimCluster): ObservedCluster {
  if (!c.reachable) return unreachable(c.name);
  return cluster(
    c.name,
    ...c.dbs.map((d, i) => ({
      namespace: 'ns',
      name: `db${i}`,
      generation: d.generation,
      specVersion: d.specVersion,
      observedGeneration: d.observedGeneration,
      phase: d.degraded ? 'Degraded' : d.ready ? 'Ready' : 'Provisioning',
      conditions: [ready(d.ready ? 'True' : 'False')],
    })),
  );
}

/**
 * Clusters with some Database between "version set" and "Ready on it", by the true state
 * (unreachable ones too). A Database that turns Degraded after it was Ready on T does not put its
 * cluster back in flight: the environment did that, not the rollout.
 */
function inFlight(clusters: readonly SimCluster[]): string[] {
  return clusters.filter((c) => c.dbs.some((d) => d.specVersion === T && !d.reachedTarget)).map((c) => c.name);
}

/** Clusters with T set on some Database and not on all: a rollout (someone's) is part way there. */
function partlySet(clusters: readonly SimCluster[]): string[] {
  return clusters
    .filter((c) => c.dbs.some((d) => d.specVersion === T) && c.dbs.some((d) => d.specVersion !== T))
    .map((c) => c.name);
}

class Sim {
  currentCluster: string | undefined;
  readonly upgraded: string[] = [];
  last: RolloutDecision | undefined;

  phase(): string | undefined {
    return this.last?.phase;
  }

  constructor(readonly clusters: SimCluster[]) {}

  fleet(): RolloutDecision {
    const d = decideRollout({
      targetVersion: T,
      clusters: this.clusters.map(observe),
      ...(this.currentCluster ? { previousCurrentCluster: this.currentCluster } : {}),
    });
    const action = d.action;
    if (action.kind === 'upgrade') {
      const target = this.clusters.find((c) => c.name === action.cluster)!;
      assert.ok(target.reachable, 'an unreachable cluster is never written to');
      const others = inFlight(this.clusters).filter((n) => n !== target.name);
      assert.deepEqual(others, [], `version set on ${target.name} while ${others.join(', ')} is in flight`);
      for (const ref of action.databases) {
        const simDb = target.dbs[Number(ref.name.slice(2))]!;
        simDb.specVersion = T;
        simDb.generation++;
      }
      if (this.upgraded.at(-1) !== target.name) this.upgraded.push(target.name);
    }
    this.currentCluster = d.currentCluster;
    this.last = d;
    return d;
  }

  apply(e: Event): void {
    if (e.kind === 'fleet') return void this.fleet();
    const c = this.clusters[e.cluster % this.clusters.length]!;
    if (e.kind === 'cut' || e.kind === 'heal') return void (c.reachable = e.kind === 'heal');
    if (c.dbs.length === 0) return;
    const d = c.dbs[e.db % c.dbs.length]!;
    if (e.kind === 'reconcile') reconcileDb(d);
    else {
      d.degraded = e.kind === 'degrade';
      reconcileDb(d);
    }
  }
}

const arbFleet = fc
  .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/), { minLength: 1, maxLength: 5 })
  .chain((names) =>
    fc.tuple(
      fc.constant(names),
      fc.array(fc.array(fc.constantFrom('15', '14', T), { maxLength: 3 }), {
        minLength: names.length,
        maxLength: names.length,
      }),
    ),
  )
  .map(([names, versions]): SimCluster[] =>
    names.map((name, i) => ({
      name,
      reachable: true,
      dbs: versions[i]!.map((v) => ({
        specVersion: v,
        generation: 1,
        observedGeneration: 1,
        degraded: false,
        ready: true,
        reachedTarget: v === T,
      })),
    })),
  );

const arbEvent: fc.Arbitrary<Event> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'fleet' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('reconcile' as const), cluster: fc.nat(9), db: fc.nat(9) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom('degrade' as const, 'recover' as const),
      cluster: fc.nat(9),
      db: fc.nat(9),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), cluster: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('heal' as const), cluster: fc.nat(9) }) },
);

describe('decideRollout against a simulated fleet (fast-check)', () => {
  test('never more than one cluster between "version set" and "Ready"; clusters are started in name order; it ends Consistent', () => {
    fc.assert(
      fc.property(arbFleet, fc.array(arbEvent, { maxLength: 80 }), (clusters, events) => {
        // A cluster mixing T with other versions is part way through a rollout: start from at most one.
        const sim = new Sim(clusters);
        const initiallyPartial = partlySet(sim.clusters);
        fc.pre(initiallyPartial.length <= 1);
        for (const e of events) {
          sim.apply(e);
          assert.ok(inFlight(sim.clusters).length <= 1, `in flight: ${inFlight(sim.clusters).join(', ')}`);
        }
        // Faults end: every cluster reachable, every Database healthy; the rollout must finish.
        for (const c of sim.clusters) {
          c.reachable = true;
          for (const d of c.dbs) d.degraded = false;
        }
        sim.last = undefined;
        for (let round = 0; round < 2 * sim.clusters.length + 3 && sim.phase() !== 'Consistent'; round++) {
          sim.fleet();
          assert.ok(inFlight(sim.clusters).length <= 1);
          for (const c of sim.clusters) for (const d of c.dbs) reconcileDb(d);
        }
        sim.fleet();
        assert.equal(sim.last!.phase, 'Consistent');
        assert.ok(sim.clusters.every((c) => c.dbs.every((d) => d.specVersion === T)));
        // Started in name order, each cluster once (after the one a rollout had already begun, if any).
        const started = sim.upgraded.filter((n) => !initiallyPartial.includes(n));
        const byName = [...started].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        assert.deepEqual(started, [...new Set(byName)], `upgrade order ${sim.upgraded.join(' → ')}`);
      }),
      { numRuns: 300 },
    );
  });

  test('a halted rollout writes nothing until the Degraded Database recovers', () => {
    fc.assert(
      fc.property(arbFleet, fc.nat(20), (clusters, waits) => {
        const sim = new Sim(clusters);
        fc.pre(partlySet(sim.clusters).length === 0);
        const first = sim.fleet();
        fc.pre(first.action.kind === 'upgrade');
        const on = sim.clusters.find((c) => c.name === first.currentCluster)!;
        on.dbs[0]!.degraded = true;
        reconcileDb(on.dbs[0]!);
        for (let i = 0; i < waits + 1; i++) {
          const d = sim.fleet();
          assert.equal(d.action.kind, 'halt');
          assert.equal(d.currentCluster, on.name);
        }
        on.dbs[0]!.degraded = false;
        for (const d of on.dbs) reconcileDb(d);
        assert.notEqual(sim.fleet().action.kind, 'halt');
      }),
      { numRuns: 200 },
    );
  });
});
