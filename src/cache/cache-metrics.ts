/**
 * The cache's metrics on a registry passed in (never prom-client's global one). Series carry the
 * informer's name, so several informers (and several managers, each with its own registry) coexist.
 */
import type { Counter, Gauge, Registry } from 'prom-client';
import { registerCounterCollector } from '../metrics/counter-collector.js';
import { registerGaugeCollector } from '../metrics/gauge-collector.js';
import { getOrCreateCounter, getOrCreateGauge } from '../metrics/get-or-create-metric.js';

export type WatcherRestartReason = 'gone' | 'stalled' | 'closed_early' | 'error';

export class CacheMetrics {
  private readonly restarts: Counter<'informer' | 'reason'>;
  private readonly relists: Counter<'informer'>;
  private readonly synced: Gauge<'informer'>;
  private readonly state: Gauge<'informer' | 'state'>;
  private readonly invalid: Counter<'informer' | 'source'>;

  constructor(private readonly registry: Registry) {
    this.restarts = getOrCreateCounter(registry, {
      name: 'cache_watch_restarts_total',
      help: 'Lists or watches that failed and were resumed, by reason',
      labelNames: ['informer', 'reason'],
    });
    this.relists = getOrCreateCounter(registry, {
      name: 'cache_lists_total',
      help: 'Full lists started (the first one included)',
      labelNames: ['informer'],
    });
    this.synced = getOrCreateGauge(registry, {
      name: 'cache_synced',
      help: '1 once the first list has been stored',
      labelNames: ['informer'],
    });
    this.state = getOrCreateGauge(registry, {
      name: 'cache_watcher_state',
      help: '1 for the state the watcher is in',
      labelNames: ['informer', 'state'],
    });
    this.invalid = getOrCreateCounter(registry, {
      name: 'cache_invalid_objects_total',
      help: 'Objects from the API server left out of the cache because they could not be stored (not an object, no name, bad namespace, transform threw), by source (list or watch)',
      labelNames: ['informer', 'source'],
    });
  }

  forInformer(informer: string): InformerMetrics {
    const perEvent = this.perEventSeries(informer);
    return {
      event: (type) => perEvent.events.set(type, (perEvent.events.get(type) ?? 0) + 1),
      restart: (reason) => this.restarts.inc({ informer, reason }),
      list: () => this.relists.inc({ informer }),
      setSynced: (synced) => this.synced.set({ informer }, synced ? 1 : 0),
      setState: (from, to) => {
        if (from) this.state.set({ informer, state: from }, 0);
        this.state.set({ informer, state: to }, 1);
      },
      setLastEventAt: (ms) => (perEvent.lastEventAtMs = ms),
      setObjects: (n) => (perEvent.objects = n),
      setPending: (handler, n) => perEvent.pending.set(handler, n),
      invalidObject: (source) => this.invalid.inc({ informer, source }),
      collectBytesPerObject: (estimate) =>
        registerGaugeCollector(
          this.registry,
          {
            name: 'cache_estimated_bytes_per_object',
            help: 'Estimated heap bytes per cached object, from a sample of the store under a V8 cost model (no series while the store is empty); times cache_objects, the heap the cache holds',
            labelNames: ['informer'],
          },
          (gauge) => {
            const bytes = estimate();
            if (bytes !== undefined) gauge.set({ informer }, bytes);
          },
        ),
    };
  }

