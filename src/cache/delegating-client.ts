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
import type { Client } from '../client/client.js';
import type { ResourceType } from '../client/discovery.js';
import type { GetOptions, ListOptions } from '../client/kube-client.js';
import type { KubeObject } from '../core/object-key.js';
import type { InformerCache } from './informer-cache.js';

export interface DelegatingClientOptions {
  /**
   * Kinds always read from the API server: ones read rarely but numerous or large (Secrets, Events),
   * which would cost more memory to cache than they save in requests. @defaultValue []
   */
  readonly uncached?: readonly ResourceType[];
}

export function createDelegatingClient(client: Client, cache: InformerCache, options: DelegatingClientOptions = {}): Client {
  const uncached = new Set((options.uncached ?? []).map(typeKey));
  const fromCache = (type: ResourceType): boolean => !uncached.has(typeKey(type));
  return {
    get<T = KubeObject>(type: ResourceType, name: string, opts: GetOptions = {}): Promise<T> {
      if (!fromCache(type) || opts.subresource !== undefined || opts.resourceVersion !== undefined) return client.get<T>(type, name, opts);
      return cache.get<KubeObject>(type, { namespace: opts.namespace, name }, { signal: opts.signal }) as Promise<T>;
    },
    async list<T = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
      if (!fromCache(type) || opts.resourceVersion !== undefined) return client.list<T>(type, opts);
      const items = await cache.list<KubeObject>(type, { namespace: opts.namespace, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, signal: opts.signal });
      // One informer has one meaningful resourceVersion; merged namespaces have none.
      const informers = cache.informersFor(type);
      const resourceVersion = informers.length === 1 ? (informers[0]!.health().resourceVersion ?? '') : '';
      return { items: items as T[], resourceVersion };
    },
    listPage: forward(client, 'listPage'),
    listPages: forward(client, 'listPages'),
    watch: forward(client, 'watch'),
    create: forward(client, 'create'),
    update: forward(client, 'update'),
    updateStatus: forward(client, 'updateStatus'),
    patch: forward(client, 'patch'),
    patchStatus: forward(client, 'patchStatus'),
    apply: forward(client, 'apply'),
    applyStatus: forward(client, 'applyStatus'),
    delete: forward(client, 'delete'),
  };
}

/** Calls `client[method]` when called (not bound up front), so a partial test double works for what it has. */
function forward<K extends keyof Client>(client: Client, method: K): Client[K] {
  return ((...args: unknown[]) => (client[method] as (...a: unknown[]) => unknown).apply(client, args)) as Client[K];
}

function typeKey(t: ResourceType): string {
  return `${t.apiVersion}/${t.kind}`;
}
