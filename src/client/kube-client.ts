/**
 * `KubeClient`: typed, generic CRUD, patch, server-side apply, subresources, paged list and watch
 * over plain JSON objects, addressed by apiVersion + kind (discovery finds the URL). The only code
 * in operator-runtime that speaks HTTP to the API server.
 */
import { nameOf, typeOf } from '../core/object-key.js';
import { listAll, listPages } from './paged-list.js';
import { METADATA_ONLY_ACCEPT, toPartialObjectMetadata } from './partial-object-metadata.js';
import { homedir } from 'node:os';
import { inspect } from 'node:util';
import { AbortedError, InvalidOptionError } from '../core/errors.js';
import type { KubeObject } from '../core/object-key.js';
import type { Registry } from 'prom-client';
import type { StatusBody } from './api-error.js';
import { promClientMetrics } from './client-metrics.js';
import type { Client, StatusPatchOptions } from './contracts.js';
import type { Kind } from './kind.js';
import { DiscoveryRestMapper, type ResourceMapping, type ResourceType } from './discovery.js';
import { inClusterConfig, isInCluster, type InClusterOptions } from './in-cluster.js';
import {
  KubeconfigError,
  asKubeconfig,
  loadDefaultKubeconfig,
  loadKubeconfigFile,
  resolveKubeconfig,
  type ClusterConfig,
  type Kubeconfig,
} from './kubeconfig.js';
import { stringifyJson } from './lossless-json.js';
import { applyArguments, type ApplyConfiguration, type StatusApplyConfiguration } from './apply-configuration.js';
import { ApplyConflictError } from './apply-conflict-error.js';
import { omitUndefined } from '../core/omit-undefined.js';
import {
  Transport,
  TransportError,
  WATCH_BODY_TIMEOUT_SLACK_MS,
  type TransportOptions,
  type TransportResponse,
} from './transport.js';
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
import {
  DEFAULT_MAX_WATCH_LINE_BYTES,
  WatchDecoder,
  WatchDecodeError,
  toWatchEvent,
  type RawWatchEvent,
  type WatchEvent,
} from './watch-decoder.js';

