/**
 * Test support for shardedClusters: a replica's view of the API server that a test can cut (kill -9
 * in process), and the fleet side as engagement intervals, shared by the unit and integration tests.
 */
import { ApiError } from '../../client/api-error.js';
import type { Client } from '../../client/contracts.js';
import { sleep } from '../../core/abort.js';
import type { Clock } from '../../core/clock.js';
import type { ReconcileInterval } from '../../sharding/testing/reconcile-intervals.js';
import type { ClusterEvents } from '../cluster-provider.js';

/**
 * `api` as one replica sees it: once cut, every request fails and every watch hangs until its caller
 * gives up, so the replica neither renews nor releases a Lease — what a killed process does.
 */
export function cuttableClient<C extends Client>(api: C): { client: C; cut(): void } {
  let cut = false;
  const fail = (): ApiError => new ApiError({ status: 503, message: 'replica killed' });
  const client = new Proxy(api, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (prop === 'watch')
        return (...args: unknown[]) => {
          if (!cut) return method.apply(target, args);
          const signal = (args[1] as { signal?: AbortSignal } | undefined)?.signal;
          return {
            [Symbol.asyncIterator]: () => ({
              next: () =>
                new Promise<IteratorResult<never>>((_resolve, reject) => {
                  if (signal?.aborted) reject(fail());
                  else signal?.addEventListener('abort', () => reject(fail()), { once: true });
                }),
              return: () => Promise.resolve({ done: true as const, value: undefined }),
            }),
          };
        };
      return (...args: unknown[]) => (cut ? Promise.reject(fail()) : method.apply(target, args));
    },
  });
  return { client, cut: () => (cut = true) };
}

/** The fleet side of one replica: engagements as intervals on `now`, a disengage drains for `drainMs`. */
export interface FakeFleet {
  readonly events: ClusterEvents & { disengage(name: string): Promise<void> };
  /** Clusters engaged now, sorted. */
  engaged(): string[];
  /** The process died: its engagements end now, later calls are ignored. */
  die(): void;
}

export function fakeFleet(replica: string, into: ReconcileInterval[], clock: Clock, drainMs: number): FakeFleet {
  const open = new Map<string, ReconcileInterval>();
  let dead = false;
  return {
    events: {
      engage: (cluster) => {
        if (dead || open.has(cluster.name)) return;
        const interval: ReconcileInterval = {
          key: cluster.name,
          replica,
          startMs: clock.monotonicNow(),
          endMs: Infinity,
        };
        open.set(cluster.name, interval);
        into.push(interval);
      },
      // An in-flight reconcile drains before the cluster counts as disengaged.
      disengage: async (cluster) => {
        const interval = open.get(cluster);
        if (!interval) return;
        await sleep(clock, drainMs);
        if (dead) return;
        interval.endMs = clock.monotonicNow();
        open.delete(cluster);
      },
    },
    engaged: () => [...open.keys()].sort(),
    die: () => {
      dead = true;
      for (const interval of open.values()) interval.endMs = clock.monotonicNow();
      open.clear();
    },
  };
}
