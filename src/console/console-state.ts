/**
 * console: the operator console's data. One `ConsoleState` per manager gathers what a person
 * debugging an operator wants to look at — controllers (queue, workers, rate, latency, recent
 * reconciles, failing keys, backoff), informer health, member clusters of a fleet, leadership and
 * recorded Events — into one JSON snapshot, in bounded memory. Credentials are redacted when recorded, not when shown.
 */
import type { InformerHealth } from '../cache/informer.js';
import type { RecordedEvent } from '../controller/event-recorder.js';
import { realClock, type Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { ControllerView, type ControllerSnapshot } from './controller-view.js';
import { FixedRing } from './fixed-ring.js';
import {
  ObjectHistory,
  type ObjectHistoryOptions,
  type ObjectHistoryStats,
  type ObjectTimeline,
} from './object-history.js';
import { ReconcileWrites } from './reconcile-writes.js';
import { redactMessage } from './redact-message.js';
import type { ReconcileWindowOptions } from './reconcile-window.js';

/** Reconciles kept per controller. @defaultValue 50 */
export const DEFAULT_RECENT_RECONCILES = 50;
/** Events kept. @defaultValue 100 */
export const DEFAULT_RECENT_EVENTS = 100;
/** Failing keys remembered per controller (the oldest failure is forgotten first). @defaultValue 1000 */
export const DEFAULT_MAX_FAILING_KEYS = 1000;
/** Rows per list in a snapshot (failing keys, keys in backoff). @defaultValue 100 */
export const DEFAULT_LIST_LIMIT = 100;

/** What the console reads from leader election (a `LeaderElector` fits). */
export interface LeaderView {
  isLeader(): boolean;
  getLeader?(): string | undefined;
  readonly identity?: string;
}

/**
 * What the console reads of one member cluster of a fleet (the fleet's `health()` entries fit). The
 * console module sits below the fleet, so it names only the fields it shows: never a kubeconfig.
 */
export interface ClusterHealthView {
  readonly name: string;
  readonly state: string;
  readonly synced: boolean;
  readonly connectFailures: number;
  readonly informers: readonly InformerHealth[];
}

export interface ConsoleStateOptions extends ReconcileWindowOptions {
  readonly clock?: Clock;
  /** Informer health, read at each snapshot (the manager's `informers.health()`). */
  readonly informers?: () => readonly InformerHealth[];
  /** Member clusters of a fleet, read at each snapshot (the manager's `fleet.health()`); their informers join `informers`. */
  readonly clusters?: () => readonly ClusterHealthView[];
  readonly leaderElection?: LeaderView;
  /** @defaultValue {@link DEFAULT_RECENT_RECONCILES} */
  readonly recentReconciles?: number;
  /** @defaultValue {@link DEFAULT_RECENT_EVENTS} */
  readonly recentEvents?: number;
  /** @defaultValue {@link DEFAULT_MAX_FAILING_KEYS} */
  readonly maxFailingKeys?: number;
  /** @defaultValue {@link DEFAULT_LIST_LIMIT} */
  readonly listLimit?: number;
  /**
   * The per-object history (each object's last reconciles with their triggers and writes, at
   * `api/history`); `false` turns it off. @defaultValue on, with the `ObjectHistoryOptions` defaults
   */
  readonly history?: ObjectHistoryOptions | false;
}

export interface InformerSnapshot {
  readonly name: string;
  readonly state: string;
  readonly synced: boolean;
  readonly objects: number;
  /** Estimated heap bytes per cached object (the informer's sampled estimate); undefined while empty. */
  readonly estimatedBytesPerObject: number | undefined;
  /** `objects` × `estimatedBytesPerObject`: about the heap this informer's cache holds. */
  readonly estimatedBytes: number | undefined;
  readonly lastEventAtMs: number | undefined;
  readonly lastSyncAtMs: number | undefined;
  /** Full lists after the first one. */
  readonly relists: number;
  readonly restarts: number;
  readonly stalls: number;
  readonly consecutiveFailures: number;
  readonly lastError: { readonly message: string; readonly atMs: number } | undefined;
  readonly pendingKeys: number;
}

/** One member cluster of a fleet, as the console shows it. */
export interface ClusterSnapshot {
  readonly name: string;
  /** The fleet's state for it: `connecting`, `syncing`, `ready` or `unhealthy`. */
  readonly state: string;
  readonly synced: boolean;
  readonly connectFailures: number;
  readonly informers: number;
  readonly objects: number;
  /** Sum of its informers' estimated cache heap; undefined while every cache is empty. */
  readonly estimatedBytes: number | undefined;
}

/** A recorded event; repeats in a row of the same one are folded into `count` (as the recorder does). */
export interface EventSnapshot extends RecordedEvent {
  readonly count: number;
}

export interface ConsoleSnapshot {
  readonly generatedAtMs: number;
  readonly leader: {
    readonly enabled: boolean;
    readonly identity: string | undefined;
    readonly isLeader: boolean;
    readonly holder: string | undefined;
  };
  readonly controllers: readonly ControllerSnapshot[];
  /** The host's informers, then every member cluster's (named `<cluster>/<kind>`). */
  readonly informers: readonly InformerSnapshot[];
  /** Member clusters of a fleet, by name; empty without one. */
  readonly clusters: readonly ClusterSnapshot[];
  readonly events: readonly EventSnapshot[];
  /** What the per-object history holds now; undefined when it is off. */
  readonly history?: ObjectHistoryStats;
}

export class ConsoleState {
  private readonly clock: Clock;
  private readonly controllers = new Map<string, ControllerView>();
  private readonly events: FixedRing<EventSnapshot>;
  private readonly options: ConsoleStateOptions;
  private readonly history: ObjectHistory | undefined;
  /** Where the manager's write-observing client records the writes of the reconcile in progress. */
  readonly writes = new ReconcileWrites();

  constructor(options: ConsoleStateOptions = {}) {
    for (const name of ['recentReconciles', 'recentEvents', 'maxFailingKeys', 'listLimit'] as const) {
      const value = options[name];
      if (value !== undefined && !(Number.isInteger(value) && value >= 1))
        throw new InvalidOptionError(name, 'must be an integer >= 1');
    }
    this.options = options;
    this.clock = options.clock ?? realClock;
    this.events = new FixedRing(options.recentEvents ?? DEFAULT_RECENT_EVENTS);
    this.history = options.history === false ? undefined : new ObjectHistory(options.history ?? {});
  }

  /** One object's remembered reconciles, newest first (`api/history`); undefined when none is remembered. */
  timeline(controller: string, key: string): ObjectTimeline | undefined {
    return this.history?.timeline(controller, key);
  }

  /** The view a controller feeds; give it to the controller as its `observer`, then `attach` its queue. */
  trackController(name: string): ControllerView {
    if (this.controllers.has(name)) throw new InvalidOptionError('name', `controller ${name} is already tracked`);
    const view = new ControllerView(name, this.clock, {
      ...this.options,
      recentReconciles: this.options.recentReconciles ?? DEFAULT_RECENT_RECONCILES,
      maxFailingKeys: this.options.maxFailingKeys ?? DEFAULT_MAX_FAILING_KEYS,
      listLimit: this.options.listLimit ?? DEFAULT_LIST_LIMIT,
      history: this.history ? { store: this.history, writes: this.writes } : undefined,
    });
    this.controllers.set(name, view);
    return view;
  }

  /** An EventRecorder's `onRecorded` hook. */
  recordEvent(event: RecordedEvent): void {
    const message = redactMessage(event.message);
    const last = this.events.newest();
    const o = event.involvedObject;
    if (
      last &&
      last.type === event.type &&
      last.reason === event.reason &&
      last.message === message &&
      last.involvedObject.kind === o.kind &&
      last.involvedObject.namespace === o.namespace &&
      last.involvedObject.name === o.name &&
      last.cluster === event.cluster
    ) {
      this.events.replaceNewest({ ...last, atMs: event.atMs, count: last.count + 1 });
      return;
    }
    this.events.push({ ...event, message, count: 1 });
  }

  snapshot(): ConsoleSnapshot {
    const leader = this.options.leaderElection;
    // Each member's informers are snapshotted once: for the informer list and for its cluster row.
    const members = [...(this.options.clusters?.() ?? [])]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((cluster) => ({ cluster, informers: cluster.informers.map(informerSnapshot) }));
    return {
      generatedAtMs: this.clock.now(),
      leader: {
        enabled: leader !== undefined,
        identity: leader?.identity,
        isLeader: leader ? leader.isLeader() : true,
        holder: leader?.getLeader?.(),
      },
      controllers: [...this.controllers.values()].map((c) => c.snapshot()),
      informers: [...(this.options.informers?.() ?? []).map(informerSnapshot), ...members.flatMap((m) => m.informers)],
      clusters: members.map((m) => clusterSnapshot(m.cluster, m.informers)),
      events: this.events.newestFirst(),
      ...(this.history ? { history: this.history.stats() } : {}),
    };
  }
}

function informerSnapshot(h: InformerHealth): InformerSnapshot {
  return {
    name: h.name,
    state: h.state,
    synced: h.synced,
    objects: h.objects,
    estimatedBytesPerObject: h.estimatedBytesPerObject,
    estimatedBytes: h.estimatedBytesPerObject === undefined ? undefined : h.estimatedBytesPerObject * h.objects,
    lastEventAtMs: h.lastEventAtMs,
    lastSyncAtMs: h.lastSyncAtMs,
    relists: Math.max(0, h.lists - 1),
    restarts: h.restarts,
    stalls: h.stalls,
    consecutiveFailures: h.consecutiveFailures,
    lastError: h.lastError ? { message: redactMessage(h.lastError.message), atMs: h.lastError.atMs } : undefined,
    pendingKeys: h.handlers.reduce((n, x) => n + x.pendingKeys, 0),
  };
}

function clusterSnapshot(c: ClusterHealthView, informers: readonly InformerSnapshot[]): ClusterSnapshot {
  const sized = informers.filter((i) => i.estimatedBytes !== undefined);
  return {
    name: c.name,
    state: c.state,
    synced: c.synced,
    connectFailures: c.connectFailures,
    informers: informers.length,
    objects: informers.reduce((n, i) => n + i.objects, 0),
    estimatedBytes: sized.length === 0 ? undefined : sized.reduce((n, i) => n + (i.estimatedBytes ?? 0), 0),
  };
}
