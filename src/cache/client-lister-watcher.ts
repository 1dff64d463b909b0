/**
 * The adapter from the API client to the cache's `ListerWatcher`: one informer spec becomes list
 * and watch calls scoped to its namespace and selectors. The client already turns watch ERROR
 * events into thrown `ApiError`s and ends the iterator on a clean server close, as the watcher
 * expects.
 */
import type { Client } from '../client/client.js';
import { toPartialObjectMetadata } from '../client/partial-object-metadata.js';
import type { KubeObject } from '../core/object-key.js';
import type { ListerWatcherFactory } from './informer-factory.js';
import type { InformerSpec } from './informer-spec.js';
import type { ListerWatcher, WatchEvent } from './lister-watcher.js';

/**
 * A ListerWatcher over `client` for `spec`. A metadata-only spec asks the client for
 * PartialObjectMetadata and cuts down whatever comes back all the same, so a client that ignores
 * the option (a stub, an old fake) still never fills the cache with whole objects.
 */
export function clientListerWatcher(client: Pick<Client, 'listPage' | 'watch'> & { readonly watchList?: boolean }, spec: InformerSpec): ListerWatcher<KubeObject> {
  const type = { apiVersion: spec.apiVersion, kind: spec.kind };
  const scope = {
    ...(spec.namespace ? { namespace: spec.namespace } : {}),
    ...(spec.labelSelector ? { labelSelector: spec.labelSelector } : {}),
    ...(spec.fieldSelector ? { fieldSelector: spec.fieldSelector } : {}),
    ...(spec.metadataOnly ? { metadataOnly: true } : {}),
  };
  const cut = spec.metadataOnly ? (o: KubeObject): KubeObject => toPartialObjectMetadata(o, type) : undefined;
  return {
    // Only a client that passes sendInitialEvents on (a server too old for it answers 422 and the
    // watcher falls back); a stub that ignores it would leave a watch-list waiting forever.
    watchList: client.watchList === true,
    async list(opts) {
      const page = await client.listPage<KubeObject>(type, { ...scope, ...opts });
      return { items: cut ? page.items.map(cut) : page.items, resourceVersion: page.resourceVersion, ...(page.continue ? { continue: page.continue } : {}) };
    },
    watch: (opts) => {
      const events = client.watch<KubeObject>(type, { ...scope, ...opts }) as AsyncIterable<WatchEvent<KubeObject>>;
      return cut ? cutEvents(events, cut) : events;
    },
  };
}

/** The factory function an `InformerFactory` needs, over one client. */
export function clientListerWatcherFactory(client: Pick<Client, 'listPage' | 'watch'> & { readonly watchList?: boolean }): ListerWatcherFactory {
  return (spec) => clientListerWatcher(client, spec);
}

async function* cutEvents(events: AsyncIterable<WatchEvent<KubeObject>>, cut: (o: KubeObject) => KubeObject): AsyncGenerator<WatchEvent<KubeObject>, void, undefined> {
  for await (const e of events) yield e.type === 'BOOKMARK' ? e : { type: e.type, object: cut(e.object) };
}
