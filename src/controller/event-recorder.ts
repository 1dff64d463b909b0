import { hostname } from 'node:os';
import type { Creator, Patcher, RestMapper } from '../client/contracts.js';
import { apiErrorStatus, isNotFound } from '../client/api-error.js';
import { isNoKindMatch } from '../client/discovery.js';
import { realClock, type Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { kindKey, objectKey as objectKeyOf, type KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';

export type EventType = 'Normal' | 'Warning';

/** client-go's spam filter: 25 events per object at once, then one per 5 minutes. @defaultValue 25 */
export const DEFAULT_EVENT_BURST = 25;
/** @defaultValue 300,000 ms */
export const DEFAULT_EVENT_REFILL_MS = 300_000;
/** Events waiting to be written; beyond this new ones are dropped (never unbounded). @defaultValue 1000 */
export const DEFAULT_EVENT_QUEUE_LIMIT = 1000;
/** Distinct (object, type, reason, message) tuples remembered for aggregation. @defaultValue 4096 */
export const DEFAULT_EVENT_CACHE_SIZE = 4096;

/**
 * Which Events API the recorder writes: `events.k8s.io/v1` (repeats as `series.count` and
 * `series.lastObservedTime`), core `v1` (repeats as `count` and `lastTimestamp`), or `auto`: the
 * first when the server serves it (asked once through the client's REST mapper), else core v1.
 */
export type EventApi = 'auto' | 'events.k8s.io/v1' | 'v1';

/** @defaultValue 'auto' */
export const DEFAULT_EVENT_API: EventApi = 'auto';

/** events.k8s.io/v1 limits `note` to 1 KiB; a longer message is cut to fit. */
const MAX_NOTE_BYTES = 1024;

const EVENTS_V1 = { apiVersion: 'events.k8s.io/v1', kind: 'Event' } as const;
const CORE_V1 = { apiVersion: 'v1', kind: 'Event' } as const;

/**
 * What a recorder needs RBAC for, declared by whoever makes one: `create`, and `patch` to count
 * repeats, of events.k8s.io/v1 Events — what it writes on every server that serves the API
 * (Kubernetes 1.19+). Core/v1 Events are only its fallback (the API absent, or the write refused),
 * so a role that grants core Events alone keeps working, and one that grants both has a rule
 * nothing uses.
 */
export const RECORDER_PERMISSION = { resource: EVENTS_V1, verbs: ['create', 'patch'] } as const;

export interface EventRecorderOptions {
  /** Writes the Events; with a REST `mapper` (every `Client` has one) `api: 'auto'` can ask discovery. */
  readonly client: Creator & Patcher & { readonly mapper?: RestMapper };
  /** @defaultValue DEFAULT_EVENT_API */
  readonly api?: EventApi;
  /** `source.component` / `reportingComponent`, e.g. the operator's name. */
  readonly component: string;
  /** `source.host` / `reportingInstance`. @defaultValue os.hostname() */
  readonly host?: string;
  readonly burst?: number;
  readonly refillMs?: number;
  readonly queueLimit?: number;
  readonly cacheSize?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Told about each event accepted for writing (the operator console's feed); must not throw. */
  readonly onRecorded?: (event: RecordedEvent) => void;
  /** The fleet member cluster the Events are written to, carried into `onRecorded`. @defaultValue the host (none) */
  readonly cluster?: string;
}

/** An event as accepted by the recorder (before it is written). */
export interface RecordedEvent {
  readonly atMs: number;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  readonly involvedObject: { readonly kind: string; readonly namespace: string | undefined; readonly name: string };
  /** The fleet member cluster the Event is written to; absent for the host. */
  readonly cluster?: string;
}

interface Aggregate {
  readonly name: string;
  readonly namespace: string;
  /** The API the Event was created through, which its repeats patch. */
  readonly api: 'events.k8s.io/v1' | 'v1';
  count: number;
}

interface Bucket {
  tokens: number;
  updatedAtMs: number;
}

interface PendingEvent {
  readonly obj: KubeObject;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  readonly atMs: number;
}

/**
 * Writes Events about objects: events.k8s.io/v1 where the server serves it, else core/v1 (`api`).
 * Repeats of the same (object, type, reason, message) become one Event whose series count and last
 * observed time rise (`series` in events.k8s.io/v1, `count` and `lastTimestamp` in core/v1: a
 * PATCH, not a new object); a per-object token bucket drops events from a hot loop; writes run in
 * the background through a bounded queue, so `event()` never blocks or throws into a reconcile.
 */
export class EventRecorder {
  private readonly client: Creator & Patcher & { readonly mapper?: RestMapper };
  private readonly apiOption: EventApi;
  /** The API chosen for new Events, once known. */
  private resolvedApi: 'events.k8s.io/v1' | 'v1' | undefined;
  private readonly component: string;
  private readonly host: string;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly queueLimit: number;
  private readonly cacheSize: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly onRecorded: ((event: RecordedEvent) => void) | undefined;
  private readonly cluster: string | undefined;
  private readonly aggregates = new Map<string, Aggregate>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly queue: PendingEvent[] = [];
  private draining: Promise<void> | undefined;
  private sequence = 0;
  /** Events not written: rate-limited, queue full, or the write failed. */
  dropped = 0;

  constructor(options: EventRecorderOptions) {
    if (!options.component) throw new InvalidOptionError('component', 'is required');
    this.client = options.client;
    this.apiOption = options.api ?? DEFAULT_EVENT_API;
    if (!['auto', 'events.k8s.io/v1', 'v1'].includes(this.apiOption))
      throw new InvalidOptionError('api', `must be 'auto', 'events.k8s.io/v1' or 'v1', not ${String(this.apiOption)}`);
    if (this.apiOption !== 'auto') this.resolvedApi = this.apiOption;
    this.component = options.component;
    this.host = options.host ?? hostname();
    this.burst = options.burst ?? DEFAULT_EVENT_BURST;
    this.refillMs = options.refillMs ?? DEFAULT_EVENT_REFILL_MS;
    this.queueLimit = options.queueLimit ?? DEFAULT_EVENT_QUEUE_LIMIT;
    this.cacheSize = options.cacheSize ?? DEFAULT_EVENT_CACHE_SIZE;
    if (!(this.burst >= 1)) throw new InvalidOptionError('burst', 'must be >= 1');
    if (!(this.refillMs > 0)) throw new InvalidOptionError('refillMs', 'must be > 0');
    this.clock = options.clock ?? realClock;
    this.log = (options.logger ?? silentLogger).child({ component: 'event-recorder' });
    this.onRecorded = options.onRecorded;
    this.cluster = options.cluster;
  }

  /** Records an event about `obj` (which needs apiVersion, kind and metadata.name). Never throws. */
  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    // A reconcile must never fail because of its Events: anything unusable is dropped and counted.
    try {
      this.record(obj, type, reason, message);
    } catch (err) {
      this.dropped++;
      this.log.warn({ err, reason }, 'event dropped: could not be recorded');
    }
  }

  private record(obj: KubeObject, type: EventType, reason: string, message: string): void {
    const meta = obj?.metadata;
    if (!obj?.apiVersion || !obj.kind || !meta?.name) {
      // An Event's involvedObject needs all three; the API server would reject it anyway.
      this.dropped++;
      this.log.warn(
        { apiVersion: obj?.apiVersion, kind: obj?.kind, reason },
        'event dropped: the object has no apiVersion, kind or metadata.name',
      );
      return;
    }
    const objectKey = `${kindKey({ apiVersion: obj.apiVersion, kind: obj.kind })}/${objectKeyOf({ namespace: meta.namespace, name: meta.name })}`;
    if (!this.takeToken(objectKey)) {
      this.dropped++;
      this.log.debug({ object: objectKey, reason }, 'event dropped by the rate limit');
      return;
    }
    if (this.queue.length >= this.queueLimit) {
      this.dropped++;
      this.log.warn({ object: objectKey, reason }, 'event dropped: queue full');
      return;
    }
    const atMs = this.clock.now();
    this.queue.push({ obj, type, reason, message, atMs });
    this.onRecorded?.({
      atMs,
      type,
      reason,
      message,
      involvedObject: { kind: obj.kind, namespace: meta.namespace, name: meta.name },
      ...omitUndefined({ cluster: this.cluster }),
    });
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** Resolves once every queued event has been written (or dropped). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private takeToken(objectKey: string): boolean {
    const now = this.clock.monotonicNow();
    const bucket = this.buckets.get(objectKey) ?? { tokens: this.burst, updatedAtMs: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.updatedAtMs) / this.refillMs);
    bucket.updatedAtMs = now;
    this.remember(this.buckets, objectKey, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      try {
        await this.write(next);
      } catch (err) {
        this.dropped++;
        this.log.warn({ err, reason: next.reason }, 'failed to write event');
      }
    }
  }

  private async write(e: PendingEvent): Promise<void> {
    const meta = e.obj.metadata ?? {};
    const aggregateKey = JSON.stringify([
      e.obj.apiVersion,
      e.obj.kind,
      meta.namespace,
      meta.name,
      meta.uid,
      e.type,
      e.reason,
      e.message,
    ]);
    const existing = this.aggregates.get(aggregateKey);
    if (existing) {
      existing.count++;
      try {
        await this.client.patch(
          existing.api === 'v1' ? CORE_V1 : EVENTS_V1,
          existing.name,
          existing.api === 'v1'
            ? { count: existing.count, lastTimestamp: seconds(e.atMs) }
            : { series: { count: existing.count, lastObservedTime: microseconds(e.atMs) } },
          { namespace: existing.namespace, type: 'merge' },
        );
        this.remember(this.aggregates, aggregateKey, existing);
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.aggregates.delete(aggregateKey); // expired (Events have a TTL): start a new one
      }
    }
    const namespace = meta.namespace || 'default';
    const name = `${meta.name}.${(e.atMs * 1000 + (this.sequence++ % 1000)).toString(16)}`;
    let api = this.resolvedApi ?? (await this.discoverApi());
    if (api === 'events.k8s.io/v1') {
      try {
        await this.client.create(this.eventsV1Event(e, name, namespace));
      } catch (err) {
        // Served but not allowed (RBAC granting only core Events), or gone: core/v1 from now on.
        if (this.apiOption !== 'auto' || !(apiErrorStatus(err) === 403 || isNotFound(err) || isNoKindMatch(err)))
          throw err;
        this.log.info({ status: apiErrorStatus(err) }, 'events.k8s.io/v1 refused: writing core/v1 Events');
        this.resolvedApi = api = 'v1';
      }
    }
    if (api === 'v1') await this.client.create(this.coreV1Event(e, name, namespace));
    this.remember(this.aggregates, aggregateKey, { name, namespace, api, count: 1 });
  }

  /** `auto`: events.k8s.io/v1 if discovery lists it; a failed lookup other than "not served" is asked again next time. */
  private async discoverApi(): Promise<'events.k8s.io/v1' | 'v1'> {
    const mapper = this.client.mapper;
    if (!mapper) return (this.resolvedApi = 'v1');
    try {
      await mapper.mapping(EVENTS_V1);
      return (this.resolvedApi = 'events.k8s.io/v1');
    } catch (err) {
      if (isNoKindMatch(err)) return (this.resolvedApi = 'v1');
      this.log.debug({ err }, 'events.k8s.io/v1 discovery failed: writing this Event as core/v1');
      return 'v1';
    }
  }

  private regarding(e: PendingEvent): Record<string, unknown> {
    const meta = e.obj.metadata ?? {};
    return {
      apiVersion: e.obj.apiVersion,
      kind: e.obj.kind,
      name: meta.name,
      ...omitUndefined({
        namespace: meta.namespace || undefined,
        uid: meta.uid || undefined,
        resourceVersion: meta.resourceVersion || undefined,
      }),
    };
  }

  private eventsV1Event(e: PendingEvent, name: string, namespace: string): KubeObject {
    return {
      apiVersion: EVENTS_V1.apiVersion,
      kind: 'Event',
      metadata: { name, namespace },
      regarding: this.regarding(e),
      type: e.type,
      reason: e.reason,
      // The recorder's API has no separate action: the reason names what happened.
      action: e.reason,
      note: truncateUtf8(e.message, MAX_NOTE_BYTES),
      eventTime: microseconds(e.atMs),
      reportingController: this.component,
      reportingInstance: this.host,
    } as KubeObject;
  }

  private coreV1Event(e: PendingEvent, name: string, namespace: string): KubeObject {
    const timestamp = seconds(e.atMs);
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: this.regarding(e),
      type: e.type,
      reason: e.reason,
      message: e.message,
      source: { component: this.component, host: this.host },
      reportingComponent: this.component,
      reportingInstance: this.host,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
    } as KubeObject;
  }

  /** Map insertion order as an LRU: re-insert on use, evict the oldest beyond the cache size. */
  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > this.cacheSize) map.delete(map.keys().next().value!);
  }
}

/** metav1.Time: RFC 3339 in whole seconds. */
function seconds(atMs: number): string {
  return new Date(atMs).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** metav1.MicroTime: RFC 3339 with six fractional digits. */
function microseconds(atMs: number): string {
  return new Date(atMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** `text` cut to at most `maxBytes` of UTF-8, never inside a character, marked with an ellipsis when cut. */
function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > maxBytes - 3) break;
    out += ch;
    bytes += n;
  }
  return `${out}...`;
}
