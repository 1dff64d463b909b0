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

/**
 * Why a member was refused: `name_taken`, another source already holds its cluster name;
 * `max_clusters`, the fleet holds `maxClusters` members already.
 */
export type RefusalReason = 'name_taken' | 'max_clusters';

/**
 * Counts a refused member on `fleet_provider_refused_total{provider,reason}`: `provider` is the
 * provider's kind (`kubeconfig-secrets`, `kubeconfig-directory`) or `fleet` for the fleet's own
 * cap. Both labels come from short fixed lists — never a Secret's, a file's or a cluster's name,
 * which anyone who may create a Secret could multiply without bound; the log line and the Event name them.
 */
export function countRefusal(registry: Registry | undefined, provider: string, reason: RefusalReason): void {
  if (!registry) return;
  getOrCreateCounter(registry, {
    name: 'fleet_provider_refused_total',
    help: "Members refused: a cluster name another source already holds, or beyond the fleet's maxClusters",
    labelNames: ['provider', 'reason'],
  }).inc({ provider, reason });
}

export class FleetMetrics {
  private readonly reconciles: Counter<'controller' | 'cluster' | 'result'>;
  private readonly detach: (() => void)[] = [];
  /** Per cluster, the label sets of `fleet_reconciles_total` written for it (bounded: controllers × results). */
  private readonly reconcileSeries = new Map<
    string,
    Map<string, { readonly controller: string; readonly cluster: string; readonly result: string }>
  >();

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
    const labels = { controller, cluster, result };
    // Remembered so the cluster's series can be removed by what was written (see removeCluster).
    let written = this.reconcileSeries.get(cluster);
    if (!written) this.reconcileSeries.set(cluster, (written = new Map()));
    const key = `${controller}\u0000${result}`;
    if (!written.has(key)) written.set(key, labels);
    this.reconciles.inc(labels);
  }

  /**
   * Removes the series `cluster`'s engagement created: the cache's of its informers (`informers`,
   * their exact names) and the fleet's own labelled with it, as they were written. By identity,
   * never by prefix or label value across the registry: a member named `apps` must not remove the
   * host's `apps/v1 Deployment` series, nor a user's own series labelled `cluster="apps"`. Call once
   * its informers stopped.
   */
  async removeCluster(cluster: string, informers: readonly string[]): Promise<void> {
    await forgetInformerSeries(this.registry, informers);
    for (const labels of this.reconcileSeries.get(cluster)?.values() ?? []) this.reconciles.remove(labels);
    this.reconcileSeries.delete(cluster);
  }

  /** Detaches the scrape-time gauges (the fleet stopped). */
  close(): void {
    for (const d of this.detach.splice(0)) d();
  }
}
