import { hostname } from 'node:os';
import type { Creator, Patcher } from '../client/contracts.js';
import { isNotFound } from '../client/api-error.js';
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

export interface EventRecorderOptions {
  readonly client: Creator & Patcher;
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
 * Writes core/v1 Events about objects. Repeats of the same (object, type, reason, message) become
 * one Event whose `count` and `lastTimestamp` rise (a PATCH, not a new object); a per-object token
 * bucket drops events from a hot loop; writes run in the background through a bounded queue, so
 * `event()` never blocks or throws into a reconcile.
 */
export class EventRecorder {
  private readonly client: Creator & Patcher;
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
    const timestamp = new Date(e.atMs).toISOString().replace(/\.\d+Z$/, 'Z');
    const existing = this.aggregates.get(aggregateKey);
    if (existing) {
      existing.count++;
      try {
        await this.client.patch(
          { apiVersion: 'v1', kind: 'Event' },
          existing.name,
          { count: existing.count, lastTimestamp: timestamp },
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
    await this.client.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: e.obj.apiVersion,
        kind: e.obj.kind,
        name: meta.name,
        ...omitUndefined({
          namespace: meta.namespace || undefined,
          uid: meta.uid || undefined,
          resourceVersion: meta.resourceVersion || undefined,
        }),
      },
      type: e.type,
      reason: e.reason,
      message: e.message,
      source: { component: this.component, host: this.host },
      reportingComponent: this.component,
      reportingInstance: this.host,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
    } as KubeObject);
    this.remember(this.aggregates, aggregateKey, { name, namespace, count: 1 });
  }

  /** Map insertion order as an LRU: re-insert on use, evict the oldest beyond the cache size. */
  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > this.cacheSize) map.delete(map.keys().next().value!);
  }
}
