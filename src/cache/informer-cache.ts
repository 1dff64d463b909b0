/**
 * The cache as controllers read it: every kind, read through shared informers that start lazily.
 * The first read of a kind creates its informer (starting it, since the factory runs) and waits for
 * it to sync; later reads are served from memory. Reads have the client's shape: `get` throws the
 * same 404 `ApiError` the API server would (so `ignoreNotFound` works), `list` takes selectors.
 *
 * Scope: the whole cluster by default, or a set of namespaces (one informer per namespace, reads
 * merged); cluster-scoped kinds are always watched cluster-wide.
 */
import { ApiError } from '../client/api-error.js';
import { OperatorRuntimeError } from '../core/errors.js';
import type { Kind } from '../client/kind.js';
import { kindKey, type KubeObject, type ObjectRef } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { CacheReader, type CacheListOptions } from './cache-reader.js';
import { CacheNotStartedError } from './errors.js';
import type { IndexFunc } from './indexer.js';
import type { InformerFactory } from './informer-factory.js';
import type { InformerSpec } from './informer-spec.js';
import { parseLabelSelector } from './label-selector.js';
import type { SharedInformer } from './informer.js';

/** How long a first read waits for its informer to sync. @defaultValue 120_000 (controller-runtime's CacheSyncTimeout) */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000;

/** A kind to read. `metadataOnly` reads from a metadata-only informer (objects carry only metadata). */
export interface TypeRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadataOnly?: boolean;
}

export interface InformerCacheOptions {
  /** Watch only these namespaces instead of the whole cluster. @defaultValue all namespaces */
  readonly namespaces?: readonly string[];
  /**
   * Whether a kind is namespaced (the REST mapper knows); cluster-scoped kinds ignore `namespaces`.
   * @defaultValue every kind is treated as namespaced
   */
  readonly isNamespaced?: (type: TypeRef) => boolean;
  /** @defaultValue {@link DEFAULT_CACHE_SYNC_TIMEOUT_MS} */
  readonly syncTimeoutMs?: number;
  /**
   * Cache only the objects of a kind that match a server-side label selector (controller-runtime's
   * `ByObject`): every read, handler and index of that kind sees only them. For owned kinds such as
   * Secrets, so the operator holds its own objects in memory, not the whole cluster's.
   * @defaultValue every kind unfiltered
   */
  readonly labelSelectorsByKind?: readonly KindLabelSelector[];
}

/** A server-side label selector for every informer of one kind. */
export interface KindLabelSelector {
  readonly apiVersion: string;
  readonly kind: string;
  /** String form, e.g. `app.kubernetes.io/managed-by=my-operator`. */
  readonly labelSelector: string;
}

export interface CacheReadOptions {
  /** Cancels the wait for a lazily started informer's first sync. */
  readonly signal?: AbortSignal;
}

export interface ByIndexOptions extends CacheReadOptions {
  /** Only objects in this namespace. Index values are not per namespace: without it, every namespace's objects under the value. */
  readonly namespace?: string;
}

/**
 * The object type of a kind read from the cache: what `kind<T>()` / `kinds.Job` carry, else
 * `KubeObject` (a bare `{ apiVersion, kind }`).
 */
export type CachedObjectOf<K> =
  K extends Kind<infer T> ? (unknown extends T ? KubeObject : T extends KubeObject ? T : KubeObject) : KubeObject;

/** A namespace outside the cache's configured set was read. */
export class NamespaceNotCachedError extends OperatorRuntimeError {
  declare readonly code: 'ERR_NAMESPACE_NOT_CACHED';

  constructor(namespace: string) {
    super('ERR_NAMESPACE_NOT_CACHED', `namespace ${JSON.stringify(namespace)} is not among the cache's namespaces`);
  }
}

