/**
 * The server-side mode's cache of one sharded primary kind: informers (one per cached namespace,
 * or one) whose `shardSelector` selects this replica's buckets. The ranges are the buckets the
 * replica owns in its own view of the ring, plus the bucket of every object labelled with it, which
 * a small metadata-only informer on the replica's shard label finds wherever it is. So an object
 * assigned to this replica is always cached in full, even when the sharder's view of the ring
 * differs from ours, and its drain can always be seen and acknowledged. Ownership itself stays with
 * the labels and the gate: the ranges only decide what is cached.
 */
import { clientListerWatcher } from '../cache/client-lister-watcher.js';
import { SharedInformer } from '../cache/informer.js';
import type { ListWatchClient } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import type { Registry } from 'prom-client';
import { omitUndefined } from '../core/omit-undefined.js';
import { bucketOf, bucketSelector, bucketsOf } from './buckets.js';
import { RangeListerWatcher } from './range-lister-watcher.js';

/** How long after a change of the cached objects the ranges are recomputed (changes come in bursts). */
const REFRESH_DELAY_MS = 100;

export interface RangeCacheOptions {
  readonly client: ListWatchClient;
  readonly type: ResourceType;
  /** The manager's cached namespaces; all when omitted. */
  readonly namespaces?: readonly string[];
  readonly memberId: string;
  readonly shardLabel: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry?: Registry;
}

export class RangeCache {
  readonly informers: SharedInformer<KubeObject>[];
  /** Metadata of every object labelled with this replica, in or out of its ranges. */
  private readonly labelled: SharedInformer<KubeObject>[];
  private readonly listerWatchers: RangeListerWatcher[];
  private live: readonly string[] = [];
  private readonly log: Logger;
  private refreshScheduled = false;

  constructor(private readonly options: RangeCacheOptions) {
    const scopes: { namespace?: string }[] = options.namespaces?.length
      ? options.namespaces.map((namespace) => ({ namespace }))
      : [{}];
    this.listerWatchers = scopes.map(
      (scope) =>
        new RangeListerWatcher(options.client, {
          apiVersion: options.type.apiVersion,
          kind: options.type.kind,
          ...scope,
        }),
    );
    this.informers = this.listerWatchers.map(
      (lw, i) =>
        new SharedInformer<KubeObject>(lw, {
          clock: options.clock,
          logger: options.logger,
          ...omitUndefined({ registry: options.registry }),
          // The shard label in the name tells this replica's own informer apart in cache_objects.
          name: `${options.type.apiVersion} ${options.type.kind}${scopes[i]!.namespace ? ` ns=${scopes[i]!.namespace}` : ''} ${options.shardLabel}=${options.memberId} ranges`,
        }),
    );
    this.labelled = scopes.map(
      (scope) =>
        new SharedInformer<KubeObject>(
          clientListerWatcher(options.client, {
            apiVersion: options.type.apiVersion,
            kind: options.type.kind,
            ...scope,
            labelSelector: `${options.shardLabel}=${options.memberId}`,
            metadataOnly: true,
          }),
          {
            clock: options.clock,
            logger: options.logger,
            name: `${options.type.apiVersion} ${options.type.kind}${scope.namespace ? ` ns=${scope.namespace}` : ''} labelled ${options.memberId} metadata-only`,
          },
        ),
    );
    this.log = options.logger.child({ component: 'sharding', kind: options.type.kind, member: options.memberId });
    // An object assigned to us (maybe outside our ranges) or handed over changes the ranges: recompute soon, once per burst.
    const changed = (): void => this.scheduleRefresh();
    for (const informer of this.labelled)
      informer.addEventHandler({ add: changed, update: changed, delete: changed }, { name: 'range-cache' });
  }

  /** Whether an object of this key is labelled with this replica (it exists, wherever it is cached). */
  isLabelledOurs(key: string): boolean {
    return this.labelled.some((i) => i.reader.get(key) !== undefined);
  }

  /** Runs the informers until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    await Promise.all([...this.labelled, ...this.informers].map((i) => i.start(signal)));
  }

  /** The ring changed (in this replica's view): recompute the ranges. */
  setLiveMembers(live: readonly string[]): void {
    this.live = live;
    this.refresh();
  }

  private scheduleRefresh(): void {
    if (this.refreshScheduled) return;
    this.refreshScheduled = true;
    this.options.clock.setTimer(REFRESH_DELAY_MS, () => {
      this.refreshScheduled = false;
      this.refresh();
    });
  }

  /** Recomputes the ranges: owned buckets plus buckets of objects still labelled ours. */
  refresh(): void {
    const buckets = new Set(bucketsOf(this.options.memberId, this.live));
    for (const informer of this.labelled) for (const obj of informer.reader.list()) buckets.add(bucketOf(obj));
    // None yet (we are not in our own view of the ring): keep what we have, a superset is harmless.
    const selector = bucketSelector(buckets);
    if (selector === undefined) return;
    for (const lw of this.listerWatchers) {
      if (lw.currentSelector === selector) continue;
      this.log.info({ buckets: buckets.size }, 'hash ranges changed: relisting');
      lw.setSelector(selector);
    }
  }
}
