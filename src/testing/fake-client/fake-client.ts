/**
 * `FakeClient`: an in-memory implementation of the `Client` interface that behaves like
 * kube-apiserver for the things operators depend on — resourceVersion preconditions and conflicts,
 * generation, the status subresource, finalizers and deletionTimestamp, delete preconditions,
 * selectors, patches, approximate server-side apply, paged lists and resumable watches — with the
 * server's error shapes. The conformance suite in `../conformance` runs the same tests against this
 * and against a real API server. What it does not model is listed in README.md beside it.
 */
import { nameOf, typeOf } from '../../core/object-key.js';
import { listAll, listPages } from '../../client/paged-list.js';
import { randomUUID } from 'node:crypto';
import type { Client, RestMapper } from '../../client/contracts.js';
import type { ResourceMapping, ResourceType } from '../../client/discovery.js';
import type { Kind } from '../../client/kind.js';
import {
  applyArguments,
  type ApplyConfiguration,
  type StatusApplyConfiguration,
} from '../../client/apply-configuration.js';
import type { StatusBody } from '../../client/api-error.js';
import { ApplyConflictError } from '../../client/apply-conflict-error.js';
import {
  type ApplyOptions,
  type DeleteOptions,
  type GetOptions,
  type ListOptions,
  type ListPage,
  type ListPageOptions,
  type ObjectLike,
  type PagedListPage,
  type PatchOptions,
  type PatchType,
  type UpdateOptions,
  type WatchOptions,
  type WriteOptions,
} from '../../client/client-options.js';
import type { WatchEvent } from '../../client/watch-decoder.js';
import { AbortedError, InvalidOptionError } from '../../core/errors.js';
import { realClock, type Clock } from '../../core/clock.js';
import type { KubeObject } from '../../core/object-key.js';
import { throwIfAborted } from '../../core/abort.js';
import { omitUndefined } from '../../core/omit-undefined.js';
import {
  alreadyExists,
  applyConflict,
  badRequest,
  conflict,
  continueExpired,
  internalError,
  invalid,
  invalidWatchList,
  namespaceNotFound,
  namespaceTerminating,
  noSuchRoute,
  notFound,
  patchRejected,
  preconditionFailed,
  tooOldResourceVersion,
  unsupportedMediaType,
  type RequestWhere,
} from './api-errors.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { unknownFields } from './schema-validation.js';
import { applyJsonPatch, isJsonPatch, JsonPatchError } from './json-patch.js';
import { clone, isObject, type JsonObject } from './json-value.js';
import { KindRegistry, type KindInfo, type KindRegistration } from './kind-registry.js';
import { applyConfig, managedFieldsAfterUpdate } from './managed-fields.js';
import { applyMergePatch, applyStrategicMergePatch } from './merge-patch.js';
import { ObjectStore, RevisionCompactedError, type Change } from './object-store.js';
import { matchesFilter, type FakeRequest, type FakeVerb, type Interceptor, type RequestFilter } from './requests.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import {
  InvalidShardSelectorError,
  parseShardSelector,
  selectorMatches,
  type ShardSelector,
} from '../../client/shard-selector.js';
import { EventQueue, eventFor, type ObjectFilter } from './watch-stream.js';
import { collectGarbageOnce } from './garbage-collector.js';
import {
  asStrings,
  isNoop,
  metaOf,
  prepareCreate,
  prepareUpdate,
  regionFor,
  withManagedFields,
} from './write-rules.js';

export interface FakeClientOptions {
  /** Clock for timestamps and watch timeouts. @defaultValue realClock */
  readonly clock?: Clock;
  /**
   * How many changes the fake remembers for watches and consistent list pages; a watch or continue
   * token from before the window gets 410 Gone. @defaultValue DEFAULT_WATCH_HISTORY_LIMIT
   */
  readonly watchHistoryLimit?: number;
  /**
   * Reject creates in a namespace that does not exist (404) or is terminating (403), as the
   * server's NamespaceLifecycle admission does; `default`, `kube-system`, `kube-public` and
   * `kube-node-lease` then exist from the start. Off, any namespace name is accepted.
   * @defaultValue false
   */
  readonly requireNamespaces?: boolean;
  /** Custom kinds to serve, besides the built-ins. */
  readonly kinds?: readonly KindRegistration[];
  /** CustomResourceDefinition manifests whose kinds to serve. */
  readonly crds?: readonly object[];
  /** Objects present from the start (created without counting or interception). */
  readonly objects?: readonly object[];
  /** Field manager of writes that name none; the real client's user agent. @defaultValue 'operator-runtime' */
  readonly defaultFieldManager?: string;
  /**
   * Honour `shardSelector` on list and watch, as Kubernetes 1.36 with the `ShardedListAndWatch`
   * feature gate does (an invalid selector is a 500 "invalid shard selector"). False: ignore it,
   * as 1.20 and 1.36 without the gate do. @defaultValue true
   */
  readonly shardedListAndWatch?: boolean;
}

/** @defaultValue of `watchHistoryLimit`. */
export const DEFAULT_WATCH_HISTORY_LIMIT = 1000;

/** Namespaces a fresh API server has. */
const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

const PATCH_TYPES: ReadonlySet<string> = new Set(['json', 'merge', 'strategic', 'apply']);
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

interface ActiveWatch {
  readonly kindId: string;
  readonly path: string;
  readonly bookmarks: boolean;
  readonly apiVersion: string;
  readonly kind: string;
  readonly queue: EventQueue<WatchEvent<JsonObject>>;
}

