/**
 * One engagement of one member cluster: from `connect()` to its informers stopped and its client
 * closed. It owns the cluster's `Cluster` (informer factory, cache and cache-backed client), under
 * its own AbortController, so ending it ends everything of that cluster and nothing of any other. Fleet
 * controllers attach their handlers to it and run their reconciles of its keys through `track`,
 * so `stop()` can end them before the caches go.
 */
import type { Registry } from 'prom-client';
import type { HandlerRegistration, InformerHealth, SharedInformer } from '../cache/informer.js';
import { DEFAULT_CACHE_SYNC_TIMEOUT_MS, type KindLabelSelector } from '../cache/informer-cache.js';
import { Cluster } from '../cluster/cluster.js';
import type { Client } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import { linkedAbortController, sleep } from '../core/abort.js';
import type { Clock } from '../core/clock.js';
import { OperatorRuntimeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { MemberCluster } from './cluster-provider.js';
import type { ClusterView } from './fleet-reconciler.js';
import type { ClusterState } from './fleet-metrics.js';

/** The first retry of a failed `connect()` waits this long, doubling up to {@link CONNECT_BACKOFF_MAX_MS}. */
export const CONNECT_BACKOFF_INITIAL_MS = 1_000;
export const CONNECT_BACKOFF_MAX_MS = 60_000;
/** A member whose watches fail this many times in a row is unhealthy (the manager's threshold for /readyz). */
export const MEMBER_UNHEALTHY_WATCH_FAILURES = 3;

/** A member cluster's client or cache was used before `connect()` succeeded, or after it left. */
export class ClusterNotConnectedError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CLUSTER_NOT_CONNECTED';
  constructor(cluster: string) {
    super('ERR_CLUSTER_NOT_CONNECTED', `member cluster ${cluster} is not connected`);
  }
}

/** What every engagement of a fleet shares. */
export interface EngagementContext {
  readonly clock: Clock;
  /** The fleet's logger; the engagement binds `cluster`. */
  readonly logger: Logger;
  readonly registry: Registry;
  readonly ownWritesWaitMs?: number;
  readonly labelSelectorsByKind?: readonly KindLabelSelector[];
  readonly clusterSyncTimeoutMs: number;
  /** Every kind some fleet controller watches: their informers are created at connect, so `synced` covers them. */
  kinds(): readonly ResourceType[];
  /** Called once the client is connected and the informers run: the fleet attaches running controllers. */
  connected(engagement: ClusterEngagement): void;
}

/** One member cluster's health, as `manager.fleet.health()` reports it (no credential in it). */
export interface FleetClusterHealth {
  readonly name: string;
  readonly revision: string;
  readonly state: ClusterState;
  readonly synced: boolean;
  /** `connect()` calls that failed in a row (0 once connected). */
  readonly connectFailures: number;
  readonly informers: readonly InformerHealth[];
}

export class ClusterEngagement implements ClusterView {
  readonly name: string;
  readonly revision: string;
  labels: Readonly<Record<string, string>>;
  private readonly abort: AbortController;
  private readonly disposeLink: () => void;
  private readonly log: Logger;
  private readonly engagedAtMs: number;
  private connection: Cluster | undefined;
  private connectFailures = 0;
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  /** Handler registrations by controller name. */
  private readonly attachments = new Map<string, HandlerRegistration[]>();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The names of the informers this engagement created, kept past `stop()`: its metric series are removed by them. */
  private createdInformers: readonly string[] = [];

  constructor(
    cluster: MemberCluster,
    private readonly context: EngagementContext,
    fleetSignal: AbortSignal,
    private readonly connect: MemberCluster['connect'] = (s) => cluster.connect(s),
  ) {
    this.name = cluster.name;
    this.revision = cluster.revision;
    this.labels = { ...cluster.labels };
    const { controller, dispose } = linkedAbortController(fleetSignal);
    this.abort = controller;
    this.disposeLink = dispose;
    this.log = context.logger.child({ cluster: this.name });
    this.engagedAtMs = context.clock.monotonicNow();
  }

  /** Aborts when the engagement ends: the signal of its informers and (linked) of its reconciles. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Connected and not stopping: its keys may be reconciled. */
  get active(): boolean {
    return this.connection !== undefined && !this.abort.signal.aborted;
  }

  get client(): Client {
    return this.require().client;
  }

  get apiClient(): Client {
    return this.require().apiClient;
  }

  get synced(): boolean {
    return this.connection?.hasSynced() ?? false;
  }

  /** The names of every informer this engagement created (once stopped, of those it had). */
  informerNames(): readonly string[] {
    return this.connection?.informers.list().map((i) => i.name) ?? this.createdInformers;
  }

  /** The informers of `type` in this cluster (one per kind: member caches are cluster-wide). */
  informersFor(type: ResourceType): SharedInformer<KubeObject>[] {
    return this.require().cache.informersFor(type);
  }

  /** Waits (bounded) until `informers` have observed this member's client's own writes of `key`. */
  observedOwnWrites(informers: readonly SharedInformer<KubeObject>[], key: string, signal: AbortSignal): Promise<void> {
    return this.require().observedOwnWrites(informers, key, signal);
  }

