/**
 * The registry of shared informers: one informer (so one watch) per `InformerSpec`, however many
 * controllers and handlers ask for it. No global state: each manager owns its factory.
 *
 * Informers asked for after `start(signal)` start at once with the same signal, which is how
 * reading a kind the cache does not watch yet starts its informer lazily.
 */
import { realClock, type Clock } from '../core/clock.js';
import { AlreadyStartedError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import type { IndexFunc } from './indexer.js';
import { SharedInformer, waitFor, type InformerHealth, type SharedInformerOptions } from './informer.js';
import { informerKey, informerName, normalizeInformerSpec, type InformerSpec } from './informer-spec.js';
import type { ListerWatcher } from './lister-watcher.js';

/** Builds the ListerWatcher for a spec; the adapter over the real client lives with the manager. */
export type ListerWatcherFactory = (spec: InformerSpec) => ListerWatcher<KubeObject>;

/** Options applied to every informer of the factory (name and indexers are per informer). */
export interface InformerFactoryOptions extends Omit<SharedInformerOptions<KubeObject>, 'name' | 'indexers'> {
  /**
   * Put before every informer's name (its logs, its `informer` metric label): a member cluster's
   * factory names its informers `east/v1/ConfigMap`, so two clusters' series never meet.
   * @defaultValue none
   */
  readonly namePrefix?: string;
}

export interface InformerForOptions<T> {
  /** Added to the (possibly existing) informer; a name already taken by another function throws `IndexError`. */
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
}

export class InformerFactory {
  private readonly informers = new Map<string, SharedInformer<KubeObject>>();
  private readonly runs: Promise<void>[] = [];
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly informerOptions: Omit<InformerFactoryOptions, 'namePrefix'>;
  private readonly namePrefix: string;
  private signal: AbortSignal | undefined;
  private syncWaiters = new Set<() => void>();

  constructor(
    private readonly createListerWatcher: ListerWatcherFactory,
    options: InformerFactoryOptions = {},
  ) {
    const { namePrefix, ...informerOptions } = options;
    this.informerOptions = informerOptions;
    this.namePrefix = namePrefix ?? '';
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
  }

  /** True between `start(signal)` and the abort of that signal. */
  get started(): boolean {
    return this.signal !== undefined && !this.signal.aborted;
  }

  /** The shared informer for `spec`, created on first request (and started if the factory runs). */
  informerFor<T extends KubeObject = KubeObject>(
    spec: InformerSpec,
    options: InformerForOptions<T> = {},
  ): SharedInformer<T> {
    const key = informerKey(spec);
    let informer = this.informers.get(key);
    if (!informer) {
      const normalized = normalizeInformerSpec(spec);
      informer = new SharedInformer<KubeObject>(this.createListerWatcher(normalized), {
        ...this.informerOptions,
        name: this.namePrefix + informerName(normalized),
      });
      this.informers.set(key, informer);
      if (this.started) this.run(informer, this.signal!);
    }
    const typed = informer as unknown as SharedInformer<T>;
    for (const [name, fn] of Object.entries(options.indexers ?? {})) typed.addIndex(name, fn);
    return typed;
  }

  /** The informer for `spec` if one was created, without creating it. */
  existing(spec: InformerSpec): SharedInformer<KubeObject> | undefined {
    return this.informers.get(informerKey(spec));
  }

  /** Every informer created so far. */
  list(): SharedInformer<KubeObject>[] {
    return [...this.informers.values()];
  }

  /** Starts every informer, now and later, and resolves once `signal` aborted and all have stopped. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.signal) throw new AlreadyStartedError('the informer factory was already started');
    this.signal = signal;
    for (const informer of this.informers.values()) this.run(informer, signal);
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    // Informers started while we waited are in `runs` too.
    await Promise.all(this.runs);
  }

  /** True when every informer created so far has synced. */
  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** Waits for every informer created so far (rejects on abort, or on timeout if given). */
  waitForSync(signal: AbortSignal, timeoutMs?: number): Promise<void> {
    return waitFor(() => this.hasSynced(), this.syncWaiters, signal, this.clock, timeoutMs, 'the informer cache');
  }

  health(): InformerHealth[] {
    return [...this.informers.values()].map((i) => i.health());
  }

  private run(informer: SharedInformer<KubeObject>, signal: AbortSignal): void {
    const run = informer.start(signal).catch((err: unknown) => {
      // start() only rejects on misuse (started twice); never let it float away unseen.
      this.logger.error({ err, informer: informer.name }, 'informer stopped with an error');
    });
    this.runs.push(run);
    void informer.waitForSync(signal).then(
      () => {
        for (const w of this.syncWaiters) w();
      },
      () => {},
    );
  }
}
