/**
 * The seam between the cache and the API client: one paged list and one watch for a single
 * (kind, namespace scope, selectors). The real client's `listPage`/`watch` are adapted to this; tests
 * use `FakeListerWatcher`. The cache never imports the client's transport, only this shape.
 */

/** Options of one list page. `continue` and `resourceVersion` are never sent together. */
export interface ListOptions {
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  readonly signal?: AbortSignal;
}

/** One page of a list: the items, the list's resourceVersion and the token for the next page. */
export interface ListPage<T> {
  readonly items: T[];
  readonly resourceVersion: string;
  readonly continue?: string;
}

export interface WatchOptions {
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  readonly timeoutSeconds?: number;
  /**
   * A watch-list: the server first streams the current state as ADDED events, then a BOOKMARK
   * annotated {@link INITIAL_EVENTS_END_ANNOTATION}, then changes. Sent with
   * `resourceVersionMatch: 'NotOlderThan'`; servers before it existed reject that combination.
   */
  readonly sendInitialEvents?: boolean;
  readonly resourceVersionMatch?: 'NotOlderThan';
  readonly signal?: AbortSignal;
}

/** The annotation (value "true") on the bookmark that ends a watch-list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/**
 * A watch event as the API server sends it. `ERROR` events never reach the cache: the client turns
 * them into a thrown `ApiError` (410 → `isGone`).
 */
export type WatchEvent<T> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | {
      readonly type: 'BOOKMARK';
      readonly object: { readonly metadata: { readonly resourceVersion: string; readonly annotations?: Readonly<Record<string, string>> } };
    };

export interface ListerWatcher<T> {
  /**
   * True when `watch` passes `sendInitialEvents` on to a server (which may still reject it): the
   * watcher then tries a watch-list sync first. Absent or false: list+watch only.
   */
  readonly watchList?: boolean;
  list(opts: ListOptions): Promise<ListPage<T>>;
  /** Errors (including 410 Gone) are thrown from the iterator; a clean server close ends it. */
  watch(opts: WatchOptions): AsyncIterable<WatchEvent<T>>;
}
