/**
 * The Events a DatabaseFleet reconcile records: what changed between the status it found and the
 * decision it took (fleet-rollout.ts), each with the cluster and why. Pure, so a repeated reconcile
 * that changes nothing records nothing.
 */
import type { EventType } from 'operator-runtime';
import type { DatabaseFleetStatus } from './database-fleet.js';
import type { RolloutDecision } from './fleet-rollout.js';

export type FleetEventReason =
  | 'RolloutStarted'
  | 'ClusterUpgradeStarted'
  | 'ClusterUpgraded'
  | 'RolloutHalted'
  | 'RolloutResumed'
  | 'RolloutComplete';

export interface FleetEvent {
  readonly type: EventType;
  readonly reason: FleetEventReason;
  readonly message: string;
}

/** `previous` is the status as read (undefined for a new fleet); `targetVersion` is spec.version. */
export function rolloutEvents(
  previous: DatabaseFleetStatus | undefined,
  decision: RolloutDecision,
  targetVersion: string,
): FleetEvent[] {
  const events: FleetEvent[] = [];
  const sameTarget = previous?.targetVersion === targetVersion;
  const wasRolling = sameTarget && (previous?.phase === 'RollingOut' || previous?.phase === 'Halted');
  const before = new Map((sameTarget ? (previous?.clusters ?? []) : []).map((c) => [c.name, c.state]));
  const { action } = decision;

  for (const c of decision.clusters) {
    const was = before.get(c.name);
    if (c.state === 'UpToDate' && (was === 'Upgrading' || was === 'Degraded'))
      events.push({
        type: 'Normal',
        reason: 'ClusterUpgraded',
        message: `cluster ${c.name}: ${c.databases} Databases Ready on ${targetVersion}`,
      });
  }
  if (
    previous?.phase === 'Halted' &&
    sameTarget &&
    (decision.phase === 'RollingOut' || decision.phase === 'Consistent')
  )
    events.push({
      type: 'Normal',
      reason: 'RolloutResumed',
      message: `cluster ${previous.currentCluster ?? '?'} recovered; the rollout of ${targetVersion} goes on`,
    });
  if (action.kind === 'upgrade') {
    const pending = decision.clusters.filter((c) => c.state !== 'UpToDate').length;
    if (!wasRolling)
      events.push({
        type: 'Normal',
        reason: 'RolloutStarted',
        message: `rolling ${targetVersion} out to ${pending} of ${decision.clusters.length} clusters, one at a time, starting with ${action.cluster}`,
      });
    events.push({
      type: 'Normal',
      reason: 'ClusterUpgradeStarted',
      message: `cluster ${action.cluster}: spec.version set to ${targetVersion} on ${action.databases.length} Databases (${action.databases
        .slice(0, 5)
        .map((d) => `${d.namespace}/${d.name}`)
        .join(', ')}${action.databases.length > 5 ? ', …' : ''})`,
    });
  }
  if (
    action.kind === 'halt' &&
    !(sameTarget && previous?.phase === 'Halted' && previous.currentCluster === action.cluster)
  )
    events.push({
      type: 'Warning',
      reason: 'RolloutHalted',
      message: `halted at cluster ${action.cluster}: ${action.message}; no other cluster is touched until it recovers`,
    });
  if (decision.phase === 'Consistent' && wasRolling)
    events.push({
      type: 'Normal',
      reason: 'RolloutComplete',
      message: `every selected cluster (${decision.clusters.length}) runs ${targetVersion}`,
    });
  return events;
}
