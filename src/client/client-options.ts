/**
 * The option and result types of the client contracts (`contracts.ts`): what every implementation
 * — `KubeClient`, the fake client, the cache-backed delegating client — accepts and returns. They
 * live apart from any implementation so that helpers (`paged-list.ts`) and
 * other implementations import types, not a class.
 */
import type { KubeObject } from '../core/object-key.js';

/** The fields of an object the client reads to address it; `kubernetes-types` interfaces fit. */
export interface ObjectLike {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; generateName?: string };
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface SignalOption {
  readonly signal?: AbortSignal;
}

/**
 * What a cached read must reflect (only the cache-backed delegating client reads it; the API
 * server is always as fresh as it gets). `ownWrites`: every write this client has returned,
 * waiting a bounded time for the cache to observe them (docs/read-your-own-writes.md); `cached`:
 * whatever the cache holds now, without waiting.
 */
export type ReadFreshness = 'ownWrites' | 'cached';

export interface GetOptions extends SignalOption {
  readonly namespace?: string;
  /** e.g. `status` or `scale`. */
  readonly subresource?: string;
  /** `0` reads from the server's cache instead of a quorum read. */
  readonly resourceVersion?: string;
  /** For a read from the cache. @defaultValue 'ownWrites' */
  readonly freshness?: ReadFreshness;
}

export interface ListPageOptions extends SignalOption {
  /** Namespace to list; all namespaces when omitted. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  /** Ask for PartialObjectMetadata: items carry apiVersion, kind and metadata only (see `METADATA_ONLY_ACCEPT` in partial-object-metadata.ts). @defaultValue false */
  readonly metadataOnly?: boolean;
  /**
   * Server-side sharding (Kubernetes 1.36+, alpha feature gate `ShardedListAndWatch`): only objects
   * whose 64-bit FNV-1a hash of `metadata.uid` or `metadata.namespace` lies in the given ranges,
   * e.g. `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')` (build it
   * with `formatShardSelector`, shard-selector.ts). A server without the feature ignores it and returns everything:
   * probe first (`probeShardSelectorSupport`).
   */
  readonly shardSelector?: string;
  /**
   * Applied to each item as soon as it is decoded, before the next one is read (a list is decoded
   * item by item as its body arrives), so what the list holds until it returns is the transformed
   * items, e.g. without `managedFields`. An item it throws on is kept as decoded.
   */
  readonly transformItem?: (item: KubeObject) => KubeObject;
}

export interface ListPage<T> {
  items: T[];
  resourceVersion: string;
  continue?: string;
  /** The server's estimate of items after this page, when it gives one. */
  remainingItemCount?: number;
  /**
   * The shard selector the server applied, when it says so (the `shardInfo` of KEP-5866's list
   * metadata). Its absence proves nothing: the 1.36.4 server leaves it out of custom resource lists.
   */
  shardInfo?: { selector: string };
}

export interface ListOptions extends Omit<ListPageOptions, 'continue'> {
  /** Page size; 0 reads everything in one response. @defaultValue DEFAULT_LIST_PAGE_SIZE */
  readonly limit?: number;
  /** Restarts allowed after an expired continue token. @defaultValue DEFAULT_MAX_LIST_RESTARTS */
  readonly maxRestarts?: number;
  /** For a list from the cache. @defaultValue 'ownWrites' */
  readonly freshness?: ReadFreshness;
}

/** A page of a paged list. `restarted` marks the first page of a list started over after an expired continue token: discard earlier pages. */
export interface PagedListPage<T> extends ListPage<T> {
  restarted: boolean;
}

export interface WatchOptions extends SignalOption {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  readonly timeoutSeconds?: number;
  /**
   * Watch-list: first the current state as ADDED events, then a BOOKMARK annotated
   * `k8s.io/initial-events-end: "true"`, then changes. Needs `resourceVersionMatch: 'NotOlderThan'`
   * and Kubernetes 1.27+ (older servers answer 422).
   */
  readonly sendInitialEvents?: boolean;
  readonly resourceVersionMatch?: 'NotOlderThan';
  /** Watch PartialObjectMetadata: objects carry apiVersion, kind and metadata only. @defaultValue false */
  readonly metadataOnly?: boolean;
  /** Only objects in these hash ranges (see `ListPageOptions.shardSelector`); ignored by servers without the feature. */
  readonly shardSelector?: string;
}

export interface WriteOptions extends SignalOption {
  /** Namespace when the object does not carry one. */
  readonly namespace?: string;
  /** Validate and default without persisting (`dryRun=All`). */
  readonly dryRun?: boolean;
  readonly fieldManager?: string;
  readonly fieldValidation?: FieldValidation;
  /**
   * Called with the server's `Warning` header texts when there are any, e.g. the unknown fields of
   * a `fieldValidation: 'Warn'` write (`unknown field "spec.x"`). They are logged either way.
   */
  readonly onWarnings?: (warnings: readonly string[]) => void;
}

export interface UpdateOptions extends WriteOptions {
  readonly subresource?: string;
  /**
   * Send the update even if the object has no metadata.resourceVersion. Built-in kinds then apply
   * it as an unconditional overwrite, which can lose a concurrent write. @defaultValue false
   */
  readonly allowUnconditional?: boolean;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface PatchOptions extends WriteOptions {
  /** json: RFC 6902 (incl. `test` ops); merge: RFC 7386; strategic: built-in kinds only; apply: server-side apply. */
  readonly type: PatchType;
  readonly subresource?: string;
  /** Apply only: take ownership of conflicting fields. */
  readonly force?: boolean;
}

export interface ApplyOptions extends Omit<WriteOptions, 'fieldManager'> {
  /** Required: who owns the applied fields. */
  readonly fieldManager: string;
  readonly force?: boolean;
  readonly subresource?: string;
}

export interface DeleteOptions extends SignalOption {
  readonly namespace?: string;
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Delete only if the object still has this uid / resourceVersion (409 otherwise). */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
}
