/**
 * A client for manager tests that need no API server: lists are empty (once `gate` settles, when
 * given) and watches stay open until aborted, so caches sync at once and stay synced.
 */
import type { Client } from '../../client/contracts.js';
import { whenAborted } from '../../core/abort.js';

export interface QuietClientOptions<E extends object> {
  /** Lists wait for it: a cache that syncs only when the test says so. */
  readonly gate?: Promise<void>;
  /** More members (`create`, counters…); the client returned is this object itself. */
  readonly extra?: E;
}

export function quietClient<E extends object = object>(options: QuietClientOptions<E> = {}): Client & E {
  const { gate } = options;
  const target = (options.extra ?? {}) as E;
  return Object.assign(target, {
    listPage: async () => {
      await gate;
      return { items: [], resourceVersion: '1' };
    },
    watch: (_type: unknown, opts: { signal?: AbortSignal }) => ({
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          if (opts.signal) await whenAborted(opts.signal);
          return { done: true as const, value: undefined };
        },
      }),
    }),
  }) as unknown as Client & E;
}
