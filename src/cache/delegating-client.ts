/**
 * A client that reads from the cache and writes to the API server (controller-runtime's
 * delegating client): `get` and `list` of cached kinds are answered from memory (starting the
 * kind's informer lazily, the first read waiting for its sync); every write, `listPage`,
 * `listPages` and `watch` go to the server. A read asking for something only the server can give
 * (a subresource, a specific resourceVersion) also goes to the server.
 *
 * Reads from the cache may lag the server by the watch delay: write with the resourceVersion you
 * read and retry conflicts by re-reading, as everywhere in this runtime.
 */
import type { Client, RestMapper } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import type { Kind } from '../client/kind.js';
import type { GetOptions, ListOptions } from '../client/client-options.js';
import { kindKey, type KubeObject } from '../core/object-key.js';
import type { InformerCache } from './informer-cache.js';
import { parseShardSelector, selectorMatches } from '../client/shard-selector.js';

export interface DelegatingClientOptions {
  /**
   * Kinds always read from the API server: ones read rarely but numerous or large (Secrets, Events),
   * which would cost more memory to cache than they save in requests. @defaultValue []
   */
  readonly uncached?: readonly ResourceType[];
  /**
   * When given, maps each kind before its first cache read, so a cache restricted to namespaces
   * knows whether the kind is cluster-scoped (it asks this mapper's `cached()`, which then answers).
   * Without it no read waits for discovery, and `mapper` is the client's. @defaultValue none
   */
  readonly restMapper?: RestMapper;
}

/** Reads cached kinds from the cache and sends everything else to `client`. */
export class DelegatingClient implements Client {
  readonly mapper: RestMapper;
  private readonly uncached: ReadonlySet<string>;
  private readonly mapBeforeRead: boolean;

  constructor(
    private readonly client: Client,
    private readonly cache: InformerCache,
    options: DelegatingClientOptions = {},
  ) {
    this.uncached = new Set((options.uncached ?? []).map(kindKey));
    this.mapper = options.restMapper ?? client.mapper;
    this.mapBeforeRead = options.restMapper !== undefined;
  }

  async get<T = KubeObject>(type: Kind<T>, name: string, opts: GetOptions = {}): Promise<T> {
    if (!this.fromCache(type) || opts.subresource !== undefined || opts.resourceVersion !== undefined)
      return this.client.get<T>(type, name, opts);
    await this.mapped(type, opts.signal);
    return (await this.cache.get<KubeObject>(type, { namespace: opts.namespace, name }, { signal: opts.signal })) as T;
  }

  async list<T = KubeObject>(type: Kind<T>, opts: ListOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
    if (!this.fromCache(type) || opts.resourceVersion !== undefined) return this.client.list<T>(type, opts);
    // The cache keeps no hash ranges: a shard selector filters what it holds, as the server would.
    const shard = opts.shardSelector ? parseShardSelector(opts.shardSelector) : undefined;
    await this.mapped(type, opts.signal);
    const cached = await this.cache.list<KubeObject>(type, {
      namespace: opts.namespace,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      signal: opts.signal,
    });
    const items = shard ? cached.filter((o) => selectorMatches(shard, o)) : cached;
    // One informer has one meaningful resourceVersion; merged namespaces have none.
    const informers = this.cache.informersFor(type);
    const resourceVersion = informers.length === 1 ? (informers[0]!.health().resourceVersion ?? '') : '';
    return { items: items as T[], resourceVersion };
  }

  // Everything below goes to the server. Calls `client[method]` when called (not bound up front),
  // so a partial test double works for what it has.
  listPage: Client['listPage'] = (...args) => this.client.listPage(...args);
  listPages: Client['listPages'] = (...args) => this.client.listPages(...args);
  watch: Client['watch'] = (...args) => this.client.watch(...args);
  create: Client['create'] = (...args) => this.client.create(...args);
  update: Client['update'] = (...args) => this.client.update(...args);
  updateStatus: Client['updateStatus'] = (...args) => this.client.updateStatus(...args);
  patch: Client['patch'] = (...args) => this.client.patch(...args);
  patchStatus: Client['patchStatus'] = (...args) => this.client.patchStatus(...args);
  apply: Client['apply'] = (...args) => this.client.apply(...args);
  applyStatus: Client['applyStatus'] = (...args) => this.client.applyStatus(...args);
  delete: Client['delete'] = (...args) => this.client.delete(...args);

  private fromCache(type: ResourceType): boolean {
    return !this.uncached.has(kindKey(type));
  }

  private async mapped(type: ResourceType, signal: AbortSignal | undefined): Promise<void> {
    if (this.mapBeforeRead && this.mapper.cached(type) === undefined) await this.mapper.mapping(type, signal);
  }
}

export function createDelegatingClient(
  client: Client,
  cache: InformerCache,
  options: DelegatingClientOptions = {},
): Client {
  return new DelegatingClient(client, cache, options);
}
