import { omitUndefined } from '../core/omit-undefined.js';
import { isGone } from './api-error.js';
import type { ResourceType } from './discovery.js';
import type { ListOptions, ListPage, ListPageOptions, PagedListPage } from './client-options.js';

/** Page size of `list()`, as client-go's pager. */
export const DEFAULT_LIST_PAGE_SIZE = 500;
export const DEFAULT_MAX_LIST_RESTARTS = 3;

type ListPageFn = <T>(type: ResourceType, opts: ListPageOptions) => Promise<ListPage<T>>;

/**
 * Pages through a list with `listPage`. If a continue token expires (410) the list starts over from
 * the first page, and that page has `restarted: true`: everything yielded before it is stale. Shared
 * by every `Client` implementation, so the real and the fake client page alike.
 */
export async function* listPages<T>(
  listPage: ListPageFn,
  type: ResourceType,
  opts: ListOptions = {},
): AsyncGenerator<PagedListPage<T>, void, undefined> {
  const limit = opts.limit ?? DEFAULT_LIST_PAGE_SIZE;
  const maxRestarts = opts.maxRestarts ?? DEFAULT_MAX_LIST_RESTARTS;
  let restarts = 0;
  let cont: string | undefined;
  let restarted = false;
  for (;;) {
    let page: ListPage<T>;
    // A continue token carries the snapshot it belongs to: the server refuses resourceVersion
    // (other than "0") and resourceVersionMatch next to it, so later pages send neither.
    const pageOpts: ListPageOptions =
      cont === undefined
        ? { ...opts, limit }
        : {
            namespace: opts.namespace,
            labelSelector: opts.labelSelector,
            fieldSelector: opts.fieldSelector,
            // Like the label selector, the shard selector filters each page: the token does not carry it.
            ...omitUndefined({ shardSelector: opts.shardSelector || undefined }),
            signal: opts.signal,
            limit,
            continue: cont,
            ...omitUndefined({ metadataOnly: opts.metadataOnly || undefined }),
          };
    try {
      page = await listPage<T>(type, pageOpts);
    } catch (err) {
      if (cont !== undefined && isGone(err) && restarts < maxRestarts) {
        restarts++;
        cont = undefined;
        restarted = true;
        continue;
      }
      throw err;
    }
    yield { ...page, restarted };
    restarted = false;
    if (!page.continue) return;
    cont = page.continue;
  }
}

/** The whole list, paged underneath; `resourceVersion` is the one to start a watch from. */
export async function listAll<T>(
  pages: AsyncIterable<PagedListPage<T>>,
): Promise<{ items: T[]; resourceVersion: string }> {
  let items: T[] = [];
  let resourceVersion = '';
  for await (const page of pages) {
    if (page.restarted) items = [];
    for (const item of page.items) items.push(item);
    // The first page's resourceVersion is the list's: later pages are served from that snapshot.
    if (resourceVersion === '' || page.restarted) resourceVersion = page.resourceVersion;
  }
  return { items, resourceVersion };
}
