/**
 * A cluster provider a test drives by hand: members join and leave when the test says, with no
 * host Secrets or files in between, so a test times a member's engagement to the millisecond.
 */
import type { ClusterEvents, ClusterProvider, MemberCluster } from '../cluster-provider.js';

export interface ManualClusters {
  readonly provider: ClusterProvider;
  /** Engages `cluster` now (or when the provider starts, if it has not yet). */
  engage(cluster: MemberCluster): void;
  /** Disengages `name`; resolves once the fleet says its reconciles have ended and its caches stopped. */
  disengage(name: string): Promise<void>;
}

export function manualClusters(): ManualClusters {
  let events: ClusterEvents | undefined;
  const early = new Map<string, MemberCluster>();
  return {
    provider: {
      description: 'manual (test)',
      async start(signal, e) {
        if (signal.aborted) return;
        events = e;
        for (const cluster of early.values()) e.engage(cluster);
        early.clear();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        events = undefined;
      },
    },
    engage(cluster) {
      if (events) events.engage(cluster);
      else early.set(cluster.name, cluster);
    },
    async disengage(name) {
      early.delete(name);
      await events?.disengage(name);
    },
  };
}