export class FakeClient implements Client {
  private readonly kinds = new KindRegistry();
  private readonly store: ObjectStore;
  private readonly clock: Clock;
  private readonly requireNamespaces: boolean;
  private readonly defaultFieldManager: string;
  private readonly shardedListAndWatch: boolean;
  private readonly interceptors: Interceptor[] = [];
  private readonly log: FakeRequest[] = [];
  private readonly watches = new Set<ActiveWatch>();
  private formattedNow = { ms: Number.NaN, text: '' };
  /** Answers `sendInitialEvents` watches as a current API server does (informers sync by watch-list). */
  readonly watchList = true;
  /** The registered kinds as a REST mapper: an unregistered kind is a `NoKindMatchError`, as discovery answers. */
  readonly mapper: RestMapper = {
    mapping: async (type, signal) => {
      throwIfAborted(signal);
      return toMapping(this.kinds.require(type));
    },
    cached: (type) => {
      const info = this.kinds.lookup(type);
      return info ? toMapping(info) : undefined;
    },
  };

  constructor(options: FakeClientOptions = {}) {
    const limit = options.watchHistoryLimit ?? DEFAULT_WATCH_HISTORY_LIMIT;
    if (!(limit >= 1)) throw new InvalidOptionError('watchHistoryLimit', 'must be >= 1');
    // Start above 0 so "0" (any version) and small literals in tests never collide with real ones.
    this.store = new ObjectStore(limit, 100);
    this.clock = options.clock ?? realClock;
    this.requireNamespaces = options.requireNamespaces ?? false;
    this.defaultFieldManager = options.defaultFieldManager ?? 'operator-runtime';
    this.shardedListAndWatch = options.shardedListAndWatch ?? true;
    for (const k of options.kinds ?? []) this.kinds.register(k);
    for (const crd of options.crds ?? []) this.kinds.registerCrd(crd);
    if (this.requireNamespaces) {
      for (const name of SYSTEM_NAMESPACES) this.seed({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    for (const obj of options.objects ?? []) this.seed(obj);
  }

  // ---- test controls -------------------------------------------------------------------------

  /** Serves a custom kind (e.g. `{ apiVersion: 'example.com/v1', kind: 'Widget', plural: 'widgets', statusSubresource: true }`). */
  registerKind(registration: KindRegistration): KindInfo {
    return this.kinds.register(registration);
  }

  /** Serves the kinds of a CustomResourceDefinition manifest (scope, status subresource, schema). */
  registerCrd(manifest: object): KindInfo[] {
    return this.kinds.registerCrd(manifest);
  }

  /** Adds an interceptor (run in order before every request); returns a function that removes it. */
  intercept(interceptor: Interceptor): () => void {
    this.interceptors.push(interceptor);
    return () => {
      const i = this.interceptors.indexOf(interceptor);
      if (i >= 0) this.interceptors.splice(i, 1);
    };
  }

  /** Every request served so far (including those an interceptor or the fake failed), oldest first. */
  get requests(): readonly FakeRequest[] {
    return this.log;
  }

  /** Number of requests matching `filter` (all when omitted), e.g. `countRequests(isWrite)`. */
  countRequests(filter?: RequestFilter): number {
    return this.log.filter((r) => matchesFilter(r, filter)).length;
  }

  /** Forgets the request log (interceptors stay). */
  clearRequests(): void {
    this.log.length = 0;
  }

  /** The current resourceVersion of the whole store (what a list now would return). */
  get resourceVersion(): string {
    return String(this.store.currentRevision);
  }

  /** Forgets all change history, as an etcd compaction: older watches and continue tokens get 410. */
  compact(): void {
    this.store.compact();
  }

  /** Sends a BOOKMARK at the current resourceVersion to every open watch that asked for bookmarks. */
  bookmark(): void {
    const resourceVersion = this.resourceVersion;
    for (const w of this.watches) {
      if (w.bookmarks)
        w.queue.push({
          type: 'BOOKMARK',
          object: { apiVersion: w.apiVersion, kind: w.kind, metadata: { resourceVersion } },
        } as WatchEvent<JsonObject>);
    }
  }

  /** Ends every open watch cleanly, as the server does at its timeout or on restart; clients resume from their last resourceVersion. */
  closeWatches(): void {
    for (const w of this.watches) w.queue.end();
  }

  /**
   * Fails every open watch with the 410 Expired ERROR the server sends when a watch falls behind its
   * cache window, after the events already queued; clients must relist.
   */
  expireWatches(): void {
    for (const w of this.watches)
      w.queue.fail(
        tooOldResourceVersion(String(this.store.oldestRevision), this.resourceVersion, {
          method: 'WATCH',
          path: w.path,
        }),
      );
  }

  /** The stored object, read without a request (not counted, not intercepted), or undefined. */
  peek<T = KubeObject>(type: Kind<T>, name: string, namespace?: string): T | undefined {
    const kind = this.kinds.require(type);
    const obj = this.store.get(kindId(kind), objectKey(kind, namespace, name));
    return obj ? (clone(obj) as T) : undefined;
  }

  /** The stored object's resourceVersion, read without a copy (what `peek` would clone whole), or undefined. */
  peekResourceVersion(type: Kind, name: string, namespace?: string): string | undefined {
    const kind = this.kinds.require(type);
    const rv = (this.store.get(kindId(kind), objectKey(kind, namespace, name))?.metadata as JsonObject | undefined)
      ?.resourceVersion;
    return typeof rv === 'string' ? rv : undefined;
  }

  /** Number of watches currently open. */
  get openWatches(): number {
    return this.watches.size;
  }

  // ---- reads ---------------------------------------------------------------------------------

  async get<T = KubeObject>(type: Kind<T>, name: string, opts: GetOptions = {}): Promise<T> {
    const kind = this.kinds.require(type);
    const where = this.where('GET', kind, {
      op: 'get',
      namespace: opts.namespace,
      name,
      subresource: opts.subresource,
    });
    await this.serve({
      verb: 'get',
      kind,
      namespace: opts.namespace,
      name,
      subresource: opts.subresource,
      signal: opts.signal,
    });
    this.checkSubresource(kind, opts.subresource, where);
    const obj = this.store.get(kindId(kind), objectKey(kind, opts.namespace, name));
    if (!obj) throw notFound(kind, name, where);
    return clone(obj) as T;
  }

  async listPage<T = KubeObject>(type: Kind<T>, opts: ListPageOptions = {}): Promise<ListPage<T>> {
    const kind = this.kinds.require(type);
    const query = new URLSearchParams();
    if (opts.labelSelector) query.set('labelSelector', opts.labelSelector);
    if (opts.fieldSelector) query.set('fieldSelector', opts.fieldSelector);
    if (opts.shardSelector) query.set('shardSelector', opts.shardSelector);
    if (opts.limit !== undefined && opts.limit > 0) query.set('limit', String(opts.limit));
    if (opts.continue) query.set('continue', opts.continue);
    if (opts.resourceVersion !== undefined) query.set('resourceVersion', opts.resourceVersion);
    const where = this.where('GET', kind, { op: 'list', namespace: opts.namespace, query });
    await this.serve({ verb: 'list', kind, namespace: opts.namespace, signal: opts.signal });
    const matches = this.filterFor(kind, opts, where);
    const scoped = this.scopeFilter(kind, opts.namespace);

    let revision = this.store.currentRevision;
    let after: string | undefined;
    let limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : undefined;
    let entries: [string, JsonObject][];
    if (opts.continue) {
      const pos = decodeContinue(opts.continue);
      if (!pos) throw badRequest('invalid continue token: continue key is not valid', where);
      revision = pos.revision;
      after = pos.after;
      entries = this.snapshotOr410(kind, revision, () => continueExpired(where));
    } else if (opts.resourceVersion === '0') {
      // Served from the watch cache, which ignores the limit (as kube-apiserver does).
      limit = undefined;
      entries = this.store.list(kindId(kind));
    } else if (
      opts.resourceVersion !== undefined &&
      opts.resourceVersion !== '' &&
      opts.resourceVersionMatch === 'Exact'
    ) {
      revision = this.parseRevision(opts.resourceVersion, where);
      entries = this.snapshotOr410(kind, revision, () =>
        tooOldResourceVersion(opts.resourceVersion!, String(this.store.oldestRevision), where),
      );
    } else {
      entries = this.store.list(kindId(kind));
    }
    const inScope = entries.filter(([key, obj]) => scoped(obj) && (after === undefined || key > after));
    const items: JsonObject[] = [];
    let lastKey: string | undefined;
    let consumed = 0;
    for (const [key, obj] of inScope) {
      if (limit !== undefined && items.length >= limit) break;
      consumed++;
      lastKey = key;
      if (matches(obj)) items.push(withTypeMeta(clone(obj), kind));
    }
    const page: ListPage<T> = { items: items as T[], resourceVersion: String(revision) };
    const remaining = inScope.length - consumed;
    if (limit !== undefined && remaining > 0 && lastKey !== undefined) {
      page.continue = encodeContinue({ revision, after: lastKey });
      if (!opts.labelSelector && !opts.fieldSelector) page.remainingItemCount = remaining;
    }
    return page;
  }

  /** Pages through a list exactly as KubeClient does (the same code), restarting after an expired continue token. */
  listPages<T = KubeObject>(type: Kind<T>, opts: ListOptions = {}): AsyncGenerator<PagedListPage<T>, void, undefined> {
    return listPages<T>((t, o) => this.listPage(t, o), type, opts);
  }

  list<T = KubeObject>(type: Kind<T>, opts: ListOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
    return listAll(this.listPages<T>(type, opts));
  }

  watch<T = KubeObject>(type: Kind<T>, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    return {
      [Symbol.asyncIterator]: () => this.watchEvents(type, opts) as AsyncGenerator<WatchEvent<T>, void, undefined>,
    };
  }

  // ---- writes --------------------------------------------------------------------------------

  async create<T extends ObjectLike>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const kind = this.kinds.require(typeOf(obj));
    const namespace = obj.metadata?.namespace ?? opts.namespace;
    const where = this.where('POST', kind, { op: 'create', namespace });
    await this.serve({
      verb: 'create',
      kind,
      namespace,
      name: obj.metadata?.name,
      dryRun: opts.dryRun,
      body: obj,
      signal: opts.signal,
    });
    const warnings = this.checkFieldValidation(kind, obj, opts, where);
    const created = this.doCreate(kind, clone(obj) as unknown as JsonObject, namespace, opts, where) as unknown as T;
    if (warnings.length > 0) opts.onWarnings?.(warnings);
    return created;
  }

  /**
   * `fieldValidation` of a create or update, as a current API server decodes a custom resource:
   * Strict rejects unknown fields (400, one message naming them all), Warn returns them as the
   * warnings the server would send; Ignore (and no option) prunes silently.
   */
  private checkFieldValidation(kind: KindInfo, obj: object, opts: WriteOptions, where: RequestWhere): string[] {
    if (!kind.schema || (opts.fieldValidation !== 'Strict' && opts.fieldValidation !== 'Warn')) return [];
    const unknown = unknownFields(obj as JsonObject, kind.schema).map((f) => `unknown field "${f}"`);
    if (unknown.length === 0) return [];
    if (opts.fieldValidation === 'Warn') return unknown;
    const version = kind.apiVersion.slice(kind.apiVersion.indexOf('/') + 1);
    throw badRequest(
      `${kind.kind} in version "${version}" cannot be handled as a ${kind.kind}: strict decoding error: ${unknown.join(', ')}`,
      where,
    );
  }

  async update<T extends ObjectLike>(obj: T, opts: UpdateOptions = {}): Promise<T> {
    if (!obj.metadata?.resourceVersion && !opts.allowUnconditional) {
      throw new InvalidOptionError(
        'metadata.resourceVersion',
        'update needs the resourceVersion that was read (or allowUnconditional: true)',
      );
    }
    const kind = this.kinds.require(typeOf(obj));
    const namespace = obj.metadata?.namespace ?? opts.namespace;
    const name = nameOf(obj);
    const where = this.where('PUT', kind, { op: 'update', namespace, name, subresource: opts.subresource });
    await this.serve({
      verb: 'update',
      kind,
      namespace,
      name,
      subresource: opts.subresource,
      dryRun: opts.dryRun,
      body: obj,
      signal: opts.signal,
    });
    this.checkSubresource(kind, opts.subresource, where);
    const warnings = this.checkFieldValidation(kind, obj, opts, where);
    const body = clone(obj) as unknown as JsonObject;
    const key = objectKey(kind, namespace, name);
    const existing = this.store.get(kindId(kind), key);
    if (!existing) throw notFound(kind, name, where);
    const meta = metaOf(body);
    if (meta.uid !== undefined && meta.uid !== '' && meta.uid !== metaOf(existing).uid) {
      throw conflict(kind, name, where);
    }
    const rv = meta.resourceVersion;
    if (rv === undefined || rv === '') {
      if (!kind.builtIn) {
        throw invalid(
          kind,
          name,
          [
            {
              reason: 'FieldValueInvalid',
              field: 'metadata.resourceVersion',
              message: 'Invalid value: 0x0: must be specified for an update',
            },
          ],
          where,
          'resource',
        );
      }
    } else if (rv !== metaOf(existing).resourceVersion) throw conflict(kind, name, where);
    const updated = this.writeUpdate(kind, key, existing, body, opts.subresource, opts, where) as unknown as T;
    if (warnings.length > 0) opts.onWarnings?.(warnings);
    return updated;
  }

  updateStatus<T extends ObjectLike>(obj: T, opts: Omit<UpdateOptions, 'subresource'> = {}): Promise<T> {
    return this.update(obj, { ...opts, subresource: 'status' });
  }

  async patch<T = KubeObject>(type: Kind<T>, name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    if (!PATCH_TYPES.has(opts.type)) throw new InvalidOptionError('type', `unknown patch type ${String(opts.type)}`);
    if (opts.type === 'apply' && !opts.fieldManager)
      throw new InvalidOptionError('fieldManager', 'server-side apply needs a fieldManager');
    if (opts.force && opts.type !== 'apply') throw new InvalidOptionError('force', 'only applies to server-side apply');
    const kind = this.kinds.require(type);
    const query = new URLSearchParams();
    if (opts.fieldManager) query.set('fieldManager', opts.fieldManager);
    if (opts.force) query.set('force', 'true');
    const where = this.where('PATCH', kind, {
      op: 'patch',
      namespace: opts.namespace,
      name,
      subresource: opts.subresource,
      query,
    });
    await this.serve({
      verb: 'patch',
      kind,
      namespace: opts.namespace,
      name,
      subresource: opts.subresource,
      patchType: opts.type,
      dryRun: opts.dryRun,
      body: patch,
      signal: opts.signal,
    });
    this.checkSubresource(kind, opts.subresource, where);
    if (opts.type === 'strategic' && !kind.builtIn) throw unsupportedMediaType(where);
    const doc: unknown = typeof patch === 'string' ? parseBody(patch, where) : clone(patch);
    const key = objectKey(kind, opts.namespace, name);
    const existing = this.store.get(kindId(kind), key);
    if (opts.type === 'apply') {
      try {
        return this.doApply(kind, name, key, existing, doc, opts, where) as T;
      } catch (err) {
        // As KubeClient: the server's 409 read back field by field.
        throw (
          ApplyConflictError.from(err, {
            kind: kind.kind,
            name,
            fieldManager: opts.fieldManager!,
            ...omitUndefined({ namespace: opts.namespace, subresource: opts.subresource }),
          }) ?? err
        );
      }
    }
    if (!existing) throw notFound(kind, name, where);
    let patched: unknown;
    if (opts.type === 'json') {
      if (!isJsonPatch(doc))
        throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch', where);
      try {
        patched = applyJsonPatch(existing, doc);
      } catch (err) {
        if (err instanceof JsonPatchError) throw patchRejected(where);
        throw err;
      }
    } else {
      if (!isObject(doc)) throw badRequest('the patch is not a JSON object', where);
      patched = opts.type === 'merge' ? applyMergePatch(existing, doc) : applyStrategicMergePatch(existing, doc);
    }
    if (!isObject(patched)) throw patchRejected(where);
    // A resourceVersion left in (or put into) the patched object is a precondition, as on the server.
    const rv = isObject(patched.metadata) ? patched.metadata.resourceVersion : undefined;
    if (rv !== undefined && rv !== null && rv !== '' && rv !== metaOf(existing).resourceVersion)
      throw conflict(kind, name, where);
    // A changed uid is no precondition for a patch (unlike an update): it is an immutable field.
    const uid = isObject(patched.metadata) ? patched.metadata.uid : undefined;
    if (uid !== undefined && uid !== null && uid !== '' && uid !== metaOf(existing).uid) {
      throw invalid(
        kind,
        name,
        [
          {
            reason: 'FieldValueInvalid',
            field: 'metadata.uid',
            message: `Invalid value: ${JSON.stringify(String(uid))}: field is immutable`,
          },
        ],
        where,
      );
    }
    return this.writeUpdate(kind, key, existing, patched, opts.subresource, opts, where) as T;
  }

  patchStatus<T = KubeObject>(
    type: Kind<T>,
    name: string,
    patch: unknown,
    opts: Omit<PatchOptions, 'subresource' | 'type'> & { type?: PatchType } = {},
  ): Promise<T> {
    return this.patch<T>(type, name, patch, { ...opts, type: opts.type ?? 'merge', subresource: 'status' });
  }

  apply<T extends ObjectLike>(obj: T, opts: ApplyOptions): Promise<T>;
  apply<T>(type: Kind<T>, config: ApplyConfiguration<T>, opts: ApplyOptions): Promise<T>;
  async apply<T>(first: object, second: object, third?: object): Promise<T> {
    const { obj, opts } = applyArguments(first, second, third);
    const meta = obj.metadata as (ObjectLike['metadata'] & { managedFields?: unknown }) | undefined;
    let body: ObjectLike = obj;
    if (meta && 'managedFields' in meta) {
      const { managedFields: _dropped, ...rest } = meta;
      body = { ...obj, metadata: rest };
    }
    return this.patch<T>(typeOf(obj), nameOf(obj), body, {
      ...opts,
      namespace: obj.metadata?.namespace ?? opts.namespace,
      type: 'apply',
    });
  }

  applyStatus<T extends ObjectLike>(obj: T, opts: Omit<ApplyOptions, 'subresource'>): Promise<T>;
  applyStatus<T>(
    type: Kind<T>,
    config: StatusApplyConfiguration<T>,
    opts: Omit<ApplyOptions, 'subresource'>,
  ): Promise<T>;
  async applyStatus<T>(first: object, second: object, third?: object): Promise<T> {
    const { obj, opts } = applyArguments(first, second, third);
    return this.apply(obj as T & ObjectLike, { ...opts, subresource: 'status' });
  }

  async delete<T = KubeObject>(type: Kind<T>, name: string, opts: DeleteOptions = {}): Promise<T | StatusBody> {
    const kind = this.kinds.require(type);
    const where = this.where('DELETE', kind, { op: 'delete', namespace: opts.namespace, name });
    await this.serve({
      verb: 'delete',
      kind,
      namespace: opts.namespace,
      name,
      dryRun: opts.dryRun,
      signal: opts.signal,
    });
    const key = objectKey(kind, opts.namespace, name);
    const existing = this.store.get(kindId(kind), key);
    if (!existing) throw notFound(kind, name, where);
    const meta = metaOf(existing);
    const pre = opts.preconditions;
    if (pre?.uid !== undefined && pre.uid !== meta.uid)
      throw preconditionFailed(kind, name, 'UID', pre.uid, String(meta.uid), where);
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== meta.resourceVersion) {
      throw preconditionFailed(kind, name, 'ResourceVersion', pre.resourceVersion, String(meta.resourceVersion), where);
    }
    return this.deleteExisting(kind, key, existing, opts.propagationPolicy, opts.dryRun ?? false) as T | StatusBody;
  }

  /**
   * Runs the garbage collector of kube-controller-manager once, to a fixed point: deletes objects
   * whose owners (by uid) are all gone, drops owner references to missing owners when others
   * remain, deletes the dependents of owners deleted with `Foreground` and orphans those of owners
   * deleted with `Orphan`, then removes those finalizers. Nothing runs it automatically, as in a
   * TestEnv without kube-controller-manager. Returns the number of writes it made.
   */
  collectGarbage(): number {
    let total = 0;
    // The first registered kind of each keyspace (as a search of kinds.all() per object found it).
    const kindOf = new Map<string, KindInfo>();
    for (const k of this.kinds.all()) if (!kindOf.has(kindId(k))) kindOf.set(kindId(k), k);
    for (;;) {
      const writes = collectGarbageOnce({
        objects: () =>
          this.store.entries().flatMap(([id, key, obj]) => {
            const kind = kindOf.get(id);
            return kind ? [{ kind, key, obj }] : [];
          }),
        delete: (kind, key, obj) => void this.deleteExisting(kind, key, obj, 'Background', false),
        update: (kind, key, before, after) => this.commitSystemUpdate(kind, key, before, after),
      });
      if (writes === 0) return total;
      total += writes;
    }
  }

  /** Delete of a stored object: mark it when finalizers hold it, remove it otherwise. */
  private deleteExisting(
    kind: KindInfo,
    key: string,
    existing: JsonObject,
    policy: DeleteOptions['propagationPolicy'],
    dryRun: boolean,
  ): JsonObject | StatusBody {
    const meta = metaOf(existing);
    const finalizers = asStrings(meta.finalizers);
    // The garbage collector (collectGarbage) acts on these finalizers; nothing else removes them.
    const policyFinalizer = policy === 'Foreground' ? 'foregroundDeletion' : policy === 'Orphan' ? 'orphan' : undefined;
    const namespaceFinalizers =
      kind.kind === 'Namespace' && isObject(existing.spec) ? asStrings(existing.spec.finalizers) : [];
    if (meta.deletionTimestamp !== undefined && (finalizers.length > 0 || namespaceFinalizers.length > 0))
      return clone(existing);
    if (finalizers.length > 0 || policyFinalizer || namespaceFinalizers.length > 0) {
      const marked = clone(existing);
      const m = metaOf(marked);
      if (policyFinalizer && !finalizers.includes(policyFinalizer)) m.finalizers = [...finalizers, policyFinalizer];
      m.deletionTimestamp = this.now();
      m.deletionGracePeriodSeconds = 0;
      if (typeof m.generation === 'number' && m.generation > 0) m.generation += 1;
      if (kind.kind === 'Namespace')
        marked.status = { ...(isObject(marked.status) ? marked.status : {}), phase: 'Terminating' };
      if (dryRun) return marked;
      return clone(this.store.commit(kindId(kind), key, 'MODIFIED', marked));
    }
    if (!dryRun) this.store.commit(kindId(kind), key, 'DELETED', existing);
    const details: NonNullable<StatusBody['details']> = { name: String(meta.name) };
    if (kind.group) details.group = kind.group;
    details.kind = kind.plural;
    details.uid = String(meta.uid);
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details } as StatusBody & {
      metadata: object;
    };
  }

