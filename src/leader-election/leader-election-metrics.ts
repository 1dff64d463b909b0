import type { Registry } from 'prom-client';
import { registerCounterCollector } from '../metrics/counter-collector.js';
import { registerGaugeCollector } from '../metrics/gauge-collector.js';

/** What the metrics read from an elector at scrape time. */
export interface LeaderElectionState {
  isLeader(): boolean;
  /** Renews that needed a full get + update after the cached write conflicted. */
  slowPathRenews(): number;
}

/**
 * client-go's `leader_election_master_status{name}` and a slow-path counter, on the caller's
 * registry, computed at scrape time. Several electors may share a registry: each adds its own
 * value, so a series still reads 1/0 for the one Lease it names. Returns a function that detaches them.
 * @internal Used by `LeaderElector`.
 */
export function registerLeaderElectionMetrics(
  registry: Registry,
  name: string,
  state: LeaderElectionState,
): () => void {
  const labelNames = ['name'] as const;
  const detachGauge = registerGaugeCollector(
    registry,
    {
      name: 'leader_election_master_status',
      help: 'Whether this process is the leader of the named Lease (1) or not (0)',
      labelNames,
    },
    (g) => g.inc({ name }, state.isLeader() ? 1 : 0),
  );
  const detachCounter = registerCounterCollector(
    registry,
    {
      name: 'leader_election_slowpath_total',
      help: 'Lease renews that conflicted and needed a full get and update',
      labelNames,
    },
    (c) => c.inc({ name }, state.slowPathRenews()),
  );
  return () => {
    detachGauge();
    detachCounter();
  };
}
