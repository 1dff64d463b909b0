/**
 * The fleet scenarios' workload: Widgets in every member cluster under spec churn, and a fleet
 * controller that writes `status.observedGeneration` (with the resourceVersion it read) in the
 * member the request names. Latency is measured per spec write: from the churn's write of
 * generation g until the status write that observed g or later, both clocks in this process.
 */
import { isConflict, type Client } from 'operator-runtime';
import type { FleetReconcileContext, FleetRequest } from 'operator-runtime/fleet';
import { registryKey, type RecordedWrite } from 'operator-runtime/testing/chaos';
import { WIDGET, WIDGET_PREFIX, type Widget } from './toy-widget-operator.js';

/** Per member: status writes for the audit, and when each generation was written and observed. */
export class FleetWidgetRecords {
  readonly writes = new Map<string, RecordedWrite[]>();
  private readonly specs: { cluster: string; name: string; generation: number; atMs: number }[] = [];
  /** `cluster/name` → the status writes, in order: generation observed and when. */
  private readonly statuses = new Map<string, { generation: number; atMs: number }[]>();
  reconciles = 0;
  conflicts = 0;

  /** `atMs`: taken before the write was sent, so a reconcile can never seem to come first. */
  specWritten(cluster: string, name: string, generation: number, atMs: number): void {
    this.specs.push({ cluster, name, generation, atMs });
  }

  statusWritten(cluster: string, name: string, generation: number, write: RecordedWrite, atMs: number): void {
    const list = this.writes.get(cluster) ?? [];
    list.push(write);
    this.writes.set(cluster, list);
    const key = `${cluster}/${name}`;
    const seen = this.statuses.get(key) ?? [];
    seen.push({ generation, atMs });
    this.statuses.set(key, seen);
  }

  /**
   * Latency (ms) of every spec write to `cluster` sent in [fromMs, toMs): until the first status
   * write observing that generation or a later one; writes never observed are counted in `unobserved`.
   */
  latencies(cluster: string, fromMs = 0, toMs = Infinity): { readonly ms: number[]; readonly unobserved: number } {
    const ms: number[] = [];
    let unobserved = 0;
    for (const s of this.specs) {
      if (s.cluster !== cluster || s.atMs < fromMs || s.atMs >= toMs) continue;
      const hit = (this.statuses.get(`${cluster}/${s.name}`) ?? []).find(
        (w) => w.generation >= s.generation && w.atMs >= s.atMs,
      );
      if (hit) ms.push(hit.atMs - s.atMs);
      else unobserved++;
    }
    return { ms, unobserved };
  }
}

/** The fleet controller's reconcile: observedGeneration from the request's member, preconditioned. */
export function fleetWidgetReconciler(records: FleetWidgetRecords, namespace: string) {
  return async (request: FleetRequest, ctx: FleetReconcileContext<Widget>): Promise<void> => {
    records.reconciles++;
    const w = await ctx.get();
    if (!w || w.status?.observedGeneration === w.metadata.generation) return;
    const next: Widget = {
      ...w,
      status: { observedGeneration: w.metadata.generation, message: `size ${w.spec.size}` },
    };
    try {
      const written = await ctx.cluster.apiClient.update(next, { subresource: 'status', signal: ctx.signal });
      records.statusWritten(
        request.cluster,
        w.metadata.name,
        w.metadata.generation,
        {
          key: registryKey(WIDGET_PREFIX, namespace, w.metadata.name),
          readRevision: w.metadata.resourceVersion,
          writtenRevision: written.metadata.resourceVersion,
          writer: `fleet/${request.cluster}`,
        },
        Date.now(),
      );
    } catch (err) {
      // A 409: the cache was behind; the queue's backoff re-reads. Never retried without the precondition.
      if (isConflict(err)) records.conflicts++;
      throw err;
    }
  };
}

/**
 * A user changing one member's specs every `periodMs`, round robin, recording each generation
 * written. Every write changes the size (2…10, the CRD's range, a new one each round), so every
 * write bumps the generation.
 */
export async function churnMember(options: {
  readonly cluster: string;
  readonly client: Client;
  readonly namespace: string;
  readonly names: readonly string[];
  readonly periodMs: number;
  readonly records: FleetWidgetRecords;
  readonly signal: AbortSignal;
}): Promise<{ ok: number; failed: number }> {
  const { client, namespace, names, records, signal } = options;
  let ok = 0;
  let failed = 0;
  for (let i = 0; !signal.aborted; i++) {
    const name = names[i % names.length]!;
    try {
      const sentAt = Date.now();
      const written = await client.patch<Widget>(
        WIDGET,
        name,
        { spec: { size: (Math.floor(i / names.length) % 9) + 2 } },
        {
          type: 'merge',
          namespace,
          signal,
        },
      );
      records.specWritten(options.cluster, name, written.metadata.generation, sentAt);
      ok++;
    } catch {
      if (signal.aborted) break;
      failed++;
    }
    await new Promise((r) => setTimeout(r, options.periodMs));
  }
  return { ok, failed };
}

/** The p-th percentile (0–100) of `values`, nearest rank; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