export class InformerCache {
  private readonly namespaces: readonly string[] | undefined;
  private readonly isNamespaced: (type: TypeRef) => boolean;
  private readonly syncTimeoutMs: number;
  private readonly labelSelectors: ReadonlyMap<string, string>;
  /** The informer each (kind, metadataOnly, namespace scope) read resolved to; see informerForNamespace. */
  private readonly informersByRead = new Map<string, SharedInformer<KubeObject>>();

  constructor(
    private readonly factory: InformerFactory,
    options: InformerCacheOptions = {},
  ) {
    this.namespaces = options.namespaces?.length ? [...new Set(options.namespaces)] : undefined;
    this.isNamespaced = options.isNamespaced ?? (() => true);
    this.syncTimeoutMs = options.syncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
    // Parsed now so a bad selector fails at construction, not at the first read.
    for (const k of options.labelSelectorsByKind ?? []) parseLabelSelector(k.labelSelector);
    this.labelSelectors = new Map((options.labelSelectorsByKind ?? []).map((k) => [kindKey(k), k.labelSelector]));
  }

  /** The informers behind a kind (one, or one per namespace), created if needed; for handlers and indexes. */
  informersFor<T extends KubeObject = KubeObject>(type: TypeRef): SharedInformer<T>[] {
    return this.specsFor(type).map((spec) => this.factory.informerFor<T>(spec));
  }

  /**
   * Adds an index to every informer of the kind (one per namespace with `namespaces`); use
   * `field:<path>` as the name to serve field selectors on it. Allowed at any time, before or after
   * start: an index added late is built at once from what the informer holds. Adding the same
   * function under a name again is a no-op; a different function under a taken name throws
   * `IndexError`. `fn` gets the kind's object type: `addIndex(kinds.Job, …, (job) => …)` types `job`
   * as `Job`. See docs/indexes.md.
   */
  addIndex<K extends TypeRef>(type: K, name: string, fn: IndexFunc<CachedObjectOf<K>>): void {
    for (const i of this.informersFor<CachedObjectOf<K>>(type)) i.addIndex(name, fn);
  }

  /** The object, or a 404 `ApiError` as the API server would answer. */
  async get<T extends KubeObject = KubeObject>(
    type: TypeRef,
    ref: ObjectRef,
    options: CacheReadOptions = {},
  ): Promise<T> {
    const informer = this.informerForNamespace<T>(type, ref.namespace);
    await this.synced(informer, options);
    const obj = new CacheReader(informer.reader).get(ref);
    if (obj === undefined) {
      throw new ApiError({
        status: 404,
        reason: 'NotFound',
        message: `${type.kind} ${JSON.stringify(ref.name)} not found (cache)`,
        details: { name: ref.name, kind: type.kind },
      });
    }
    return obj;
  }

  async list<T extends KubeObject = KubeObject>(
    type: TypeRef,
    options: CacheListOptions & CacheReadOptions = {},
  ): Promise<T[]> {
    const informers =
      options.namespace !== undefined
        ? [this.informerForNamespace<T>(type, options.namespace)]
        : this.informersFor<T>(type);
    await Promise.all(informers.map((i) => this.synced(i, options)));
    return informers.flatMap((i) => new CacheReader(i.reader).list(options));
  }

  /**
   * The objects of the kind indexed under `value` in `index`, typed by the kind
   * (`byIndex(kinds.Job, …)` is `Promise<Job[]>`). Values are not per namespace: objects of every
   * cached namespace come back unless `options.namespace` narrows them (an index of owner names
   * should key by `<namespace>/<name>` or be read with `namespace`). Waits for the kind's first
   * sync; `IndexError` for an index never added.
   */
  async byIndex<K extends TypeRef>(
    type: K,
    index: string,
    value: string,
    options: ByIndexOptions = {},
  ): Promise<CachedObjectOf<K>[]> {
    const namespace = options.namespace;
    const informers =
      namespace !== undefined
        ? [this.informerForNamespace<CachedObjectOf<K>>(type, namespace)]
        : this.informersFor<CachedObjectOf<K>>(type);
    await Promise.all(informers.map((i) => this.synced(i, options)));
    const found = informers.flatMap((i) => i.reader.byIndex(index, value));
    return namespace === undefined ? found : found.filter((o) => o.metadata?.namespace === namespace);
  }