export type {
  ApplyOptions,
  DeleteOptions,
  FieldValidation,
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

export interface KubeClientOptions extends TransportOptions {
  /** Registers request metrics on this registry (never the global one). */
  readonly registry?: Registry;
  /**
   * Longest watch line (one event, i.e. one object) accepted; a longer one ends the watch with
   * `WatchDecodeError` instead of being buffered. @defaultValue DEFAULT_MAX_WATCH_LINE_BYTES
   */
  readonly maxWatchLineBytes?: number;
}

export interface FromKubeconfigOptions extends KubeClientOptions {
  /** kubeconfig file. Without `path` or `kubeconfig`: `KUBECONFIG` (merged), then `~/.kube/config`. */
  readonly path?: string;
  /**
   * A parsed kubeconfig object, e.g. `TestEnv.kubeconfig` (relative file paths resolve against the
   * working directory). Checked for the kubeconfig shape at run time; never mutated.
   */
  readonly kubeconfig?: Kubeconfig | object;
  /** Context to use instead of `current-context`. */
  readonly context?: string;
  /** Environment for `KUBECONFIG`/`HOME` lookup and exec plugins. @defaultValue process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** autoscaling/v1 Scale, as the `scale` subresource returns it. */
export interface Scale {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeObject['metadata'];
  spec?: { replicas?: number };
  status?: { replicas: number; selector?: string };
}

export { DEFAULT_LIST_PAGE_SIZE, DEFAULT_MAX_LIST_RESTARTS } from './paged-list.js';

export { METADATA_ONLY_ACCEPT } from './partial-object-metadata.js';

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export class KubeClient implements Client {
  /** The context's namespace (or the pod's, in-cluster); informational, never applied implicitly. */
  readonly defaultNamespace: string;
  readonly mapper: DiscoveryRestMapper;
  /** @internal The HTTP layer; the repository's own tests reach past the client through it. */
  readonly transport: Transport;
  /** `watch` passes `sendInitialEvents` on to the server, so informers try a watch-list sync first. */
  readonly watchList = true;
  private readonly maxWatchLineBytes: number;

  constructor(config: ClusterConfig, options: KubeClientOptions = {}) {
    const metrics = options.metrics ?? (options.registry ? promClientMetrics(options.registry) : undefined);
    this.maxWatchLineBytes = options.maxWatchLineBytes ?? DEFAULT_MAX_WATCH_LINE_BYTES;
    if (!(Number.isSafeInteger(this.maxWatchLineBytes) && this.maxWatchLineBytes > 0))
      throw new InvalidOptionError('maxWatchLineBytes', 'must be a positive integer');
    this.transport = new Transport(config, { ...options, metrics });
    this.mapper = new DiscoveryRestMapper(this.transport);
    this.defaultNamespace = config.namespace;
  }

  /** From a kubeconfig file or object; without either, `KUBECONFIG` (merged) or `~/.kube/config`. */
  static async fromKubeconfig(options: FromKubeconfigOptions = {}): Promise<KubeClient> {
    let kc: Kubeconfig | undefined;
    if (options.kubeconfig) kc = asKubeconfig(options.kubeconfig);
    else if (options.path) kc = await loadKubeconfigFile(options.path);
    else kc = await loadDefaultKubeconfig(options.env ?? process.env, homeOf(options.env));
    if (!kc) throw new KubeconfigError('no kubeconfig found (KUBECONFIG unset or empty, ~/.kube/config missing)');
    const config = await resolveKubeconfig(kc, {
      context: options.context,
      clock: options.clock,
      logger: options.logger,
      env: options.env,
    });
    return new KubeClient(config, options);
  }

  /** From the pod's service account. */
  static async inCluster(options: KubeClientOptions & InClusterOptions = {}): Promise<KubeClient> {
    return new KubeClient(await inClusterConfig(options), options);
  }

  /** The usual resolution: `KUBECONFIG` → `~/.kube/config` → in-cluster service account. */
  static async fromDefault(
    options: Omit<FromKubeconfigOptions, 'path' | 'kubeconfig'> & InClusterOptions = {},
  ): Promise<KubeClient> {
    const kc = await loadDefaultKubeconfig(options.env ?? process.env, homeOf(options.env));
    if (kc) {
      const config = await resolveKubeconfig(kc, {
        context: options.context,
        clock: options.clock,
        logger: options.logger,
        env: options.env,
      });
      return new KubeClient(config, options);
    }
    if (isInCluster(options.env ?? process.env)) return KubeClient.inCluster(options);
    throw new KubeconfigError('no kubeconfig found and not running in a cluster');
  }

  async get<T = KubeObject>(type: Kind<T>, name: string, opts: GetOptions = {}): Promise<T> {
    const m = await this.mapping(type, opts.signal);
    const path = this.path(m, { namespace: opts.namespace, name, subresource: opts.subresource, op: 'get' });
    const query = new URLSearchParams();
    if (opts.resourceVersion !== undefined) query.set('resourceVersion', opts.resourceVersion);
    const res = await this.transport.request<T>({
      method: 'GET',
      path: withQuery(path, query),
      signal: opts.signal,
      operation: operation('get', m, opts.subresource),
    });
    return res.body;
  }

  /**
   * One page. Items carry apiVersion/kind (the server leaves them out of list items); otherwise
   * they are as the server sent them (a cache validates each one). A body that is not a list
   * throws `TransportError`.
   */
  async listPage<T = KubeObject>(type: Kind<T>, opts: ListPageOptions = {}): Promise<ListPage<T>> {
    const m = await this.mapping(type, opts.signal);
    const query = new URLSearchParams();
    if (opts.labelSelector) query.set('labelSelector', opts.labelSelector);
    if (opts.fieldSelector) query.set('fieldSelector', opts.fieldSelector);
    if (opts.shardSelector) query.set('shardSelector', opts.shardSelector);
    if (opts.limit !== undefined && opts.limit > 0) query.set('limit', String(opts.limit));
    if (opts.continue) query.set('continue', opts.continue);
    if (opts.resourceVersion !== undefined) query.set('resourceVersion', opts.resourceVersion);
    if (opts.resourceVersionMatch) query.set('resourceVersionMatch', opts.resourceVersionMatch);
    const path = withQuery(this.path(m, { namespace: opts.namespace, op: 'list' }), query);
    // Each item is shaped as it is decoded, so a list served whole is never held whole (list-decoder.ts).
    const shape = (raw: unknown): unknown => {
      const item = raw as ObjectLike | null;
      if (!isObject(item)) return item;
      let shaped: ObjectLike;
      if (opts.metadataOnly) shaped = toPartialObjectMetadata(item, m);
      else {
        item.apiVersion ??= m.apiVersion;
        item.kind ??= m.kind;
        shaped = item;
      }
      if (!opts.transformItem) return shaped;
      try {
        return opts.transformItem(shaped as KubeObject);
      } catch {
        return shaped;
      }
    };
    const res = await this.transport.request({
      method: 'GET',
      path,
      signal: opts.signal,
      list: { maxItemBytes: this.maxWatchLineBytes, shape },
      operation: operation('list', m),
      ...(opts.metadataOnly ? { headers: { accept: METADATA_ONLY_ACCEPT.list } } : {}),
    });
    const { items, meta } = listBodyOf(res.body, path);
    const page: ListPage<T> = {
      items: items as T[],
      resourceVersion: typeof meta.resourceVersion === 'string' ? meta.resourceVersion : '',
    };
    if (typeof meta.continue === 'string' && meta.continue) page.continue = meta.continue;
    if (typeof meta.remainingItemCount === 'number') page.remainingItemCount = meta.remainingItemCount;
    if (isObject(meta.shardInfo) && typeof meta.shardInfo.selector === 'string')
      page.shardInfo = { selector: meta.shardInfo.selector };
    return page;
  }

  /**
   * Pages through a list. If a continue token expires (410) the list starts over from the first
   * page, and that page has `restarted: true`: everything yielded before it is stale.
   */
  listPages<T = KubeObject>(type: Kind<T>, opts: ListOptions = {}): AsyncGenerator<PagedListPage<T>, void, undefined> {
    return listPages<T>((t, o) => this.listPage(t, o), type, opts);
  }

  /** The whole list, paged underneath; `resourceVersion` is the one to start a watch from. */
  list<T = KubeObject>(type: Kind<T>, opts: ListOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
    return listAll(this.listPages<T>(type, opts));
  }

  async create<T extends ObjectLike>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const m = await this.mapping(typeOf(obj), opts.signal);
    const path = this.path(m, { namespace: obj.metadata?.namespace ?? opts.namespace, op: 'create' });
    const res = await this.transport.request<T>({
      method: 'POST',
      path: withQuery(path, writeQuery(opts)),
      body: stringifyJson(obj),
      contentType: 'application/json',
      signal: opts.signal,
      operation: operation('create', m),
    });
    reportWarnings(res.headers.warning, opts);
    return res.body;
  }

  /** PUT. Sends the object's resourceVersion, so a concurrent change makes it fail with 409. */
  async update<T extends ObjectLike>(obj: T, opts: UpdateOptions = {}): Promise<T> {
    if (!obj.metadata?.resourceVersion && !opts.allowUnconditional) {
      throw new InvalidOptionError(
        'metadata.resourceVersion',
        'update needs the resourceVersion that was read (or allowUnconditional: true)',
      );
    }
    const m = await this.mapping(typeOf(obj), opts.signal);
    const path = this.path(m, {
      namespace: obj.metadata?.namespace ?? opts.namespace,
      name: nameOf(obj),
      subresource: opts.subresource,
      op: 'update',
    });
    const res = await this.transport.request<T>({
      method: 'PUT',
      path: withQuery(path, writeQuery(opts)),
      body: stringifyJson(obj),
      contentType: 'application/json',
      signal: opts.signal,
      operation: operation('update', m, opts.subresource),
    });
    reportWarnings(res.headers.warning, opts);
    return res.body;
  }

  /** PUT to the `status` subresource (never bumps metadata.generation). */
  updateStatus<T extends ObjectLike>(obj: T, opts: Omit<UpdateOptions, 'subresource'> = {}): Promise<T> {
    return this.update(obj, { ...opts, subresource: 'status' });
  }

  async patch<T = KubeObject>(type: Kind<T>, name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    if (!(opts.type in PATCH_CONTENT_TYPES))
      throw new InvalidOptionError('type', `unknown patch type ${String(opts.type)}`);
    if (opts.type === 'apply' && !opts.fieldManager)
      throw new InvalidOptionError('fieldManager', 'server-side apply needs a fieldManager');
    if (opts.force && opts.type !== 'apply') throw new InvalidOptionError('force', 'only applies to server-side apply');
    const m = await this.mapping(type, opts.signal);
    const path = this.path(m, { namespace: opts.namespace, name, subresource: opts.subresource, op: 'patch' });
    let res: TransportResponse<T>;
    try {
      res = await this.transport.request<T>({
        method: 'PATCH',
        path: withQuery(path, writeQuery(opts, opts.force)),
        body: typeof patch === 'string' ? patch : stringifyJson(patch),
        contentType: PATCH_CONTENT_TYPES[opts.type],
        signal: opts.signal,
        operation: operation(opts.type === 'apply' ? 'apply' : 'patch', m, opts.subresource),
      });
    } catch (err) {
      if (opts.type !== 'apply') throw err;
      throw (
        ApplyConflictError.from(err, {
          kind: m.kind,
          name,
          fieldManager: opts.fieldManager!,
          ...omitUndefined({ namespace: opts.namespace, subresource: opts.subresource }),
        }) ?? err
      );
    }
    reportWarnings(res.headers.warning, opts);
    return res.body;
  }

  /** Merge-patches the `status` subresource. */
  patchStatus<T = KubeObject>(type: Kind<T>, name: string, patch: unknown, opts: StatusPatchOptions = {}): Promise<T> {
    return this.patch<T>(type, name, patch, { ...opts, type: opts.type ?? 'merge', subresource: 'status' });
  }

  /**
   * Server-side apply of `obj` (its apiVersion, kind, name and namespace address it). managedFields
   * are dropped, since the server rejects an apply that carries them.
   */
  apply<T extends ObjectLike>(obj: T, opts: ApplyOptions): Promise<T>;
  /** Server-side apply of an apply configuration typed from `type` (every field optional but the name). */
  apply<T>(type: Kind<T>, config: ApplyConfiguration<T>, opts: ApplyOptions): Promise<T>;
  async apply<T>(first: object, second: object, third?: object): Promise<T> {
    const { obj, opts } = applyArguments(first, second, third);
    const body = stripManagedFields(obj);
    return this.patch<T>(typeOf(obj), nameOf(obj), body, {
      ...opts,
      namespace: obj.metadata?.namespace ?? opts.namespace,
      type: 'apply',
    });
  }

  applyStatus<T extends ObjectLike>(obj: T, opts: Omit<ApplyOptions, 'subresource'>): Promise<T>;
  /** Server-side apply of the `status` subresource, typed from `type`. */
  applyStatus<T>(
    type: Kind<T>,
    config: StatusApplyConfiguration<T>,
    opts: Omit<ApplyOptions, 'subresource'>,
  ): Promise<T>;
  async applyStatus<T>(first: object, second: object, third?: object): Promise<T> {
    const { obj, opts } = applyArguments(first, second, third);
    return this.apply(obj as T & ObjectLike, { ...opts, subresource: 'status' });
  }

  /** Returns what the server answers: the object (still present while finalizers run) or a Status. */
  async delete<T = KubeObject>(type: Kind<T>, name: string, opts: DeleteOptions = {}): Promise<T | StatusBody> {
    const m = await this.mapping(type, opts.signal);
    const path = this.path(m, { namespace: opts.namespace, name, op: 'delete' });
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    if (opts.preconditions) body.preconditions = { ...opts.preconditions };
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    if (opts.dryRun) body.dryRun = ['All'];
    const res = await this.transport.request<T | StatusBody>({
      method: 'DELETE',
      path,
      body: stringifyJson(body),
      contentType: 'application/json',
      signal: opts.signal,
      operation: operation('delete', m),
    });
    return res.body;
  }

  getScale(type: ResourceType, name: string, opts: Omit<GetOptions, 'subresource'> = {}): Promise<Scale> {
    return this.get<Scale>(type, name, { ...opts, subresource: 'scale' });
  }

  /** Sets `spec.replicas` through the `scale` subresource. */
  scale(
    type: ResourceType,
    name: string,
    replicas: number,
    opts: Omit<PatchOptions, 'type' | 'subresource' | 'force'> = {},
  ): Promise<Scale> {
    return this.patch<Scale>(type, name, { spec: { replicas } }, { ...opts, type: 'merge', subresource: 'scale' });
  }

  /**
   * Watches a kind. The iterator ends when the server closes the watch (its timeout); an HTTP
   * error or ERROR event (410 included) throws ApiError, a malformed line WatchDecodeError, an
   * aborted signal AbortedError. Leaving the loop early closes the connection; to stop a watch
   * that is waiting for its next event (from another task), abort its signal.
   */
  watch<T = KubeObject>(type: Kind<T>, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    return { [Symbol.asyncIterator]: () => this.watchEvents<T>(type, opts) };
  }

  [inspect.custom](): string {
    return `KubeClient { server: '${this.transport.server.href}', defaultNamespace: '${this.defaultNamespace}' }`;
  }

  /** Closes the connection pools. */
  close(): Promise<void> {
    return this.transport.close();
  }

  private async *watchEvents<T>(
    type: ResourceType,
    opts: WatchOptions,
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const m = await this.mapping(type, opts.signal);
    const query = new URLSearchParams({ watch: 'true' });
    if (opts.labelSelector) query.set('labelSelector', opts.labelSelector);
    if (opts.fieldSelector) query.set('fieldSelector', opts.fieldSelector);
    if (opts.shardSelector) query.set('shardSelector', opts.shardSelector);
    if (opts.resourceVersion !== undefined) query.set('resourceVersion', opts.resourceVersion);
    if (opts.allowWatchBookmarks) query.set('allowWatchBookmarks', 'true');
    if (opts.sendInitialEvents) query.set('sendInitialEvents', 'true');
    if (opts.resourceVersionMatch) query.set('resourceVersionMatch', opts.resourceVersionMatch);
    if (opts.timeoutSeconds !== undefined) query.set('timeoutSeconds', String(opts.timeoutSeconds));
    const path = withQuery(this.path(m, { namespace: opts.namespace, op: 'watch' }), query);
    const bodyTimeoutMs =
      opts.timeoutSeconds !== undefined ? opts.timeoutSeconds * 1000 + WATCH_BODY_TIMEOUT_SLACK_MS : 0;
    const res = await this.transport.stream({
      method: 'GET',
      path,
      signal: opts.signal,
      bodyTimeoutMs,
      ...(opts.metadataOnly ? { headers: { accept: METADATA_ONLY_ACCEPT.watch } } : {}),
    });
    const decoder = new WatchDecoder({ maxLineBytes: this.maxWatchLineBytes });
    const where = { method: 'WATCH', path };
    const shape = opts.metadataOnly
      ? (raw: RawWatchEvent): RawWatchEvent =>
          raw.type === 'ERROR' ? raw : { type: raw.type, object: toPartialObjectMetadata(raw.object, m) }
      : (raw: RawWatchEvent) => raw;
    try {
      try {
        for await (const chunk of res.body) {
          for (const raw of decoder.push(chunk)) yield toWatchEvent<T>(shape(raw), where);
        }
      } catch (err) {
        if (opts.signal?.aborted) throw new AbortedError('watch aborted', { cause: opts.signal.reason });
        if (err instanceof WatchDecodeError || (err as { code?: unknown }).code === 'ERR_API') throw err;
        throw new TransportError(
          'WATCH',
          path,
          `watch stream failed (${(err as { code?: string }).code ?? (err as Error).name})`,
          { cause: err },
        );
      }
      for (const raw of decoder.end()) yield toWatchEvent<T>(shape(raw), where);
    } finally {
      res.destroy();
    }
  }

  /** Sync on a cache hit, so the hot path does not pay for discovery. */
  private mapping(type: ResourceType, signal: AbortSignal | undefined): ResourceMapping | Promise<ResourceMapping> {
    return this.mapper.cached(type) ?? this.mapper.mapping(type, signal);
  }

  private path(
    m: ResourceMapping,
    at: { namespace?: string; name?: string; subresource?: string; op: string },
  ): string {
    let p = m.group ? `/apis/${m.group}/${m.version}` : `/api/${m.version}`;
    if (m.namespaced) {
      if (at.namespace) p += `/namespaces/${encodeURIComponent(at.namespace)}`;
      else if (at.op !== 'list' && at.op !== 'watch') {
        throw new InvalidOptionError('namespace', `${m.kind} is namespaced: ${at.op} needs a namespace`);
      }
    }
    p += `/${m.resource}`;
    if (at.name !== undefined) {
      if (!at.name) throw new InvalidOptionError('name', `${at.op} needs a name`);
      p += `/${encodeURIComponent(at.name)}`;
    }
    if (at.subresource) p += `/${encodeURIComponent(at.subresource)}`;
    return p;
  }
}

/** `HOME` of the given environment (so tests and embedders can point it elsewhere), else the OS's. */
function homeOf(env: Readonly<Record<string, string | undefined>> | undefined): string {
  const home = (env ?? process.env).HOME;
  if (home) return home;
  // homedir() throws for a uid with no passwd entry and no HOME (an image's uid 65532): no ~/.kube then.
  try {
    return homedir();
  } catch {
    return '/';
  }
}

function withQuery(path: string, query: URLSearchParams | string): string {
  const q = typeof query === 'string' ? query : query.toString();
  return q ? `${path}?${q}` : path;
}

/** The write options' query string; '' without one (the usual write), so no URLSearchParams is built. */
function writeQuery(opts: WriteOptions, force?: boolean): string {
  if (!opts.dryRun && !opts.fieldManager && !opts.fieldValidation && !force) return '';
  const q = new URLSearchParams();
  if (opts.dryRun) q.set('dryRun', 'All');
  if (opts.fieldManager) q.set('fieldManager', opts.fieldManager);
  if (opts.fieldValidation) q.set('fieldValidation', opts.fieldValidation);
  if (force) q.set('force', 'true');
  return q.toString();
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The items and list metadata of a list answer, or TransportError when it is not a list at all. */
function listBodyOf(body: unknown, path: string): { items: unknown[]; meta: Record<string, unknown> } {
  if (!isObject(body)) throw new TransportError('GET', path, 'list response is not a JSON object');
  const items = body.items ?? [];
  if (!Array.isArray(items)) throw new TransportError('GET', path, 'list response has no items array');
  const meta = body.metadata ?? {};
  if (!isObject(meta)) throw new TransportError('GET', path, 'list response metadata is not an object');
  return { items, meta };
}

function stripManagedFields<T extends ObjectLike>(obj: T): T {
  const meta = obj.metadata as (ObjectLike['metadata'] & { managedFields?: unknown }) | undefined;
  if (!meta || !('managedFields' in meta)) return obj;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...obj, metadata: rest };
}

/**
 * The texts of `Warning` headers (RFC 7234: `299 - "text"`, one header per warning), as the
 * server wrote them; a value that is not in that form is passed on whole.
 */
export function parseWarningHeaders(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const values = Array.isArray(header) ? header : [header];
  const out: string[] = [];
  for (const v of values) {
    const m = /^\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"/.exec(v.trim());
    out.push(m ? m[1]!.replace(/\\(.)/g, '$1') : v);
  }
  return out;
}

function reportWarnings(
  header: string | string[] | undefined,
  opts: { readonly onWarnings?: (warnings: readonly string[]) => void },
): void {
  if (!opts.onWarnings || header === undefined) return;
  const warnings = parseWarningHeaders(header);
  if (warnings.length > 0) opts.onWarnings(warnings);
}

/** The verb and kind of a call, for its trace span: `patch Database/status`. */
function operation(verb: string, m: ResourceMapping, subresource?: string): { verb: string; kind: string } {
  return { verb, kind: subresource ? `${m.kind}/${subresource}` : m.kind };
}
