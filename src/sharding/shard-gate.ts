/**
 * The replica's side of the hand-over protocol for one primary kind, shared by every sharded
 * controller of that kind:
 * - admits a reconcile of a key only while the primary object in this replica's cache is granted to
 *   this member (the shard label **and** the grant label name it) and not draining (checked when
 *   the reconcile starts, synchronously with counting it as in flight);
 * - when an object it held stops being its own — the sharder asks for it (drain label), or someone
 *   else edited its labels — waits until no reconcile of that key is in flight (new ones are no
 *   longer admitted) and then releases it: removes its own name from the shard and grant labels
 *   and, once no name is left, writes the released label with its member id (the acknowledgement).
 *   Every such write is conditioned on the resourceVersion it saw, so a late one can never strip a
 *   label the sharder wrote after it.
 * A key whose object is gone is reconciled only if its object was ours when it went (the deletion
 * reconcile); a key whose object this replica never held, or handed over, is not.
 */
import type { EventHandler } from '../cache/handler-dispatcher.js';
import type { HandlerRegistration, SharedInformer } from '../cache/informer.js';
import { deletedObject, type Tombstone } from '../cache/tombstone.js';
import { ignoreNotFound, isConflict, isNotFound } from '../client/api-error.js';
import type { Reader, Writer } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import { sleep } from '../core/abort.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { keyOf, objectKey, type KubeObject } from '../core/object-key.js';
import type { Reconciler } from '../controller/reconciler.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { requeueAfter } from '../core/result.js';

/** How long to wait for the cache to catch up after an acknowledgement conflicted. @defaultValue 200 ms */
export const ACK_CONFLICT_RETRY_MS = 200;

export interface ShardGateOptions {
  readonly type: ResourceType;
  readonly memberId: string;
  readonly shardLabel: string;
  readonly drainLabel: string;
  /** The sharder's grant, which must name this member too (see `grantLabel`). */
  readonly grantLabel: string;
  /** Where this member acknowledges a release (see `releasedLabel`). */
  readonly releasedLabel: string;
  readonly client: Pick<Reader, 'get'> & Pick<Writer, 'patch'>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Wait after an acknowledgement that failed for another reason than a conflict (the ring's renew period). */
  readonly failedAckWaitMs: number;
  /**
   * Whether this member still holds its membership Lease: false as soon as the renew deadline passed,
   * even if the timer that aborts the sharded controllers has not run yet (a blocked event loop).
   * @defaultValue always true
   */
  readonly isMember?: () => boolean;
}

/** What the gate says of a key when its reconcile is about to start. */
export type Admission = 'owned' | 'deleted-while-owned' | 'not-owned';

export class ShardGate {
  readonly type: ResourceType;
  private informers: readonly SharedInformer<KubeObject>[] = [];
  private readonly inFlight = new Map<string, number>();
  private readonly idleWaiters = new Map<string, (() => void)[]>();
  /** Keys whose object this replica held as its own and has not handed over (deleted ones stay until their reconcile). */
  private readonly held = new Set<string>();
  private readonly acknowledging = new Set<string>();
  private attachments = 0;
  /** The queues of the controllers attached: a key that becomes ours is enqueued in each. */
  private readonly enqueuers = new Set<(key: string) => void>();
  private registrations: HandlerRegistration[] = [];
  private signal: AbortSignal | undefined;
  private readonly log: Logger;
  private acknowledged = 0;
  private existsElsewhere: ((key: string) => boolean) | undefined;

  constructor(private readonly options: ShardGateOptions) {
    this.type = options.type;
    this.log = options.logger.child({ component: 'sharding', kind: options.type.kind, member: options.memberId });
  }

  /**
   * Server-side mode: the primary informers hold this member's hash ranges, and an object can leave
   * them (ranges narrowed) before it is handed over. `exists` says whether it still exists labelled
   * with this member, so its absence is not taken for a deletion.
   */
  setExistsElsewhere(exists: (key: string) => boolean): void {
    this.existsElsewhere = exists;
  }

  /** Whether `obj` is granted to this member (shard and grant labels) and not being handed over. */
  owns(obj: KubeObject): boolean {
    const labels = obj.metadata?.labels;
    const me = this.options.memberId;
    return (
      labels?.[this.options.shardLabel] === me &&
      labels[this.options.grantLabel] === me &&
      labels[this.options.drainLabel] === undefined
    );
  }

