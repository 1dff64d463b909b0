import type { Client } from '../client/client.js';
import type { KubeObject } from '../core/object-key.js';
import type { ListerWatcherFactory } from './informer-factory.js';
import type { InformerSpec } from './informer-spec.js';
import type { ListerWatcher, WatchEvent } from './lister-watcher.js';

/**
 * Adapts the API client to the cache's ListerWatcher seam: one spec (kind, namespace, selectors)
 * becomes `listPage` and `watch` calls with the spec's scope. `metadataOnly` specs are not supported
 * by the client yet and fail loudly instead of silently caching whole objects.
 */
export function clientListerWatcher(client: Pick<Client, 'listPage' | 'watch'>): ListerWatcherFactory {
  return (spec: InformerSpec): ListerWatcher<KubeObject> => {
    if (spec.metadataOnly) throw new TypeError(`metadata-only informers are not supported yet (${spec.apiVersion} ${spec.kind})`);
    const type = { apiVersion: spec.apiVersion, kind: spec.kind };
    const scope = {
      ...(spec.namespace ? { namespace: spec.namespace } : {}),
      ...(spec.labelSelector ? { labelSelector: spec.labelSelector } : {}),
      ...(spec.fieldSelector ? { fieldSelector: spec.fieldSelector } : {}),
    };
    return {
      async list(opts) {
        const page = await client.listPage<KubeObject>(type, { ...scope, ...opts });
        return { items: page.items, resourceVersion: page.resourceVersion, ...(page.continue ? { continue: page.continue } : {}) };
      },
      watch(opts) {
        return client.watch<KubeObject>(type, { ...scope, ...opts }) as AsyncIterable<WatchEvent<KubeObject>>;
      },
    };
  };
}
