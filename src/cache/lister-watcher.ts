/**
 * The seam between the cache and the API client: one paged list and one watch for a single
 * (kind, namespace scope, selectors). The real client's `listPage`/`watch` are adapted to this; tests
 * use `FakeListerWatcher`. The cache never imports the client's transport, only this shape and the
 * client's option types it narrows.
 */
import type { ListPageOptions, WatchOptions } from '../client/client-options.js';

/**
 * Options of one list page: the client's, less what a lister-watcher binds itself (namespace,
 * selectors). `continue` and `resourceVersion` are never sent together.
 */
export type ListerListOptions = Pick<
  ListPageOptions,
  'limit' | 'continue' | 'resourceVersion' | 'resourceVersionMatch' | 'signal' | 'transformItem'
>;

/** One page of a list: the items, the list's resourceVersion and the token for the next page. */
export interface ListerListPage<T> {
  readonly items: T[];
  readonly resourceVersion: string;
  readonly continue?: string;
}

/** Options of one watch: the client's, less what a lister-watcher binds itself (namespace, selectors). */
export type ListerWatchOptions = Pick<
  WatchOptions,
  'resourceVersion' | 'allowWatchBookmarks' | 'timeoutSeconds' | 'sendInitialEvents' | 'resourceVersionMatch' | 'signal'
>;

/** The annotation (value "true") on the bookmark that ends a watch-list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/**
 * A watch event as the API server sends it. `ERROR` events never reach the cache: the client turns
 * them into a thrown `ApiError` (410 → `isGone`).
 */
export type ListerWatchEvent<T> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | {
      readonly type: 'BOOKMARK';
      readonly object: {
        readonly metadata: {
          readonly resourceVersion: string;
          readonly annotations?: Readonly<Record<string, string>>;
        };
      };
    };

export interface ListerWatcher<T> {
  /**
   * True when `watch` passes `sendInitialEvents` on to a server (which may still reject it): the
   * watcher then tries a watch-list sync first. Absent or false: list+watch only.
   */
  readonly watchList?: boolean;
  list(opts: ListerListOptions): Promise<ListerListPage<T>>;
  /** Errors (including 410 Gone) are thrown from the iterator; a clean server close ends it. */
  watch(opts: ListerWatchOptions): AsyncIterable<ListerWatchEvent<T>>;
}
