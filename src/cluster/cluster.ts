/**
 * One cluster as an operator sees it (controller-runtime's `pkg/cluster`): the API client, the
 * informer factory, the informer cache over it, and the delegating client that reads from that
 * cache with read-your-own-writes and writes to the API server. The manager owns one for the host
 * cluster; a fleet engagement creates one per member cluster. Nothing else builds the three.
 */
import type { Registry } from 'prom-client';
import { clientListerWatcherFactory } from '../cache/client-lister-watcher.js';
import { DelegatingClient } from '../cache/delegating-client.js';
import type { InformerHealth, SharedInformer } from '../cache/informer.js';
import { DEFAULT_CACHE_SYNC_TIMEOUT_MS, InformerCache, type KindLabelSelector } from '../cache/informer-cache.js';
import { InformerFactory } from '../cache/informer-factory.js';
import type { Client, RestMapper } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { kindKey, type KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';

export interface ClusterOptions {
  /** The API client of the cluster (a `KubeClient`, or the fake client in tests). */
  readonly apiClient: Client;
  /** Knows each kind's scope. @defaultValue `apiClient.mapper` */
  readonly restMapper?: RestMapper;
  /** Cache only these namespaces (one watch per namespace per kind); all when omitted. */
  readonly namespaces?: readonly string[];
  /** Cache only the objects of these kinds that match a label selector. @defaultValue none */
  readonly labelSelectorsByKind?: readonly KindLabelSelector[];
  /** @defaultValue {@link DEFAULT_CACHE_SYNC_TIMEOUT_MS} */
  readonly syncTimeoutMs?: number;
  /** Read-your-own-writes wait of `client`; 0 turns it off. @defaultValue `DEFAULT_OWN_WRITES_WAIT_MS` */
  readonly ownWritesWaitMs?: number;
  /** Put before every informer's name (a member's `east/`), so two clusters' metric series never meet. @defaultValue none */
  readonly informerNamePrefix?: string;
  readonly clock: Clock;
  /** The cluster's logger; the cache's lines are bound with `component: 'cache'`. */
  readonly logger: Logger;
  readonly registry: Registry;
}

/** What a view of the cluster's cache narrows (a controller's own label selectors, a shard's selector). */
export interface CacheViewOptions {
  readonly labelSelectorsByKind?: readonly KindLabelSelector[];
  /** ANDed with whatever selector the kind has. */
  readonly shardSelector?: KindLabelSelector;
}

export class Cluster {
  /** The API client itself: reads that must not come from the cache. */
  readonly apiClient: Client;
  /** Reads from the cache (starting a kind's informer on first use), writes to the API server. */
  readonly client: Client;
  readonly mapper: RestMapper;
  /** `client`, with what read-your-own-writes needs beyond the `Client` contract. */
  private readonly delegating: DelegatingClient;
  readonly informers: InformerFactory;
  /** Cache-backed reads (get/list/byIndex) of everything the cluster's informers watch. */
  readonly cache: InformerCache;
  readonly syncTimeoutMs: number;
  private readonly namespaces: readonly string[] | undefined;
  private readonly labelSelectorsByKind: readonly KindLabelSelector[];

  constructor(options: ClusterOptions) {
    this.apiClient = options.apiClient;
    this.mapper = options.restMapper ?? options.apiClient.mapper;
    this.namespaces = options.namespaces?.length ? [...options.namespaces] : undefined;
    this.labelSelectorsByKind = options.labelSelectorsByKind ?? [];
    this.syncTimeoutMs = options.syncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
    const { clock, registry } = options;
    const logger = options.logger.child({ component: 'cache' });
    this.informers = new InformerFactory(clientListerWatcherFactory(this.apiClient), {
      clock,
      logger,
      registry,
      ...omitUndefined({ namePrefix: options.informerNamePrefix }),
    });
    this.cache = this.newCache(this.labelSelectorsByKind, this.syncTimeoutMs);
    // With namespaces, the delegating client maps a kind before its first cache read, so `scopeOf`
    // knows it then; without, scope does not matter to the cache and reads skip discovery.
    this.delegating = new DelegatingClient(this.apiClient, this.cache, {
      ...(this.namespaces ? { restMapper: this.mapper } : {}),
      ...omitUndefined({ ownWritesWaitMs: options.ownWritesWaitMs }),
      clock,
      registry,
      logger,
    });
    this.client = this.delegating;
  }

  /**
   * Waits, bounded by `ownWritesWaitMs`, until `informers` (of this cluster's factory: a controller's
   * primary informers) have observed `client`'s writes of `key` so far; at once when the option is 0.
   */
  observedOwnWrites(informers: readonly SharedInformer<KubeObject>[], key: string, signal: AbortSignal): Promise<void> {
    return this.delegating.observedOwnWrites(informers, key, signal);
  }

  /** Runs the informers (those created before and those asked for later) until `signal` aborts. */
  start(signal: AbortSignal): Promise<void> {
    return this.informers.start(signal);
  }

  /** Closes the API client when it has a `close()` (a member's, built by its provider). */
  async stop(): Promise<void> {
    const closing = this.apiClient as { close?: () => unknown };
    if (typeof closing.close === 'function') await closing.close();
  }

  /** Resolves once every informer has synced; rejects after `timeoutMs` (the cluster's sync timeout by default). */
  waitForSync(signal: AbortSignal, timeoutMs: number = this.syncTimeoutMs): Promise<void> {
    return this.informers.waitForSync(signal, timeoutMs);
  }

  hasSynced(): boolean {
    return this.informers.hasSynced();
  }

  health(): InformerHealth[] {
    return this.informers.health();
  }

  /** True when synced and no watch has failed `unhealthyFailures` times in a row. */
  healthy(unhealthyFailures: number): boolean {
    return this.hasSynced() && this.health().every((h) => h.consecutiveFailures < unhealthyFailures);
  }

  /** A kind's scope if the mapper already knows it (no I/O): the cache asks synchronously. */
  scopeOf(type: ResourceType): boolean | undefined {
    return this.mapper.cached(type)?.namespaced;
  }

  /** Whether a kind is namespaced, from the REST mapper. */
  async isNamespaced(type: ResourceType, signal?: AbortSignal): Promise<boolean> {
    return (await this.mapper.mapping(type, signal)).namespaced;
  }

  /** Whether a namespace-restricted cache must learn a kind's scope before it can create its informers. */
  scopeNeeded(type: ResourceType): boolean {
    return this.namespaces !== undefined && this.scopeOf(type) === undefined;
  }

  /**
   * The cache as `options` narrow it, over the same informer factory (informers with the same spec
   * are still shared, and `cache` stays as configured): a controller's own label selectors replace
   * the cluster's for their kinds, and a shard selector is ANDed with the kind's selector.
   */
  cacheView(options: CacheViewOptions): InformerCache {
    const own = options.labelSelectorsByKind ?? [];
    const shard = options.shardSelector;
    if (own.length === 0 && !shard) return this.cache;
    const ownKinds = new Set(own.map(kindKey));
    const selectors = [...this.labelSelectorsByKind.filter((k) => !ownKinds.has(kindKey(k))), ...own];
    const shardKind = shard ? kindKey(shard) : '';
    const base = selectors.find((k) => kindKey(k) === shardKind)?.labelSelector;
    return this.newCache(
      shard
        ? [
            ...selectors.filter((k) => kindKey(k) !== shardKind),
            { ...shard, labelSelector: base ? `${base},${shard.labelSelector}` : shard.labelSelector },
          ]
        : selectors,
    );
  }

  private newCache(labelSelectorsByKind: readonly KindLabelSelector[], syncTimeoutMs?: number): InformerCache {
    return new InformerCache(this.informers, {
      ...omitUndefined({ namespaces: this.namespaces, syncTimeoutMs }),
      labelSelectorsByKind,
      isNamespaced: (type) => this.scopeOf(type) ?? true,
    });
  }
}