  /**
   * The informers a read of `type` uses (the one for `namespace`, or every one of the kind when it
   * is undefined), created if needed, once each has synced: for a caller that waits on them
   * before reading (read-your-own-writes, own-writes.ts). `NamespaceNotCachedError` as reads.
   */
  async syncedInformers(
    type: TypeRef,
    namespace: string | undefined,
    options: CacheReadOptions = {},
  ): Promise<SharedInformer<KubeObject>[]> {
    const informers = namespace !== undefined ? [this.informerForNamespace(type, namespace)] : this.informersFor(type);
    await Promise.all(informers.map((i) => this.synced(i, options)));
    return informers;
  }

  /**
   * The informers already created that would hold an object of `type` in `namespace`, full and
   * metadata-only ones alike, each with its kind's server-side label selector (`''`: none); none
   * is created. What a write of such an object must be observed by before reads are fresh.
   */
  existingInformersHolding(
    type: TypeRef,
    namespace: string | undefined,
  ): { readonly informer: SharedInformer<KubeObject>; readonly labelSelector: string }[] {
    let scope: { readonly namespace?: string } = {};
    if (this.namespaces && this.isNamespaced(type)) {
      if (namespace === undefined || !this.namespaces.includes(namespace)) return []; // not cached: nothing to wait for
      scope = { namespace };
    }
    const labelSelector = this.labelSelectors.get(kindKey(type)) ?? '';
    const found: { informer: SharedInformer<KubeObject>; labelSelector: string }[] = [];
    for (const metadataOnly of [false, true]) {
      const base = this.specsFor({ apiVersion: type.apiVersion, kind: type.kind, metadataOnly })[0]!;
      const informer = this.factory.existing({ ...base, ...scope });
      if (informer) found.push({ informer, labelSelector });
    }
    return found;
  }

  private specsFor(type: TypeRef): InformerSpec[] {
    const labelSelector = this.labelSelectors.get(kindKey(type));
    const base: InformerSpec = {
      apiVersion: type.apiVersion,
      kind: type.kind,
      ...omitUndefined({ labelSelector: labelSelector || undefined, metadataOnly: type.metadataOnly || undefined }),
    };
    if (!this.namespaces || !this.isNamespaced(type)) return [base];
    return this.namespaces.map((namespace) => ({ ...base, namespace }));
  }

  private informerForNamespace<T extends KubeObject>(type: TypeRef, namespace: string | undefined): SharedInformer<T> {
    let scope: string | undefined;
    if (this.namespaces && this.isNamespaced(type)) {
      if (namespace === undefined || !this.namespaces.includes(namespace))
        throw new NamespaceNotCachedError(namespace ?? '');
      scope = namespace;
    }
    // Every get goes through here: the factory's lookup normalizes the spec and builds its key each
    // time, so the informer a read resolved to is remembered (the factory never replaces one).
    const readKey = `${type.apiVersion}\n${type.kind}\n${type.metadataOnly ? 'meta' : 'full'}\n${scope === undefined ? '*' : `ns:${scope}`}`;
    let informer = this.informersByRead.get(readKey);
    if (!informer) {
      const base = this.specsFor(type)[0]!;
      informer = this.factory.informerFor(scope === undefined ? base : { ...base, namespace: scope });
      this.informersByRead.set(readKey, informer);
    }
    return informer as unknown as SharedInformer<T>;
  }

  private async synced(
    informer: Pick<SharedInformer<KubeObject>, 'hasSynced' | 'waitForSync'>,
    options: CacheReadOptions,
  ): Promise<void> {
    if (informer.hasSynced()) return;
    // Without a running factory a lazily created informer would never sync: fail fast instead.
    if (!this.factory.started) throw new CacheNotStartedError();
    await informer.waitForSync(options.signal ?? new AbortController().signal, this.syncTimeoutMs);
  }
}
