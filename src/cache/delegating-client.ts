/**
 * A client that reads from the cache and writes to the API server (controller-runtime's
 * delegating client): `get` and `list` of cached kinds are answered from memory (starting the
 * kind's informer lazily, the first read waiting for its sync); every write, `listPage`,
 * `listPages` and `watch` go to the server. A read asking for something only the server can give
 * (a subresource, a specific resourceVersion) also goes to the server.
 *
 * Reads of the cache see this client's own writes: after a create, update, patch, apply, status
 * write or delete has returned, a `get` of that object and a `list` that would include it wait (at
 * most `ownWritesWaitMs`) until the cache has observed the write (own-writes.ts,
 * docs/read-your-own-writes.md); `freshness: 'cached'` on a read skips the wait. Writes by anyone
 * else may still lag by the watch delay: write with the resourceVersion you read and retry
 * conflicts by re-reading, as everywhere in this runtime.
 */
import type { Registry } from 'prom-client';
import { applyArguments } from '../client/apply-configuration.js';
import type { Client, RestMapper } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import type { Kind } from '../client/kind.js';
import type { GetOptions, ListOptions, ObjectLike, ReadFreshness } from '../client/client-options.js';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { kindKey, objectKey, type KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { InformerCache } from './informer-cache.js';
import { matchesLabels, parseLabelSelector } from './label-selector.js';
import {
  DEFAULT_OWN_WRITES_WAIT_MS,
  OwnWrites,
  type ObservingInformer,
  type OwnWriteExpectation,
} from './own-writes.js';
import { parseShardSelector, selectorMatches } from '../client/shard-selector.js';

export interface DelegatingClientOptions {
  /**
   * Kinds always read from the API server: ones read rarely but numerous or large (Secrets, Events),
   * which would cost more memory to cache than they save in requests. @defaultValue []
   */
  readonly uncached?: readonly ResourceType[];
  /**
   * When given, maps each kind before its first cache read, so a cache restricted to namespaces
   * knows whether the kind is cluster-scoped (it asks this mapper's `cached()`, which then answers).
   * Without it no read waits for discovery, and `mapper` is the client's. @defaultValue none
   */
  readonly restMapper?: RestMapper;
  /**
   * Read-your-own-writes: how long a cached read waits for the cache to observe this client's
   * earlier writes before answering what it holds (counted in `cache_read_own_writes_total`).
   * 0 turns read-your-own-writes off. @defaultValue {@link DEFAULT_OWN_WRITES_WAIT_MS}
   */
  readonly ownWritesWaitMs?: number;
  /** @defaultValue realClock */
  readonly clock?: Clock;
  /** Where read-your-own-writes counts its waits. @defaultValue none */
  readonly registry?: Registry;
  /** @defaultValue silentLogger */
  readonly logger?: Logger;
}

/** Reads cached kinds from the cache and sends everything else to `client`. */
export class DelegatingClient implements Client {
  readonly mapper: RestMapper;
  private readonly uncached: ReadonlySet<string>;
  private readonly mapBeforeRead: boolean;
  /** Undefined when read-your-own-writes is off. */
  private readonly ownWrites: OwnWrites | undefined;

  constructor(
    private readonly client: Client,
    private readonly cache: InformerCache,
    options: DelegatingClientOptions = {},
  ) {
    this.uncached = new Set((options.uncached ?? []).map(kindKey));
    this.mapper = options.restMapper ?? client.mapper;
    this.mapBeforeRead = options.restMapper !== undefined;
    const waitMs = options.ownWritesWaitMs ?? DEFAULT_OWN_WRITES_WAIT_MS;
    if (!(Number.isFinite(waitMs) && waitMs >= 0))
      throw new InvalidOptionError('ownWritesWaitMs', 'must be a number >= 0');
    this.ownWrites =
      waitMs > 0
        ? new OwnWrites({
            waitMs,
            ...omitUndefined({ clock: options.clock, registry: options.registry, logger: options.logger }),
          })
        : undefined;
  }

  async get<T = KubeObject>(type: Kind<T>, name: string, opts: GetOptions = {}): Promise<T> {
    if (!this.fromCache(type) || opts.subresource !== undefined || opts.resourceVersion !== undefined)
      return this.client.get<T>(type, name, opts);
    await this.mapped(type, opts.signal);
    await this.ownWritesObserved(type, opts.namespace, objectKey({ namespace: opts.namespace, name }), opts);
    return (await this.cache.get<KubeObject>(type, { namespace: opts.namespace, name }, { signal: opts.signal })) as T;
  }

  async list<T = KubeObject>(type: Kind<T>, opts: ListOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
    if (!this.fromCache(type) || opts.resourceVersion !== undefined) return this.client.list<T>(type, opts);
    // The cache keeps no hash ranges: a shard selector filters what it holds, as the server would.
    const shard = opts.shardSelector ? parseShardSelector(opts.shardSelector) : undefined;
    await this.mapped(type, opts.signal);
    await this.ownWritesObserved(type, opts.namespace, undefined, opts);
    const cached = await this.cache.list<KubeObject>(type, {
      namespace: opts.namespace,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      signal: opts.signal,
    });
    const items = shard ? cached.filter((o) => selectorMatches(shard, o)) : cached;
    // One informer has one meaningful resourceVersion; merged namespaces have none.
    const informers = this.cache.informersFor(type);
    const resourceVersion = informers.length === 1 ? (informers[0]!.health().resourceVersion ?? '') : '';
    return { items: items as T[], resourceVersion };
  }

  // Everything below goes to the server. Calls `client[method]` when called (not bound up front),
  // so a partial test double works for what it has. Writes that persisted are remembered for
  // read-your-own-writes.
  listPage: Client['listPage'] = (...args) => this.client.listPage(...args);
  listPages: Client['listPages'] = (...args) => this.client.listPages(...args);
  watch: Client['watch'] = (...args) => this.client.watch(...args);
  create: Client['create'] = async (obj, opts) =>
    this.wrote(obj, await this.client.create(obj, opts), opts?.namespace, opts?.dryRun);
  update: Client['update'] = async (obj, opts) =>
    this.wrote(obj, await this.client.update(obj, opts), opts?.namespace, opts?.dryRun);
  updateStatus: Client['updateStatus'] = async (obj, opts) =>
    this.wrote(obj, await this.client.updateStatus(obj, opts), opts?.namespace, opts?.dryRun);
  patch: Client['patch'] = async (type, name, patch, opts) =>
    this.wrote(
      { ...type, metadata: { name } },
      await this.client.patch(type, name, patch, opts),
      opts.namespace,
      opts.dryRun,
    );
  patchStatus: Client['patchStatus'] = async (type, name, patch, opts) =>
    this.wrote(
      { ...type, metadata: { name } },
      await this.client.patchStatus(type, name, patch, opts),
      opts?.namespace,
      opts?.dryRun,
    );
  // Both forms of apply (an object, or a kind and its apply configuration) as the object they send.
  apply: Client['apply'] = (async (first: object, second: object, third?: object) => {
    const { obj, opts } = applyArguments(first, second, third);
    return this.wrote(obj, await this.client.apply(obj, opts), opts.namespace, opts.dryRun);
  }) as Client['apply'];
  applyStatus: Client['applyStatus'] = (async (first: object, second: object, third?: object) => {
    const { obj, opts } = applyArguments(first, second, third);
    return this.wrote(obj, await this.client.applyStatus(obj, opts), opts.namespace, opts.dryRun);
  }) as Client['applyStatus'];
  delete: Client['delete'] = async (type, name, opts) => {
    const response = await this.client.delete(type, name, opts);
    if (this.ownWrites && !opts?.dryRun) {
      const written = metadataOf(response);
      const namespace = written.namespace ?? opts?.namespace;
      const rv = written.resourceVersion;
      // Finalizers (or foreground/orphan propagation) keep the object: it is an update then.
      const expectation: OwnWriteExpectation =
        rv !== undefined && written.deletionTimestamp && written.finalizers > 0
          ? { type: 'present', resourceVersion: rv }
          : {
              type: 'absent',
              ...omitUndefined({
                uid: written.uid ?? statusUid(response) ?? opts?.preconditions?.uid,
                resourceVersion: written.resourceVersion,
              }),
            };
      this.remember(type, namespace, objectKey({ namespace, name: written.name ?? name }), () => expectation);
    }
    return response;
  };

  /**
   * Waits until `informers` (informers of this client's cache, such as a controller's primary
   * informers read by `ctx.get()`) have observed this client's writes of `key` recorded so far; at
   * most `ownWritesWaitMs`, and not at all when read-your-own-writes is off.
   * @internal
   */
  async observedOwnWrites(informers: readonly ObservingInformer[], key: string, signal?: AbortSignal): Promise<void> {
    await this.ownWrites?.observed(informers, key, signal);
  }

  /**
   * Waits until the informers of this read have observed this client's earlier writes (of `key`,
   * or of every key for a list), after their first sync; at most `ownWritesWaitMs`.
   */
  private async ownWritesObserved(
    type: ResourceType,
    namespace: string | undefined,
    key: string | undefined,
    opts: { readonly freshness?: ReadFreshness; readonly signal?: AbortSignal },
  ): Promise<void> {
    if (!this.ownWrites || opts.freshness === 'cached') return;
    const informers = await this.cache.syncedInformers(type, namespace, { signal: opts.signal });
    await this.ownWrites.observed(informers, key, opts.signal);
  }

  /** Remembers a persisted write of `sent` (answered by `response`); returns `response`. */
  private wrote<T>(sent: ObjectLike, response: T, namespace: string | undefined, dryRun: boolean | undefined): T {
    if (!this.ownWrites || dryRun) return response;
    const written = metadataOf(response);
    const rv = written.resourceVersion;
    const apiVersion = sent.apiVersion ?? stringField(response, 'apiVersion');
    const kind = sent.kind ?? stringField(response, 'kind');
    const name = written.name ?? sent.metadata?.name;
    if (rv === undefined || apiVersion === undefined || kind === undefined || name === undefined) return response;
    const ns = written.namespace ?? sent.metadata?.namespace ?? namespace;
    // A subresource other than status answers another kind (Scale): its labels are not the object's.
    const sameKind = stringField(response, 'kind') === kind;
    this.remember({ apiVersion, kind }, ns, objectKey({ namespace: ns, name }), (labelSelector) =>
      sameKind && labelSelector !== '' && !matchesLabels(parseLabelSelector(labelSelector), written.labels)
        ? // The informer filters it out (or drops it, if it matched before): it must not list it.
          { type: 'absent', resourceVersion: rv, ...omitUndefined({ uid: written.uid }) }
        : { type: 'present', resourceVersion: rv },
    );
    return response;
  }

  /** Records the expectation on every informer already holding the kind (a later one lists after the write). */
  private remember(
    type: ResourceType,
    namespace: string | undefined,
    key: string,
    expectation: (labelSelector: string) => OwnWriteExpectation,
  ): void {
    for (const { informer, labelSelector } of this.cache.existingInformersHolding(type, namespace))
      this.ownWrites?.record(informer, key, expectation(labelSelector));
  }

  private fromCache(type: ResourceType): boolean {
    return !this.uncached.has(kindKey(type));
  }

  private async mapped(type: ResourceType, signal: AbortSignal | undefined): Promise<void> {
    if (this.mapBeforeRead && this.mapper.cached(type) === undefined) await this.mapper.mapping(type, signal);
  }
}

export function createDelegatingClient(
  client: Client,
  cache: InformerCache,
  options: DelegatingClientOptions = {},
): Client {
  return new DelegatingClient(client, cache, options);
}

interface WrittenMetadata {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly deletionTimestamp: boolean;
  readonly finalizers: number;
  readonly labels?: Readonly<Record<string, string>>;
}

/** The metadata of a write's response, read defensively (a Status, a Scale, a partial double's answer). */
function metadataOf(response: unknown): WrittenMetadata {
  const m = field(response, 'metadata');
  const labels = field(m, 'labels');
  const finalizers = field(m, 'finalizers');
  const isStatus = stringField(response, 'kind') === 'Status';
  return {
    ...omitUndefined({
      name: stringField(m, 'name'),
      namespace: stringField(m, 'namespace'),
      uid: stringField(m, 'uid'),
      // A Status carries list metadata, never the object's version.
      resourceVersion: isStatus ? undefined : stringField(m, 'resourceVersion') || undefined,
      labels: isStringRecord(labels) ? labels : undefined,
    }),
    deletionTimestamp: stringField(m, 'deletionTimestamp') !== undefined,
    finalizers: Array.isArray(finalizers) ? finalizers.length : 0,
  };
}

/** The uid a delete's Status names (`details.uid`), if any. */
function statusUid(response: unknown): string | undefined {
  return stringField(field(response, 'details'), 'uid');
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, name) : undefined;
}

function stringField(value: unknown, name: string): string | undefined {
  const v = field(value, name);
  return typeof v === 'string' ? v : undefined;
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'string');
}
