/**
 * The sharding metrics, on the manager's registry:
 * - `sharding_keys_owned{ring,kind}`: objects this replica owns now (computed at scrape time);
 * - `sharding_rebalances_total{ring}`: live-membership changes the sharder rebalanced for;
 * - `sharding_key_moves_total{ring,reason}`: keys the sharder moved (`drained`: handed over by a live
 *   owner; `owner-dead`: taken from a member whose Lease expired);
 * - `sharding_handover_duration_seconds{ring}`: from a drain request to the new assignment;
 * - `sharding_mode{ring,mode}`: 1 for the informer mode in use;
 * - `sharding_unassignable_objects{ring,kind}`: objects the API server refuses to relabel, so no
 *   replica reconciles them (reported by the replica running the sharder; 0 elsewhere).
 */
import type { Counter, Histogram, Registry } from 'prom-client';
import { getOrCreateCounter, getOrCreateHistogram } from '../metrics/get-or-create-metric.js';
import { registerGaugeCollector } from '../metrics/gauge-collector.js';
import type { ResolvedShardingMode } from './sharding-options.js';

export interface ShardingMetrics {
  readonly rebalances: Counter<'ring'>;
  readonly moves: Counter<'ring' | 'reason'>;
  readonly handoverSeconds: Histogram<'ring'>;
}

/** What the scrape-time gauges read. */
export interface ShardingMetricsState {
  readonly ring: string;
  /** undefined until `auto` is resolved. */
  mode(): ResolvedShardingMode | undefined;
  /** Owned key counts by kind. */
  ownedByKind(): ReadonlyMap<string, number>;
  /** Objects the sharder cannot assign, by kind. */
  unassignableByKind?(): ReadonlyMap<string, number>;
}

/** Registers the metrics; returns them and a function that detaches the scrape-time gauges. */
export function registerShardingMetrics(
  registry: Registry,
  state: ShardingMetricsState,
): { metrics: ShardingMetrics; detach: () => void } {
  const detachOwned = registerGaugeCollector(
    registry,
    {
      name: 'sharding_keys_owned',
      help: 'Objects of a sharded primary kind this replica owns now',
      labelNames: ['ring', 'kind'] as const,
    },
    (g) => {
      for (const [kind, n] of state.ownedByKind()) g.inc({ ring: state.ring, kind }, n);
    },
  );
  const detachMode = registerGaugeCollector(
    registry,
    { name: 'sharding_mode', help: 'The informer mode of sharding in use (1)', labelNames: ['ring', 'mode'] as const },
    (g) => {
      const mode = state.mode();
      if (mode) g.inc({ ring: state.ring, mode }, 1);
    },
  );
  const detachUnassignable = registerGaugeCollector(
    registry,
    {
      name: 'sharding_unassignable_objects',
      help: 'Objects of a sharded primary kind the API server refuses to relabel, so that no replica reconciles them',
      labelNames: ['ring', 'kind'] as const,
    },
    (g) => {
      for (const [kind, n] of state.unassignableByKind?.() ?? []) g.inc({ ring: state.ring, kind }, n);
    },
  );
  const metrics: ShardingMetrics = {
    rebalances: getOrCreateCounter(registry, {
      name: 'sharding_rebalances_total',
      help: 'Changes of the live members the sharder rebalanced for',
      labelNames: ['ring'] as const,
    }),
    moves: getOrCreateCounter(registry, {
      name: 'sharding_key_moves_total',
      help: 'Keys the sharder moved from one member to another',
      labelNames: ['ring', 'reason'] as const,
    }),
    handoverSeconds: getOrCreateHistogram(registry, {
      name: 'sharding_handover_duration_seconds',
      help: 'Time from a drain request to the assignment of the new owner',
      labelNames: ['ring'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    }),
  };
  return {
    metrics,
    detach: () => {
      detachOwned();
      detachMode();
      detachUnassignable();
    },
  };
}