  /** A write by the control plane itself (no request, no strategy): MODIFIED, or DELETED once the last finalizer is gone. */
  private commitSystemUpdate(kind: KindInfo, key: string, before: JsonObject, after: JsonObject): void {
    const meta = metaOf(after);
    if (
      meta.deletionTimestamp !== undefined &&
      asStrings(meta.finalizers).length === 0 &&
      !hasNamespaceFinalizers(kind, after)
    ) {
      this.store.commit(kindId(kind), key, 'DELETED', before);
    } else this.store.commit(kindId(kind), key, 'MODIFIED', after);
  }

  // ---- internals -----------------------------------------------------------------------------

  private now(): string {
    // A write asks several times (timestamps, managedFields) at one instant: formatted once per instant.
    const ms = this.clock.now();
    if (ms !== this.formattedNow.ms)
      this.formattedNow = { ms, text: new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') };
    return this.formattedNow.text;
  }

  /** Records the request, honours the signal, and runs the interceptors. */
  private async serve(r: {
    verb: FakeVerb;
    kind: KindInfo;
    namespace?: string;
    name?: string;
    subresource?: string;
    patchType?: PatchType;
    dryRun?: boolean;
    body?: unknown;
    signal?: AbortSignal;
  }): Promise<void> {
    const { kind } = r;
    const ns = kind.namespaced ? r.namespace : undefined;
    if (kind.namespaced && !ns && r.verb !== 'list' && r.verb !== 'watch') {
      throw new InvalidOptionError('namespace', `${kind.kind} is namespaced: ${r.verb} needs a namespace`);
    }
    if (r.name !== undefined && !r.name && r.verb !== 'create')
      throw new InvalidOptionError('name', `${r.verb} needs a name`);
    throwIfAborted(r.signal);
    const req: FakeRequest = {
      verb: r.verb,
      apiVersion: kind.apiVersion,
      kind: kind.kind,
      group: kind.group,
      resource: kind.plural,
      ...omitUndefined({
        namespace: ns || undefined,
        name: r.name || undefined,
        subresource: r.subresource || undefined,
        patchType: r.patchType || undefined,
      }),
      dryRun: r.dryRun ?? false,
      // A copy: the log must show what was sent even if the caller mutates its object afterwards.
      ...(r.body !== undefined ? { body: clone(r.body) } : {}),
    };
    this.log.push(req);
    for (const interceptor of [...this.interceptors]) {
      const err = await interceptor(req);
      if (err) throw err;
    }
    throwIfAborted(r.signal);
  }

  private where(
    method: string,
    kind: KindInfo,
    at: { op: string; namespace?: string; name?: string; subresource?: string; query?: URLSearchParams },
  ): RequestWhere {
    let p = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
    if (kind.namespaced && at.namespace) p += `/namespaces/${encodeURIComponent(at.namespace)}`;
    p += `/${kind.plural}`;
    if (at.name) p += `/${encodeURIComponent(at.name)}`;
    if (at.subresource) p += `/${encodeURIComponent(at.subresource)}`;
    const q = at.query?.toString();
    return { method, path: q ? `${p}?${q}` : p };
  }

  private checkSubresource(kind: KindInfo, subresource: string | undefined, where: RequestWhere): void {
    if (subresource === undefined || subresource === '') return;
    if (subresource === 'status' && kind.statusSubresource) return;
    throw noSuchRoute(where);
  }

  private parseRevision(rv: string, where: RequestWhere): number {
    if (!/^[0-9]+$/.test(rv)) throw badRequest(`invalid resource version: ${rv}`, where);
    return Number(rv);
  }

  private snapshotOr410(kind: KindInfo, revision: number, gone: () => Error): [string, JsonObject][] {
    try {
      return this.store.snapshot(kindId(kind), revision);
    } catch (err) {
      if (err instanceof RevisionCompactedError) throw gone();
      throw err;
    }
  }

  private scopeFilter(kind: KindInfo, namespace: string | undefined): ObjectFilter {
    if (!kind.namespaced || !namespace) return () => true;
    return (obj) => metaOf(obj).namespace === namespace;
  }

  private filterFor(
    kind: KindInfo,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string; shardSelector?: string },
    where: RequestWhere,
  ): ObjectFilter {
    let labels;
    let fields;
    try {
      labels = parseLabelSelector(opts.labelSelector);
      fields = parseFieldSelector(opts.fieldSelector);
    } catch (err) {
      if (err instanceof SelectorError) throw badRequest(err.message, where);
      throw err;
    }
    const shard = this.shardSelectorOf(opts.shardSelector, where);
    const scoped = this.scopeFilter(kind, opts.namespace);
    return (obj) => {
      const meta = metaOf(obj) as { labels?: Record<string, string>; name?: string; namespace?: string; uid?: string };
      return (
        scoped(obj) &&
        matchesLabels(labels, meta.labels) &&
        matchesFields(fields, meta) &&
        (shard === undefined || selectorMatches(shard, { metadata: meta }))
      );
    };
  }

