/**
 * cache: the informer cache. A watcher (explicit list/watch state machine that never gives up)
 * feeds a store with indexes; shared informers fan changes out to handlers without unbounded
 * buffers; readers serve get/list/byIndex from memory. The API client is reached only through the
 * `ListerWatcher` interface.
 */
// The cache's seam: the client's list/watch shapes narrowed to one (kind, scope, selectors).
export type {
  ListerWatcher,
  ListerListOptions,
  ListerListPage,
  ListerWatchOptions,
  ListerWatchEvent,
} from './lister-watcher.js';

export {
  Watcher,
  isResourceVersionTooLarge,
  DEFAULT_PAGE_SIZE,
  DEFAULT_MIN_WATCH_TIMEOUT_MS,
  DEFAULT_STALL_MARGIN_MS,
  DEFAULT_WATCH_BACKOFF,
  DEFAULT_BACKOFF_RESET_MS,
  DEFAULT_MIN_WATCH_DURATION_MS,
  DEFAULT_LIST_TIMEOUT_MS,
} from './watcher.js';
export type { WatcherOptions, WatcherEvent, WatcherHealth, WatcherStateName, ErrorSummary } from './watcher.js';

export { Store, dropManagedFields, DEFAULT_TRANSFORM, DEFAULT_RELIST_MODE } from './store.js';
export type { StoreOptions, StoreReader, StoreDelta, Transform } from './store.js';
export { NAMESPACE_INDEX } from './indexer.js';
export type { IndexFunc } from './indexer.js';
export { isTombstone, deletedObject, tombstone } from './tombstone.js';
export type { Tombstone } from './tombstone.js';

export type { AddEventInfo, EventHandler } from './handler-dispatcher.js';
export { SharedInformer, DEFAULT_RESYNC_PERIOD_MS } from './informer.js';
export type { SharedInformerOptions, EventHandlerOptions, HandlerRegistration, InformerHealth } from './informer.js';
export { InformerFactory } from './informer-factory.js';
export type { InformerFactoryOptions, InformerForOptions, ListerWatcherFactory } from './informer-factory.js';
export { informerKey, informerName, normalizeInformerSpec } from './informer-spec.js';
export type { InformerSpec } from './informer-spec.js';

export { CacheReader } from './cache-reader.js';
export type { CacheListOptions } from './cache-reader.js';
export { InformerCache, NamespaceNotCachedError, DEFAULT_CACHE_SYNC_TIMEOUT_MS } from './informer-cache.js';
export type {
  InformerCacheOptions,
  CacheReadOptions,
  ByIndexOptions,
  CachedObjectOf,
  TypeRef,
  KindLabelSelector,
} from './informer-cache.js';

export { clientListerWatcher, clientListerWatcherFactory } from './client-lister-watcher.js';
export { createDelegatingClient } from './delegating-client.js';
export { DEFAULT_OWN_WRITES_WAIT_MS } from './own-writes.js';
export type { DelegatingClientOptions } from './delegating-client.js';

export {
  parseLabelSelector,
  labelSelectorFromObject,
  matchesLabels,
  formatLabelSelector,
  MATCH_ALL_LABELS,
} from './label-selector.js';
export type { LabelSelector, LabelRequirement, LabelSelectorObject } from './label-selector.js';
export { parseFieldSelector, fieldIndexName } from './field-selector.js';
export type { FieldRequirement } from './field-selector.js';

export {
  InvalidLabelSelectorError,
  IndexError,
  WatchStalledError,
  WatchClosedEarlyError,
  ListTimeoutError,
  CacheSyncTimeoutError,
  CacheNotStartedError,
} from './errors.js';