  /**
   * Whether this member must release `obj` though it never held it: the shard label names it but the
   * object is draining or granted to another member. (Shard label alone, no grant: an assignment
   * being completed by the sharder, or one written before the grant label existed — nothing to do.)
   */
  private mustRelease(obj: KubeObject): boolean {
    const labels = obj.metadata?.labels;
    if (labels?.[this.options.shardLabel] !== this.options.memberId) return false;
    const grant = labels[this.options.grantLabel];
    return (
      labels[this.options.drainLabel] !== undefined ||
      (grant !== undefined && grant !== '' && grant !== this.options.memberId)
    );
  }

  /** Objects in the cache this member owns now (the `sharding_keys_owned` gauge). */
  ownedCount(): number {
    let n = 0;
    for (const informer of this.informers) for (const obj of informer.reader.list()) if (this.owns(obj)) n++;
    return n;
  }

  /** Acknowledged drains since start. */
  get acknowledgedDrains(): number {
    return this.acknowledged;
  }

  /**
   * Starts watching the primary informers for drains (once, however many controllers attach), and
   * enqueues keys into `enqueue` when they become this member's: an assignment may be a label-only
   * update, which the primary's default predicate filters out. Returns the detach function; the
   * last detach stops watching.
   */
  attach(
    informers: readonly SharedInformer<KubeObject>[],
    signal: AbortSignal,
    enqueue: (key: string) => void,
  ): () => void {
    const own = (key: string): void => enqueue(key);
    this.enqueuers.add(own);
    if (this.attachments++ === 0) {
      this.informers = informers;
      this.signal = signal;
      const handler = this.drainHandler();
      this.registrations = informers.map((i) => i.addEventHandler(handler, { name: `shard-gate:${this.type.kind}` }));
    }
    let detached = false;
    return () => {
      if (detached) return;
      detached = true;
      this.enqueuers.delete(own);
      if (--this.attachments > 0) return;
      for (const r of this.registrations) r.remove();
      this.registrations = [];
    };
  }

  /** What a reconcile of `key` starting now may do. */
  admit(key: string): Admission {
    if (this.options.isMember && !this.options.isMember()) return 'not-owned';
    const obj = this.find(key);
    if (obj) return this.owns(obj) ? 'owned' : 'not-owned';
    return this.held.has(key) ? 'deleted-while-owned' : 'not-owned';
  }

  /** `reconciler` behind the gate: keys this member does not own now are skipped. */
  wrap(reconciler: Reconciler): Reconciler {
    return {
      reconcile: async (request, ctx) => {
        const key = objectKey(request);
        let admission = this.admit(key);
        if (admission === 'deleted-while-owned') {
          // Out of our cache for now but not deleted (server-side ranges moving): look again later.
          if (this.existsElsewhere?.(key)) return requeueAfter(this.options.failedAckWaitMs);
          // Gone from the cache while ours: deleted, or its label taken off by someone else. Only a
          // deletion is ours to reconcile; the server knows which.
          const current = await ignoreNotFound(
            this.options.client.get(this.type, request.name, {
              ...omitUndefined({ namespace: request.namespace || undefined }),
              signal: ctx.signal,
            }),
          );
          if (current !== undefined) {
            if (!this.find(key)) this.held.delete(key);
            ctx.log.info({ key }, 'left this shard’s cache without being deleted or handed over: not reconciled here');
            return;
          }
          admission = this.admit(key);
        }
        if (admission === 'not-owned') {
          ctx.log.debug({ key }, 'not this shard’s key: skipped');
          return;
        }
        // Counted in the same tick as the admission: a drain seen later waits for this reconcile.
        this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
        try {
          return await reconciler.reconcile(request, ctx);
        } finally {
          const left = (this.inFlight.get(key) ?? 1) - 1;
          if (left > 0) this.inFlight.set(key, left);
          else {
            this.inFlight.delete(key);
            for (const wake of this.idleWaiters.get(key) ?? []) wake();
            this.idleWaiters.delete(key);
          }
          if (admission === 'deleted-while-owned' && !this.find(key)) this.held.delete(key);
        }
      },
    };
  }

  private find(key: string): KubeObject | undefined {
    for (const informer of this.informers) {
      const obj = informer.reader.get(key);
      if (obj) return obj;
    }
    return undefined;
  }