  /**
   * The series written on every watch event (and twice per handler call), kept in plain numbers
   * and exported at scrape time, as the workqueue's metrics are: prom-client hashes the labels on
   * each `inc`/`set`, five times per event. A series appears once first written, as before. One set
   * per informer name and registry, shared like prom-client's labelled series were: an informer
   * started again under the same name (a member re-engaged) counts on.
   */
  private perEventSeries(informer: string): PerEventSeries {
    let byInformer = perEventSeriesByRegistry.get(this.registry);
    if (!byInformer) perEventSeriesByRegistry.set(this.registry, (byInformer = new Map()));
    const existing = byInformer.get(informer);
    if (existing) return existing.series;
    const series: PerEventSeries = {
      events: new Map(),
      lastEventAtMs: undefined,
      objects: undefined,
      pending: new Map(),
    };
    const detach = [
      registerCounterCollector(
        this.registry,
        {
          name: 'cache_watch_events_total',
          help: 'Watch events received, by type (bookmarks included)',
          labelNames: ['informer', 'type'],
        },
        (c) => {
          for (const [type, n] of series.events) c.inc({ informer, type }, n);
        },
      ),
      registerGaugeCollector(
        this.registry,
        {
          name: 'cache_last_event_timestamp_seconds',
          help: 'When the watcher last received anything (bookmarks included)',
          labelNames: ['informer'],
        },
        (g) => {
          if (series.lastEventAtMs !== undefined) g.set({ informer }, series.lastEventAtMs / 1000);
        },
      ),
      registerGaugeCollector(
        this.registry,
        { name: 'cache_objects', help: 'Objects held in the store', labelNames: ['informer'] },
        (g) => {
          if (series.objects !== undefined) g.set({ informer }, series.objects);
        },
      ),
      registerGaugeCollector(
        this.registry,
        {
          name: 'cache_handler_pending_keys',
          help: 'Keys with changes not yet delivered to a handler',
          labelNames: ['informer', 'handler'],
        },
        (g) => {
          for (const [handler, n] of series.pending) g.set({ informer, handler }, n);
        },
      ),
    ];
    byInformer.set(informer, { series, detach });
    return series;
  }
}

/** Each registry's per-event series, by informer name (see `perEventSeries`). */
const perEventSeriesByRegistry = new WeakMap<
  Registry,
  Map<string, { readonly series: PerEventSeries; readonly detach: readonly (() => void)[] }>
>();

/**
 * Drops every series of the informers named in `informers` from `registry`: their per-event series
 * (they vanish at the next scrape) and every counter or gauge series whose `informer` label is one
 * of those names exactly, as a member cluster that left takes its informers' series with it. Exact
 * names, never a prefix: a member named `apps` must not take the host's `apps/v1 Deployment` along.
 */
export async function forgetInformerSeries(registry: Registry, informers: Iterable<string>): Promise<void> {
  const names = new Set(informers);
  if (names.size === 0) return;
  const byInformer = perEventSeriesByRegistry.get(registry);
  for (const informer of names) {
    const entry = byInformer?.get(informer);
    if (!entry) continue;
    for (const d of entry.detach) d();
    byInformer!.delete(informer);
  }
  // Every metric the registry holds is a prom-client metric: get() and remove() are there at run time.
  for (const metric of registry.getMetricsAsArray() as unknown as Counter<string>[]) {
    const data = await metric.get();
    // Histograms and summaries carry per-bucket labels; the cache labels none of them by informer.
    // (prom-client's typings say an enum; at run time `type` is the exposition's word.)
    const type = data.type as unknown as string;
    if (type !== 'counter' && type !== 'gauge') continue;
    for (const { labels } of data.values) {
      const informer = labels['informer'];
      if (typeof informer === 'string' && names.has(informer)) metric.remove(labels as Record<string, string | number>);
    }
  }
}

interface PerEventSeries {
  readonly events: Map<string, number>;
  lastEventAtMs: number | undefined;
  objects: number | undefined;
  readonly pending: Map<string, number>;
}

/** The metrics one informer writes; a no-op implementation stands in when no registry is given. */
export interface InformerMetrics {
  event(type: string): void;
  restart(reason: WatcherRestartReason): void;
  list(): void;
  setSynced(synced: boolean): void;
  setState(from: string | undefined, to: string): void;
  setLastEventAt(ms: number): void;
  setObjects(n: number): void;
  setPending(handler: string, n: number): void;
  /** An object left out of the store as invalid. */
  invalidObject(source: 'list' | 'watch'): void;
  /**
   * Reports `estimate()` (bytes per cached object, undefined while empty) at every scrape, until
   * the returned function detaches it.
   */
  collectBytesPerObject(estimate: () => number | undefined): () => void;
}

export const noopInformerMetrics: InformerMetrics = {
  event: () => {},
  restart: () => {},
  list: () => {},
  setSynced: () => {},
  setState: () => {},
  setLastEventAt: () => {},
  setObjects: () => {},
  setPending: () => {},
  invalidObject: () => {},
  collectBytesPerObject: () => () => {},
};

/** Metrics for `informer` on `registry`, or the no-op set. */
export function informerMetrics(registry: Registry | undefined, informer: string): InformerMetrics {
  return registry ? new CacheMetrics(registry).forInformer(informer) : noopInformerMetrics;
}
