/**
 * The client of a sharded manager (`manager.client`): as the delegating client (cached reads,
 * writes to the API server), except that `get` and `list` of a sharded primary kind go to the API
 * server, so no read starts an unfiltered informer holding every object of the kind again.
 *
 * Why the API server and not this replica's shard-filtered informers: the sharded kinds are known
 * only once the controllers are built and the informers only once the ring's mode is resolved
 * (`auto` probes the server when the replica joins), both after the manager is constructed; and a
 * read answered from this replica's share would report an object another replica owns as not
 * found, which misleads any caller that is not the kind's sharded reconciler (an unsharded
 * controller, a webhook, a one-off check). A reconciler reads its own share with `ctx.get()`.
 */
import type { Client, RestMapper } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';

/** What the client asks of sharding, at each read: the sharded primary kinds registered so far. */
export interface ShardedKinds {
  kinds(): readonly ResourceType[];
}

/** `cached` for everything but reads of `sharding`'s primary kinds, which go to `server`. */
export function shardAwareClient(cached: Client, server: Client, sharding: ShardedKinds): Client {
  // Asked at each read: controllers register their kinds after the manager (and this client) exist.
  const isSharded = (type: ResourceType): boolean =>
    sharding.kinds().some((k) => k.apiVersion === type.apiVersion && k.kind === type.kind);
  const mapper: RestMapper = cached.mapper;
  return {
    mapper,
    get: (type, name, opts) => (isSharded(type) ? server.get(type, name, opts) : cached.get(type, name, opts)),
    list: (type, opts) => (isSharded(type) ? server.list(type, opts) : cached.list(type, opts)),
    // The delegating client sends these to the server already.
    listPage: (...args) => cached.listPage(...args),
    listPages: (...args) => cached.listPages(...args),
    watch: (...args) => cached.watch(...args),
    create: (...args) => cached.create(...args),
    update: (...args) => cached.update(...args),
    updateStatus: (...args) => cached.updateStatus(...args),
    patch: (...args) => cached.patch(...args),
    patchStatus: (...args) => cached.patchStatus(...args),
    apply: cached.apply.bind(cached),
    applyStatus: cached.applyStatus.bind(cached),
    delete: (...args) => cached.delete(...args),
  };
}