  private drainHandler(): EventHandler<KubeObject> {
    const seen = (obj: KubeObject): void => {
      const key = keyOf(obj);
      if (this.owns(obj)) {
        if (!this.held.has(key)) {
          this.held.add(key);
          for (const enqueue of this.enqueuers) enqueue(key);
        }
        return;
      }
      // Held and no longer ours (a drain, or labels someone else edited), or named where it should not be.
      if (this.held.delete(key) || this.mustRelease(obj)) void this.release(key, obj);
    };
    return {
      add: seen,
      update: (_old, obj) => seen(obj),
      delete: (deleted: KubeObject | Tombstone<KubeObject>) => {
        const obj = deletedObject(deleted);
        const key = keyOf(obj);
        if (!this.owns(obj)) {
          if (this.held.delete(key)) void this.release(key, obj);
          return;
        }
        // Gone while ours: deleted (its deletion reconcile is ours, so it stays held), or its labels
        // changed by someone else (a label-filtered watch's DELETED carries the last state that
        // matched). Only the server knows which: release it if it still exists (after any
        // in-flight reconcile), unless it only left our hash ranges (server mode).
        if (this.held.has(key) && !this.existsElsewhere?.(key)) void this.release(key, obj);
      },
    };
  }

  /**
   * Waits until no reconcile of `key` is in flight, then takes this member's name off the object
   * (once per key at a time). Reads the object from the cache, or from the API server when it left
   * the cache (label mode: its shard label changed).
   */
  private async release(key: string, seenObj: KubeObject): Promise<void> {
    if (this.acknowledging.has(key)) return;
    const signal = this.signal;
    if (!signal || signal.aborted) return;
    this.acknowledging.add(key);
    const startedMs = this.options.clock.monotonicNow();
    const name = seenObj.metadata?.name ?? '';
    const namespace = seenObj.metadata?.namespace;
    try {
      await this.whenIdle(key, signal);
      for (;;) {
        const obj =
          this.find(key) ??
          (await ignoreNotFound(
            this.options.client.get<KubeObject>(this.type, name, {
              ...omitUndefined({ namespace: namespace || undefined }),
              signal,
            }),
          ));
        if (!obj || this.owns(obj)) return; // gone, or granted to us again
        const labels = obj.metadata?.labels ?? {};
        const me = this.options.memberId;
        const patch: Record<string, string | null> = {};
        if (labels[this.options.shardLabel] === me) patch[this.options.shardLabel] = null;
        if (labels[this.options.grantLabel] === me) patch[this.options.grantLabel] = null;
        const othersNamed = [this.options.shardLabel, this.options.grantLabel].some(
          (l) => labels[l] !== undefined && labels[l] !== '' && labels[l] !== me,
        );
        // Another member still named: it releases its own name, or the sharder sorts it out (the
        // drain label stays until the last name is off). Our release is written whenever we take a
        // name off, or when none is left: the sharder then stops counting us as a possible holder.
        if (!othersNamed && labels[this.options.drainLabel] !== undefined) patch[this.options.drainLabel] = null;
        if ((Object.keys(patch).length > 0 || !othersNamed) && labels[this.options.releasedLabel] !== me)
          patch[this.options.releasedLabel] = me;
        if (Object.keys(patch).length === 0) return;
        try {
          await this.options.client.patch(
            { apiVersion: obj.apiVersion ?? this.type.apiVersion, kind: this.type.kind },
            obj.metadata!.name!,
            { metadata: { resourceVersion: obj.metadata?.resourceVersion, labels: patch } },
            { type: 'merge', signal, ...omitUndefined({ namespace: obj.metadata?.namespace || undefined }) },
          );
          this.acknowledged++;
          this.log.info(
            { key, waitedMs: Math.round(this.options.clock.monotonicNow() - startedMs) },
            'handed over a key',
          );
          return;
        } catch (err) {
          if (isNotFound(err)) return;
          if (signal.aborted) return;
          // Changed since we read it: wait for the cache, then decide again.
          if (!isConflict(err)) this.log.warn({ err, key }, 'could not release a key: retrying');
          await sleep(
            this.options.clock,
            isConflict(err) ? ACK_CONFLICT_RETRY_MS : this.options.failedAckWaitMs,
            signal,
          );
        }
      }
    } catch (err) {
      if (!signal.aborted) this.log.error({ err, key }, 'releasing a key failed');
    } finally {
      this.acknowledging.delete(key);
    }
  }

  private whenIdle(key: string, signal: AbortSignal): Promise<void> {
    if (!this.inFlight.has(key)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      const waiters = this.idleWaiters.get(key) ?? [];
      waiters.push(done);
      this.idleWaiters.set(key, waiters);
    });
  }
}
