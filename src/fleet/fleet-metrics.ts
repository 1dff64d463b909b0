/**
 * The fleet's metrics, and the removal of a member's series when it leaves: a cluster that comes
 * and goes must not leave series behind (a label per departed cluster would grow without bound).
 */
import type { Counter, Registry } from 'prom-client';
import { registerGaugeCollector } from '../metrics/gauge-collector.js';
import { getOrCreateCounter } from '../metrics/get-or-create-metric.js';
import { forgetInformerSeries } from '../cache/cache-metrics.js';

export type FleetReconcileResult = 'success' | 'requeue_after' | 'error' | 'terminal_error';

/** Each cluster's state as the `fleet_clusters` gauge and the `/readyz` check see it. */
export type ClusterState = 'connecting' | 'syncing' | 'ready' | 'unhealthy';

const CLUSTER_STATES: readonly ClusterState[] = ['connecting', 'syncing', 'ready', 'unhealthy'];

export class FleetMetrics {
  private readonly reconciles: Counter<'controller' | 'cluster' | 'result'>;
  private readonly detach: (() => void)[] = [];

  constructor(
    private readonly registry: Registry,
    clusters: () => readonly { readonly name: string; readonly state: ClusterState; readonly synced: boolean }[],
  ) {
    this.reconciles = getOrCreateCounter(registry, {
      name: 'fleet_reconciles_total',
      help: 'Reconciles of fleet controllers, by member cluster and result',
      labelNames: ['controller', 'cluster', 'result'],
    });
    this.detach.push(
      registerGaugeCollector<'state'>(
        registry,
        { name: 'fleet_clusters', help: 'Engaged member clusters, by state', labelNames: ['state'] },
        (gauge) => {
          const all = clusters();
          for (const state of CLUSTER_STATES) gauge.set({ state }, all.filter((c) => c.state === state).length);
        },
      ),
      registerGaugeCollector<'cluster'>(
        registry,
        {
          name: 'fleet_cluster_synced',
          help: '1 once every informer of the member cluster has synced since it was engaged',
          labelNames: ['cluster'],
        },
        (gauge) => {
          for (const c of clusters()) gauge.set({ cluster: c.name }, c.synced ? 1 : 0);
        },
      ),
    );
  }

  reconciled(controller: string, cluster: string, result: FleetReconcileResult): void {
    this.reconciles.inc({ controller, cluster, result });
  }

  /**
   * Removes every series of `cluster` from the registry: those labelled `cluster` with it, and the
   * cache's, whose `informer` label starts with `<cluster>/`. Call once its informers stopped.
   */
  async removeCluster(cluster: string): Promise<void> {
    const prefix = `${cluster}/`;
    forgetInformerSeries(this.registry, (informer) => informer.startsWith(prefix));
    // Every metric the registry holds is a prom-client metric: get() and remove() are there at run time.
    for (const metric of this.registry.getMetricsAsArray() as unknown as Counter<string>[]) {
      const data = await metric.get();
      // Histograms and summaries carry per-bucket labels; the fleet and the cache label none of theirs by cluster.
      // (prom-client's typings say an enum; at run time `type` is the exposition's word.)
      const type = data.type as unknown as string;
      if (type !== 'counter' && type !== 'gauge') continue;
      for (const { labels } of data.values) {
        const informer = labels['informer'];
        if (labels['cluster'] === cluster || (typeof informer === 'string' && informer.startsWith(prefix))) {
          metric.remove(labels as Record<string, string | number>);
        }
      }
    }
  }

  /** Detaches the scrape-time gauges (the fleet stopped). */
  close(): void {
    for (const d of this.detach.splice(0)) d();
  }
}
