/**
 * The client contracts, as role interfaces (controller-runtime's `client.Reader`, `Writer`,
 * `StatusWriter`, `WithWatch` and `meta.RESTMapper`). Code above the client module depends on the
 * narrowest role it needs; `KubeClient` (the API server), `FakeClient` (in memory) and the
 * cache-backed delegating client implement them all, and one conformance suite holds the first two
 * to the same behaviour.
 */
import type { StatusBody } from './api-error.js';
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

/** Reads objects of a kind: one by name, one page, every page, or everything. */
export interface Reader {
  get<T = KubeObject>(type: Kind<T>, name: string, opts?: GetOptions): Promise<T>;
  listPage<T = KubeObject>(type: Kind<T>, opts?: ListPageOptions): Promise<ListPage<T>>;
  listPages<T = KubeObject>(type: Kind<T>, opts?: ListOptions): AsyncGenerator<PagedListPage<T>, void, undefined>;
  list<T = KubeObject>(type: Kind<T>, opts?: ListOptions): Promise<{ items: T[]; resourceVersion: string }>;
}

/** Writes objects (the main resource; status has its own role). */
export interface Writer {
  create<T extends ObjectLike>(obj: T, opts?: WriteOptions): Promise<T>;
  update<T extends ObjectLike>(obj: T, opts?: UpdateOptions): Promise<T>;
  patch<T = KubeObject>(type: Kind<T>, name: string, patch: unknown, opts: PatchOptions): Promise<T>;
  apply<T extends ObjectLike>(obj: T, opts: ApplyOptions): Promise<T>;
  delete<T = KubeObject>(type: Kind<T>, name: string, opts?: DeleteOptions): Promise<T | StatusBody>;
}

/** Patch options for the status subresource: the subresource is implied, the patch type defaults to merge. */
export type StatusPatchOptions = Omit<PatchOptions, 'subresource' | 'type'> & { readonly type?: PatchType };

/** Writes the `/status` subresource, which never bumps `metadata.generation`. */
export interface StatusWriter {
  updateStatus<T extends ObjectLike>(obj: T, opts?: Omit<UpdateOptions, 'subresource'>): Promise<T>;
  patchStatus<T = KubeObject>(type: Kind<T>, name: string, patch: unknown, opts?: StatusPatchOptions): Promise<T>;
  applyStatus<T extends ObjectLike>(obj: T, opts: Omit<ApplyOptions, 'subresource'>): Promise<T>;
}

/** Watches a kind from a resourceVersion; iterating starts the request, breaking out ends it. */
export interface ObjectWatcher {
  watch<T = KubeObject>(type: Kind<T>, opts?: WatchOptions): AsyncIterable<WatchEvent<T>>;
}

/** Maps apiVersion + kind to its resource (plural name, scope, subresources). */
export interface RestMapper {
  /** Maps a kind, asking the server on a miss. Rejects with `NoKindMatchError` for an unknown kind. */
  mapping(type: ResourceType, signal?: AbortSignal): Promise<ResourceMapping>;
  /** The mapping if it is already known, without I/O. */
  cached(type: ResourceType): ResourceMapping | undefined;
}

/**
 * Everything a reconciler, a cache or a helper needs from a client: the four roles plus the REST
 * mapper that knows each kind's scope.
 */
export interface Client extends Reader, Writer, StatusWriter, ObjectWatcher {
  readonly mapper: RestMapper;
}