  /** The parsed selector when the fake honours it; the 1.36 server answers a bad one with 500, not 400. */
  private shardSelectorOf(text: string | undefined, where: RequestWhere): ShardSelector | undefined {
    if (!this.shardedListAndWatch || !text) return undefined;
    try {
      return parseShardSelector(text);
    } catch (err) {
      if (err instanceof InvalidShardSelectorError) throw internalError(`invalid shard selector: ${err.reason}`, where);
      throw err;
    }
  }

  private checkNamespace(kind: KindInfo, namespace: string | undefined, where: RequestWhere): void {
    if (!this.requireNamespaces || !kind.namespaced || !namespace) return;
    const ns = this.store.get(NAMESPACE_ID, namespace);
    if (!ns) throw namespaceNotFound(namespace, where);
    if (metaOf(ns).deletionTimestamp !== undefined) throw namespaceTerminating(namespace, where);
  }

  private generateName(kind: KindInfo, namespace: string | undefined, prefix: string): string {
    for (;;) {
      let suffix = '';
      for (let i = 0; i < 5; i++) suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
      const name = `${prefix}${suffix}`;
      if (!this.store.get(kindId(kind), objectKey(kind, namespace, name))) return name;
    }
  }

  private doCreate(
    kind: KindInfo,
    body: JsonObject,
    namespace: string | undefined,
    opts: WriteOptions,
    where: RequestWhere,
    managedFields?: JsonObject[],
  ): JsonObject {
    const meta = metaOf(body);
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '')
      throw internalError('resourceVersion should not be set on objects to be created', where);
    if (kind.namespaced) meta.namespace = namespace;
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName)
      meta.name = this.generateName(kind, namespace, meta.generateName);
    const obj = prepareCreate(body, { kind, where, now: this.now(), uid: randomUUID() });
    this.checkNamespace(kind, namespace, where);
    const key = objectKey(kind, namespace, String(metaOf(obj).name));
    if (this.store.get(kindId(kind), key)) throw alreadyExists(kind, String(metaOf(obj).name), where);
    const entries =
      managedFields ??
      managedFieldsAfterUpdate(
        undefined,
        obj,
        opts.fieldManager ?? this.defaultFieldManager,
        kind.apiVersion,
        this.now(),
        'all',
      );
    withManagedFields(obj, entries as never);
    if (opts.dryRun) return obj;
    if (kind.kind === 'CustomResourceDefinition') this.kinds.registerCrd(obj);
    return clone(this.store.commit(kindId(kind), key, 'ADDED', obj));
  }

  /** The shared tail of update and patch: strategy rules, no-op detection, finalizer-driven delete. */
  private writeUpdate(
    kind: KindInfo,
    key: string,
    existing: JsonObject,
    body: JsonObject,
    subresource: string | undefined,
    opts: WriteOptions,
    where: RequestWhere,
    managedFields?: unknown,
  ): JsonObject {
    const region = regionFor(kind, subresource);
    const next = prepareUpdate(existing, body, { kind, where, region });
    const entries =
      managedFields !== undefined
        ? managedFields
        : managedFieldsAfterUpdate(
            existing,
            next,
            opts.fieldManager ?? this.defaultFieldManager,
            kind.apiVersion,
            this.now(),
            region,
          );
    withManagedFields(next, entries as never);
    metaOf(next).resourceVersion = metaOf(existing).resourceVersion;
    // The server writes nothing for an update that changes nothing: the resourceVersion stays.
    if (isNoop(existing, next)) return clone(existing);
    if (opts.dryRun) return next;
    const nextMeta = metaOf(next);
    if (
      nextMeta.deletionTimestamp !== undefined &&
      asStrings(nextMeta.finalizers).length === 0 &&
      !hasNamespaceFinalizers(kind, next)
    ) {
      // Removing the last finalizer deletes: watchers see DELETED with the last stored state,
      // and the caller gets the object it wrote (with the resourceVersion it had).
      this.store.commit(kindId(kind), key, 'DELETED', existing);
      return next;
    }
    if (kind.kind === 'CustomResourceDefinition') this.kinds.registerCrd(next);
    return clone(this.store.commit(kindId(kind), key, 'MODIFIED', next));
  }

  private doApply(
    kind: KindInfo,
    name: string,
    key: string,
    existing: JsonObject | undefined,
    doc: unknown,
    opts: PatchOptions,
    where: RequestWhere,
  ): JsonObject {
    if (!isObject(doc)) throw badRequest('the apply configuration is not an object', where);
    const manager = opts.fieldManager!;
    const region = regionFor(kind, opts.subresource);
    const rv = isObject(doc.metadata) ? doc.metadata.resourceVersion : undefined;
    if (!existing) {
      if (opts.subresource) throw notFound(kind, name, where);
      const result = applyConfig(
        undefined,
        doc,
        manager,
        kind.apiVersion,
        this.now(),
        regionFor(kind, undefined),
        true,
      );
      if (!result.ok) throw applyConflict(result.conflicts, where);
      const body = result.object;
      const meta = metaOf(body);
      meta.name = name;
      return this.doCreate(kind, body, opts.namespace, opts, where, result.managedFields as unknown as JsonObject[]);
    }
    if (rv !== undefined && rv !== null && rv !== '' && rv !== metaOf(existing).resourceVersion)
      throw conflict(kind, name, where);
    const result = applyConfig(existing, doc, manager, kind.apiVersion, this.now(), region, opts.force ?? false);
    if (!result.ok) throw applyConflict(result.conflicts, where);
    return this.writeUpdate(
      kind,
      key,
      existing,
      result.object,
      opts.subresource,
      opts,
      where,
      result.managedFields ?? null,
    );
  }

  private async *watchEvents(
    type: ResourceType,
    opts: WatchOptions,
  ): AsyncGenerator<WatchEvent<JsonObject>, void, undefined> {
    const kind = this.kinds.require(type);
    const query = new URLSearchParams({ watch: 'true' });
    if (opts.labelSelector) query.set('labelSelector', opts.labelSelector);
    if (opts.fieldSelector) query.set('fieldSelector', opts.fieldSelector);
    if (opts.shardSelector) query.set('shardSelector', opts.shardSelector);
    if (opts.resourceVersion !== undefined) query.set('resourceVersion', opts.resourceVersion);
    if (opts.sendInitialEvents) query.set('sendInitialEvents', 'true');
    if (opts.resourceVersionMatch) query.set('resourceVersionMatch', opts.resourceVersionMatch);
    const where = this.where('WATCH', kind, { op: 'watch', namespace: opts.namespace, query });
    await this.serve({ verb: 'watch', kind, namespace: opts.namespace, signal: opts.signal });
    const matches = this.filterFor(kind, opts, where);
    const queue = new EventQueue<WatchEvent<JsonObject>>();
    const id = kindId(kind);
    const deliver = (change: Change): void => {
      if (change.kindId !== id) return;
      const event = eventFor(change, matches);
      if (event) queue.push(event);
    };
    const start = opts.resourceVersion;
    // Subscribing and reading the starting point happen in one synchronous step: no change can fall between them.
    const unsubscribe = this.store.subscribe(deliver);
    const active: ActiveWatch = {
      kindId: id,
      path: where.path,
      bookmarks: opts.allowWatchBookmarks ?? false,
      apiVersion: kind.apiVersion,
      kind: kind.kind,
      queue,
    };
    this.watches.add(active);
    const onAbort = (): void => queue.fail(new AbortedError('watch aborted', { cause: opts.signal?.reason }));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer =
      opts.timeoutSeconds !== undefined && opts.timeoutSeconds > 0
        ? this.clock.setTimer(opts.timeoutSeconds * 1000, () => queue.end())
        : undefined;
    try {
      if (opts.sendInitialEvents || opts.resourceVersionMatch) {
        // A watch-list, as a current API server serves it (the store is always up to date, so any
        // resourceVersion is "not older than" it): the state, then the initial-events-end bookmark.
        if (!opts.sendInitialEvents || opts.resourceVersionMatch !== 'NotOlderThan') {
          throw invalidWatchList(where);
        }
        for (const [, obj] of this.store.list(id)) if (matches(obj)) queue.push({ type: 'ADDED', object: clone(obj) });
        queue.push({
          type: 'BOOKMARK',
          object: {
            apiVersion: kind.apiVersion,
            kind: kind.kind,
            metadata: { resourceVersion: this.resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } },
          },
        } as WatchEvent<JsonObject>);
      } else if (start === undefined || start === '' || start === '0') {
        for (const [, obj] of this.store.list(id)) if (matches(obj)) queue.push({ type: 'ADDED', object: clone(obj) });
      } else {
        const from = this.parseRevision(start, where);
        let backlog: Change[];
        try {
          backlog = this.store.changesAfter(from);
        } catch (err) {
          if (err instanceof RevisionCompactedError) throw tooOldResourceVersion(start, String(err.oldest), where);
          throw err;
        }
        for (const change of backlog) deliver(change);
      }
      if (opts.signal?.aborted) onAbort();
      for (;;) {
        const next = await queue.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      unsubscribe();
      this.watches.delete(active);
      timer?.cancel();
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Creates an object directly (construction-time seeding): no counting, no interceptors. */
  private seed(obj: object): void {
    const o = obj as ObjectLike;
    const kind = this.kinds.require(typeOf(o));
    const namespace = o.metadata?.namespace;
    if (kind.namespaced && !namespace)
      throw new InvalidOptionError(
        'objects',
        `${kind.kind} ${o.metadata?.name ?? ''} is namespaced: give it metadata.namespace`,
      );
    this.doCreate(
      kind,
      clone(obj) as unknown as JsonObject,
      namespace,
      {},
      this.where('POST', kind, { op: 'create', namespace }),
    );
  }
}

const NAMESPACE_ID = kindId({ group: '', kind: 'Namespace' });

function kindId(kind: Pick<KindInfo, 'group' | 'kind'>): string {
  return `${kind.group}/${kind.kind}`;
}

function objectKey(kind: KindInfo, namespace: string | undefined, name: string): string {
  return kind.namespaced ? `${namespace ?? ''}/${name}` : name;
}

function hasNamespaceFinalizers(kind: KindInfo, obj: JsonObject): boolean {
  return kind.kind === 'Namespace' && isObject(obj.spec) && asStrings(obj.spec.finalizers).length > 0;
}

function withTypeMeta(obj: JsonObject, kind: KindInfo): JsonObject {
  obj.apiVersion ??= kind.apiVersion;
  obj.kind ??= kind.kind;
  return obj;
}

function parseBody(text: string, where: RequestWhere): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('the request body is not valid JSON', where);
  }
}

function toMapping(info: KindInfo): ResourceMapping {
  return {
    group: info.group,
    version: info.version,
    apiVersion: info.apiVersion,
    kind: info.kind,
    resource: info.plural,
    namespaced: info.namespaced,
    subresources: new Set(info.statusSubresource ? ['status'] : []),
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  };
}
