/**
 * The client contracts, as role interfaces (controller-runtime's `client.Reader`, `Writer`,
 * `StatusWriter`, `WithWatch` and `meta.RESTMapper`, cut down to one verb where code needs only
 * one). Code above the client module, the helpers included, depends on the narrowest role it needs
 * (`Getter & Patcher` to edit finalizers, `StatusWriter` to write status, `ListWatchClient` to feed
 * an informer); `KubeClient` (the API server), `FakeClient` (in memory) and the cache-backed
 * delegating client implement them all, and one conformance suite holds the first two to the same
 * behaviour. A test double implements only the roles the code under test takes.
 */
import type { StatusBody } from './api-error.js';
import type { ApplyConfiguration, StatusApplyConfiguration } from './apply-configuration.js';
import type {
  ApplyOptions,
  DeleteOptions,
  GetOptions,
  ListOptions,
  ListPage,
  ListPageOptions,
  ObjectLike,
  PagedListPage,
  PatchOptions,
  PatchType,
  UpdateOptions,
  WatchOptions,
  WriteOptions,
} from './client-options.js';
import type { ResourceMapping, ResourceType } from './discovery.js';
import type { Kind } from './kind.js';
import type { WatchEvent } from './watch-decoder.js';
import type { KubeObject } from '../core/object-key.js';

/** Reads one object by name. */
export interface Getter {
  get<T = KubeObject>(type: Kind<T>, name: string, opts?: GetOptions): Promise<T>;
}

/** Reads one page of a list: what every list is built on, and all an informer asks for. */
export interface PageLister {
  listPage<T = KubeObject>(type: Kind<T>, opts?: ListPageOptions): Promise<ListPage<T>>;
}

/** Reads objects of a kind: one by name, one page, every page, or everything. */
export interface Reader extends Getter, PageLister {
  listPages<T = KubeObject>(type: Kind<T>, opts?: ListOptions): AsyncGenerator<PagedListPage<T>, void, undefined>;
  list<T = KubeObject>(type: Kind<T>, opts?: ListOptions): Promise<{ items: T[]; resourceVersion: string }>;
}

export interface Creator {
  create<T extends ObjectLike>(obj: T, opts?: WriteOptions): Promise<T>;
}

export interface Updater {
  update<T extends ObjectLike>(obj: T, opts?: UpdateOptions): Promise<T>;
}

export interface Patcher {
  patch<T = KubeObject>(type: Kind<T>, name: string, patch: unknown, opts: PatchOptions): Promise<T>;
}

/**
 * Server-side apply of the main resource, either of an object (its apiVersion and kind address it)
 * or, typed from the kind, of an apply configuration: `apply(kinds.Deployment, { metadata: { name,
 * namespace }, spec: { replicas: 3 } }, { fieldManager })`. A conflict with another field manager
 * rejects with `ApplyConflictError`, which names each field and its owner.
 */
export interface Applier {
  apply<T extends ObjectLike>(obj: T, opts: ApplyOptions): Promise<T>;
  apply<T>(type: Kind<T>, config: ApplyConfiguration<T>, opts: ApplyOptions): Promise<T>;
}

export interface Deleter {
  delete<T = KubeObject>(type: Kind<T>, name: string, opts?: DeleteOptions): Promise<T | StatusBody>;
}

/** Writes objects (the main resource; status has its own role). */
export interface Writer extends Creator, Updater, Patcher, Applier, Deleter {}

/** Patch options for the status subresource: the subresource is implied, the patch type defaults to merge. */
export type StatusPatchOptions = Omit<PatchOptions, 'subresource' | 'type'> & { readonly type?: PatchType };

/** Writes the `/status` subresource, which never bumps `metadata.generation`. */
export interface StatusWriter {
  updateStatus<T extends ObjectLike>(obj: T, opts?: Omit<UpdateOptions, 'subresource'>): Promise<T>;
  patchStatus<T = KubeObject>(type: Kind<T>, name: string, patch: unknown, opts?: StatusPatchOptions): Promise<T>;
  applyStatus<T extends ObjectLike>(obj: T, opts: Omit<ApplyOptions, 'subresource'>): Promise<T>;
  applyStatus<T>(
    type: Kind<T>,
    config: StatusApplyConfiguration<T>,
    opts: Omit<ApplyOptions, 'subresource'>,
  ): Promise<T>;
}

/** Watches a kind from a resourceVersion; iterating starts the request, breaking out ends it. */
export interface ObjectWatcher {
  watch<T = KubeObject>(type: Kind<T>, opts?: WatchOptions): AsyncIterable<WatchEvent<T>>;
}

/** Whether a client's `watch` can open a watch-list (KEP-3157's `sendInitialEvents`). */
export interface WatchListCapable {
  /**
   * True when `watch` passes `sendInitialEvents` on to the server (which may still refuse it): an
   * informer then syncs with a watch-list first. Absent or false: list, then watch.
   */
  readonly watchList?: boolean;
}

/** What an informer reads a kind through: pages of a list, then a watch, started as a watch-list when it can. */
export interface ListWatchClient extends PageLister, ObjectWatcher, WatchListCapable {}

/** Maps apiVersion + kind to its resource (plural name, scope, subresources). */
export interface RestMapper {
  /** Maps a kind, asking the server on a miss. Rejects with `NoKindMatchError` for an unknown kind. */
  mapping(type: ResourceType, signal?: AbortSignal): Promise<ResourceMapping>;
  /** The mapping if it is already known, without I/O. */
  cached(type: ResourceType): ResourceMapping | undefined;
}

/**
 * Everything a reconciler, a cache or a helper needs from a client: every role plus the REST mapper
 * that knows each kind's scope.
 */
export interface Client extends Reader, Writer, StatusWriter, ObjectWatcher, WatchListCapable {
  readonly mapper: RestMapper;
}