  state(): ClusterState {
    const connection = this.connection;
    if (!connection) return this.connectFailures > 0 ? 'unhealthy' : 'connecting';
    const failing = connection.health().some((h) => h.consecutiveFailures >= MEMBER_UNHEALTHY_WATCH_FAILURES);
    if (failing) return 'unhealthy';
    if (connection.hasSynced()) return 'ready';
    const late = this.context.clock.monotonicNow() - this.engagedAtMs > this.context.clusterSyncTimeoutMs;
    return late ? 'unhealthy' : 'syncing';
  }

  health(): FleetClusterHealth {
    return {
      name: this.name,
      revision: this.revision,
      state: this.state(),
      synced: this.synced,
      connectFailures: this.connectFailures,
      informers: this.connection?.health() ?? [],
    };
  }

  /** Connects (retrying with backoff) and runs the cluster's informers until `stop()`. */
  start(): void {
    this.running ??= this.run().catch((err: unknown) => {
      this.log.error({ err }, 'member cluster engagement failed');
    });
  }

  /** Records the handlers a controller put on this cluster's informers (removed on detach or stop). */
  attached(controller: string, registrations: HandlerRegistration[]): void {
    if (this.abort.signal.aborted) {
      for (const r of registrations) r.remove();
      return;
    }
    this.detach(controller);
    this.attachments.set(controller, registrations);
  }

  detach(controller: string): void {
    for (const r of this.attachments.get(controller) ?? []) r.remove();
    this.attachments.delete(controller);
  }

  /**
   * Runs one reconcile of this cluster with a signal that also aborts when the engagement ends;
   * `stop()` waits for it.
   */
  track<R>(signal: AbortSignal, reconcile: (signal: AbortSignal) => Promise<R>): Promise<R> {
    const { controller, dispose } = linkedAbortController(signal, this.abort.signal);
    const run = reconcile(controller.signal).finally(() => {
      dispose();
      this.inFlight.delete(run);
    });
    this.inFlight.add(run);
    return run;
  }

  /**
   * Ends the engagement: handlers off, in-flight reconciles aborted and awaited, informers stopped,
   * the client closed. Idempotent.
   */
  stop(reason: string): Promise<void> {
    this.stopping ??= (async () => {
      this.log.info({ reason }, 'disengaging member cluster');
      for (const controller of [...this.attachments.keys()]) this.detach(controller);
      this.abort.abort(new ClusterDisengagedError(this.name));
      await Promise.allSettled([...this.inFlight]);
      await this.running;
      try {
        await this.connection?.stop();
      } catch (err) {
        this.log.warn({ err }, 'closing the member cluster client failed');
      }
      this.createdInformers = this.connection?.informers.list().map((i) => i.name) ?? [];
      // Nothing of the cluster may outlive the engagement: the fleet drops its last reference next.
      this.connection = undefined;
      this.disposeLink();
      this.log.info({}, 'member cluster disengaged');
    })();
    return this.stopping;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    let backoffMs = CONNECT_BACKOFF_INITIAL_MS;
    let apiClient: Client | undefined;
    while (!apiClient) {
      if (signal.aborted) return;
      try {
        apiClient = await this.connect(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.connectFailures++;
        // The provider's contract keeps credentials out of what connect() throws.
        this.log.error(
          { err, failures: this.connectFailures, retryInMs: backoffMs },
          'connecting to member cluster failed',
        );
        try {
          await sleep(this.context.clock, backoffMs, signal);
        } catch {
          return;
        }
        backoffMs = Math.min(backoffMs * 2, CONNECT_BACKOFF_MAX_MS);
      }
    }
    this.connectFailures = 0;
    const { clock, registry } = this.context;
    const cluster = new Cluster({
      apiClient,
      ...omitUndefined({
        labelSelectorsByKind: this.context.labelSelectorsByKind,
        ownWritesWaitMs: this.context.ownWritesWaitMs,
      }),
      syncTimeoutMs: this.context.clusterSyncTimeoutMs || DEFAULT_CACHE_SYNC_TIMEOUT_MS,
      informerNamePrefix: `${this.name}/`,
      clock,
      logger: this.log,
      registry,
    });
    for (const kind of this.context.kinds()) cluster.cache.informersFor(kind);
    this.connection = cluster;
    const running = cluster.start(signal);
    this.log.info({ informers: cluster.informers.list().length }, 'member cluster connected: informers starting');
    this.context.connected(this);
    await running;
  }

  private require(): Cluster {
    if (!this.connection) throw new ClusterNotConnectedError(this.name);
    return this.connection;
  }
}

/** The reason a member's signals abort with when it leaves the fleet. */
export class ClusterDisengagedError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CLUSTER_DISENGAGED';
  constructor(cluster: string) {
    super('ERR_CLUSTER_DISENGAGED', `member cluster ${cluster} left the fleet`);
    // Format the stack now: V8 keeps the frames' receivers (the engagement) until it is read, and
    // this error outlives the engagement as the reason of every signal a reconcile kept.
    void this.stack;
  }
}
