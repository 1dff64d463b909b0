/**
 * The adapter from the API client to the cache's `ListerWatcher`: one informer spec becomes list
 * and watch calls scoped to its namespace and selectors. The client already turns watch ERROR
 * events into thrown `ApiError`s and ends the iterator on a clean server close, as the watcher
 * expects.
 */
import type { ListWatchClient } from '../client/contracts.js';
import { toPartialObjectMetadata } from '../client/partial-object-metadata.js';
import type { KubeObject } from '../core/object-key.js';
import { parseShardSelector, selectorMatches } from '../client/shard-selector.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { ListerWatcherFactory } from './informer-factory.js';
import type { InformerSpec } from './informer-spec.js';
import type { ListerWatcher, ListerWatchEvent } from './lister-watcher.js';

/**
 * A ListerWatcher over `client` for `spec`. A metadata-only spec asks the client for
 * PartialObjectMetadata and cuts down whatever comes back all the same, so a client that ignores
 * the option (a stub, an old fake) still never fills the cache with whole objects. Likewise a
 * spec with a shard selector sends it and drops whatever comes back outside its ranges, so a server
 * that ignores the selector (1.20, or 1.36 without the feature gate) costs bandwidth, never a
 * foreign key in the cache. An object never changes range (its uid and namespace are immutable),
 * so dropping its events one by one is consistent.
 */
export function clientListerWatcher(client: ListWatchClient, spec: InformerSpec): ListerWatcher<KubeObject> {
  const type = { apiVersion: spec.apiVersion, kind: spec.kind };
  // A falsy field ('' or false) is left out, as an absent one.
  const scope = omitUndefined({
    namespace: spec.namespace || undefined,
    labelSelector: spec.labelSelector || undefined,
    fieldSelector: spec.fieldSelector || undefined,
    metadataOnly: spec.metadataOnly || undefined,
    shardSelector: spec.shardSelector || undefined,
  });
  const cut = spec.metadataOnly ? (o: KubeObject): KubeObject => toPartialObjectMetadata(o, type) : undefined;
  const shard = spec.shardSelector ? parseShardSelector(spec.shardSelector) : undefined;
  const keep = shard ? (o: KubeObject): boolean => selectorMatches(shard, o) : undefined;
  return {
    // Only a client that passes sendInitialEvents on (a server too old for it answers 422 and the
    // watcher falls back); a stub that ignores it would leave a watch-list waiting forever.
    watchList: client.watchList === true,
    async list(opts) {
      const page = await client.listPage<KubeObject>(type, { ...scope, ...opts });
      const kept = keep ? page.items.filter(keep) : page.items;
      const items = cut ? kept.map(cut) : kept;
      return {
        items,
        resourceVersion: page.resourceVersion,
        ...omitUndefined({ continue: page.continue || undefined }),
      };
    },
    watch: (opts) => {
      const events = client.watch<KubeObject>(type, { ...scope, ...opts }) as AsyncIterable<
        ListerWatchEvent<KubeObject>
      >;
      return cut || keep ? shapeEvents(events, cut, keep) : events;
    },
  };
}

/** The factory function an `InformerFactory` needs, over one client. */
export function clientListerWatcherFactory(client: ListWatchClient): ListerWatcherFactory {
  return (spec) => clientListerWatcher(client, spec);
}

async function* shapeEvents(
  events: AsyncIterable<ListerWatchEvent<KubeObject>>,
  cut: ((o: KubeObject) => KubeObject) | undefined,
  keep: ((o: KubeObject) => boolean) | undefined,
): AsyncGenerator<ListerWatchEvent<KubeObject>, void, undefined> {
  for await (const e of events) {
    if (e.type === 'BOOKMARK') yield e;
    else if (!keep || keep(e.object)) yield cut ? { type: e.type, object: cut(e.object) } : e;
  }
}
