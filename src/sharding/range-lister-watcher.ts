/**
 * A ListerWatcher whose `shardSelector` can change while its informer runs: the server-side mode's
 * primary informer, whose hash ranges follow the ring. A change ends the running watch with a
 * 410 Gone, which makes the informer relist with the new selector: objects that left the ranges
 * arrive as deletions, objects that entered them as additions (the store replacement's deltas).
 * Until the first selector is set, a list waits: a replica that does not know its ranges yet
 * caches nothing.
 */
import { clientListerWatcher } from '../cache/client-lister-watcher.js';
import type { InformerSpec } from '../cache/informer-spec.js';
import type {
  ListerListOptions,
  ListerListPage,
  ListerWatcher,
  ListerWatchEvent,
  ListerWatchOptions,
} from '../cache/lister-watcher.js';
import { ApiError } from '../client/api-error.js';
import type { ListWatchClient } from '../client/contracts.js';
import { linkedAbortController } from '../core/abort.js';
import { AbortedError } from '../core/errors.js';
import type { KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';

export class RangeListerWatcher implements ListerWatcher<KubeObject> {
  readonly watchList: boolean;
  private selector: string | undefined;
  /** Bumped on every change: a list page or watch of an older generation is stale. */
  private generation = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly client: ListWatchClient,
    private readonly spec: Omit<InformerSpec, 'shardSelector'>,
  ) {
    this.watchList = client.watchList === true;
  }

  /** The selector now (undefined before the first `setSelector`). */
  get currentSelector(): string | undefined {
    return this.selector;
  }

  /** Switches to `selector`; a running watch ends with 410 so the informer relists with it. */
  setSelector(selector: string): void {
    if (selector === this.selector) return;
    this.selector = selector;
    this.generation++;
    for (const notify of [...this.listeners]) notify();
  }

  async list(opts: ListerListOptions): Promise<ListerListPage<KubeObject>> {
    const generation = opts.continue === undefined ? await this.ready(opts.signal) : this.generation;
    const page = await this.inner().list(opts);
    // A page of a list begun with other ranges: start over (a continue token belongs to its query).
    if (generation !== this.generation) throw rangesChanged();
    return page;
  }

  async *watch(opts: ListerWatchOptions): AsyncGenerator<ListerWatchEvent<KubeObject>, void, undefined> {
    const generation = await this.ready(opts.signal);
    const { controller, dispose } = linkedAbortController(opts.signal);
    const onChange = (): void => controller.abort(rangesChanged());
    this.listeners.add(onChange);
    try {
      for await (const event of this.inner().watch({ ...opts, signal: controller.signal })) {
        if (generation !== this.generation) break;
        yield event;
      }
    } catch (err) {
      if (generation === this.generation || opts.signal?.aborted) throw err;
    } finally {
      this.listeners.delete(onChange);
      dispose();
    }
    if (generation !== this.generation && !opts.signal?.aborted) throw rangesChanged();
  }

  private inner(): ListerWatcher<KubeObject> {
    return clientListerWatcher(this.client, {
      ...this.spec,
      ...omitUndefined({ shardSelector: this.selector || undefined }),
    });
  }

  /** Resolves with the generation once a selector is set; rejects when `signal` aborts first. */
  private ready(signal: AbortSignal | undefined): Promise<number> {
    if (this.selector !== undefined) return Promise.resolve(this.generation);
    return new Promise<number>((resolve, reject) => {
      const onAbort = (): void => {
        this.listeners.delete(onSet);
        reject(new AbortedError('waiting for this replica’s hash ranges aborted', { cause: signal?.reason }));
      };
      const onSet = (): void => {
        this.listeners.delete(onSet);
        signal?.removeEventListener('abort', onAbort);
        resolve(this.generation);
      };
      if (signal?.aborted) return onAbort();
      this.listeners.add(onSet);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** What the watcher takes for "relist": this replica's hash ranges changed. */
function rangesChanged(): ApiError {
  return new ApiError({
    status: 410,
    reason: 'Expired',
    message: 'this replica’s hash ranges changed: relisting with the new shard selector',
  });
}
