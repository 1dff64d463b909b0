import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DatabaseFleetStatus } from './database-fleet.js';
import { rolloutEvents } from './fleet-rollout-events.js';
import { decideRollout, type ObservedDatabase } from './fleet-rollout.js';

const TIME = '2026-01-01T00:00:00Z';
const ready = (v: string, degraded = false): ObservedDatabase => ({
  namespace: 'ns',
  name: 'db',
  generation: 2,
  specVersion: v,
  observedGeneration: 2,
  phase: degraded ? 'Degraded' : 'Ready',
  conditions: [
    { type: 'Ready', status: degraded ? 'False' : 'True', reason: 'R', message: '', lastTransitionTime: TIME },
  ],
});
const reasons = (previous: DatabaseFleetStatus | undefined, d: ReturnType<typeof decideRollout>, target = '16') =>
  rolloutEvents(previous, d, target).map((e) => `${e.type}/${e.reason}`);

test('a decision that repeats the status found records nothing', () => {
  const d = decideRollout({
    targetVersion: '16',
    clusters: [{ name: 'a', reachable: true, databases: [ready('16', true)] }],
  });
  const status: DatabaseFleetStatus = {
    phase: d.phase,
    targetVersion: '16',
    currentCluster: 'a',
    clusters: d.clusters.map((c) => ({ ...c, versions: [...c.versions] })),
  };
  assert.deepEqual(reasons(status, d), []);
});

test('a fleet found Consistent on the version records nothing; one that becomes Consistent without a rollout neither', () => {
  const d = decideRollout({
    targetVersion: '16',
    clusters: [{ name: 'a', reachable: true, databases: [ready('16')] }],
  });
  assert.deepEqual(reasons({ phase: 'Consistent', targetVersion: '16', clusters: [] }, d), []);
  assert.deepEqual(reasons(undefined, d), [], 'a new fleet over clusters already on 16: nothing was rolled out');
});

test('a changed target while a rollout is under way starts a new rollout, not a resumption', () => {
  const d = decideRollout({
    targetVersion: '16.1',
    clusters: [{ name: 'a', reachable: true, databases: [ready('16')] }],
  });
  assert.deepEqual(reasons({ phase: 'Halted', targetVersion: '16', currentCluster: 'a', clusters: [] }, d, '16.1'), [
    'Normal/RolloutStarted',
    'Normal/ClusterUpgradeStarted',
  ]);
});

test('halting at another cluster than the one halted at is said again, as a Warning', () => {
  const d = decideRollout({ targetVersion: '16', clusters: [{ name: 'b', reachable: false, message: 'cut off' }] });
  assert.deepEqual(reasons({ phase: 'Halted', targetVersion: '16', currentCluster: 'a', clusters: [] }, d), [
    'Warning/RolloutHalted',
  ]);
  assert.deepEqual(reasons({ phase: 'Halted', targetVersion: '16', currentCluster: 'b', clusters: [] }, d), []);
});
