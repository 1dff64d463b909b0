/**
 * The fault layer of a simulation: the FakeClient as each operator process sees it. Every process
 * (incarnation) gets its own `Client` from `clientFor`; all of them share one call counter, so a
 * fault's `at` names the same call whatever process makes it. Each call:
 * - takes 1–3 ms of fake time (seeded): with none, an operator that writes on every reconcile
 *   would loop in promise callbacks alone and the clock would never get a turn (the sharding
 *   simulation learned this the hard way);
 * - is recorded (`calls`, and `writes` for successful writes, with the revisions the lost-update
 *   oracle needs);
 * - fires the fault scheduled at its index, if faults are on (`stopFaults()` turns them off).
 *
 * Watches pass through a watch layer that can hold events (stale-cache: late; coalesce: only the
 * last per object; a stale restart: a lagging cache catching up), drop them (drop-events, then a
 * 410 so informers relist) or fail them (watch-expiry). `watchList` is not offered: informers list,
 * then watch, which lets a stale restart serve its lists from the past.
 *
 * A dead process's calls fail at once with ProcessDeadError and are not recorded: in a real cluster
 * it makes none. The driver (simulate.ts) learns of deaths and leader changes through `hooks`.
 */
import { ApiError } from '../../client/api-error.js';
import type {
  ApplyOptions,
  DeleteOptions,
  GetOptions,
  ListOptions,
  ListPage,
  ListPageOptions,
  ObjectLike,
  PagedListPage,
  PatchOptions,
  UpdateOptions,
  WatchOptions,
  WriteOptions,
} from '../../client/client-options.js';
import type { Client, RestMapper, StatusPatchOptions } from '../../client/contracts.js';
import type { Kind } from '../../client/kind.js';
import {
  applyArguments,
  type ApplyConfiguration,
  type StatusApplyConfiguration,
} from '../../client/apply-configuration.js';
import type { StatusBody } from '../../client/api-error.js';
import { listAll, listPages } from '../../client/paged-list.js';
import type { WatchEvent } from '../../client/watch-decoder.js';
import { linkedAbortController, sleep } from '../../core/abort.js';
import { OperatorRuntimeError } from '../../core/errors.js';
import type { FakeClock } from '../../core/fake-clock.js';
import type { KubeObject } from '../../core/object-key.js';
import type { FakeClient } from '../fake-client/fake-client.js';
import { EventQueue } from '../fake-client/watch-stream.js';
import { describeFault, type CrashFault, type Fault, type LeaderChangeFault, type StaleRestartFault } from './fault.js';
import type { CallRecord, WriteRecord } from './simulation-records.js';

/** How long a process restarted after a stale-restart fault works from its stale view once its controllers run. */
export const STALE_RESTART_CATCH_UP_MS = 1_000;

const LEASE_GROUP = 'coordination.k8s.io';

/** A call made by a process the simulation has killed: it never reaches the server. */
export class ProcessDeadError extends OperatorRuntimeError {
  declare readonly code: 'ERR_SIMULATED_PROCESS_DEAD';
  constructor(incarnation: number) {
    super('ERR_SIMULATED_PROCESS_DEAD', `operator process ${incarnation} is dead (a simulated crash)`);
  }
}

/** A call that timed out on the client (whether the server applied it is the fault's `committed`). */
export class SimulatedTimeoutError extends OperatorRuntimeError {
  declare readonly code: 'ERR_SIMULATED_TIMEOUT';
  constructor(what: string) {
    super('ERR_SIMULATED_TIMEOUT', `${what}: request timed out (simulated)`);
  }
}

/** What the driver must do when a fault ends or forks a process. */
export interface SimulatedClusterHooks {
  /** `incarnation` died at a crash or stale-restart fault. */
  died(incarnation: number, fault: CrashFault | StaleRestartFault): void;
  /** A leader change: start a new process now; `incarnation` dies after `fault.overlapMs`. */
  leaderChange(incarnation: number, fault: LeaderChangeFault): void;
  /** Every call of a live process, before it is made (the driver checks its real-time budget). */
  called?(): void;
}

export interface SimulatedClusterOptions {
  readonly store: FakeClient;
  readonly clock: FakeClock;
  readonly faults: readonly Fault[];
  /** Seeded source for call latency. */
  readonly random: () => number;
  readonly hooks: SimulatedClusterHooks;
  /** Gets one line per call and fault (the run's trace). */
  readonly trace: (line: string) => void;
}

type Verb = CallRecord['verb'];

/** A call to a simulated external service (external-service.ts): numbered and faulted like an API call. */
export interface ExternalTarget {
  /** The service's answer for an `error` fault's status. */
  error(status: number): Error;
}

interface Target {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
}

interface WriteInfo {
  readonly verb: WriteRecord['verb'];
  readonly precondition?: string;
}

interface Window {
  readonly kind: 'stale-cache' | 'coalesce' | 'drop-events';
  readonly untilMs: number;
  /** Only this process's watches (a stale restart's catch-up); all when undefined. */
  readonly incarnation?: number;
}

/** One watch of one process, between the store's stream and the informer. */
interface SimWatch {
  readonly incarnation: number;
  readonly out: EventQueue<WatchEvent<KubeObject>>;
  held: WatchEvent<KubeObject>[];
  coalesced: boolean;
  dropped: boolean;
}

export class SimulatedCluster {
  readonly calls: CallRecord[] = [];
  readonly writes: WriteRecord[] = [];
  private readonly store: FakeClient;
  private readonly clock: FakeClock;
  private readonly faultsAt = new Map<number, Fault>();
  private readonly random: () => number;
  private readonly hooks: SimulatedClusterHooks;
  private readonly trace: (line: string) => void;
  private readonly dead = new Set<number>();
  private readonly leaseFailing = new Set<number>();
  private readonly leaseUsers = new Set<number>();
  /** Per process: kinds whose first list is still to be served from the past, and how far back. */
  private readonly staleLists = new Map<number, { lag: number; served: Set<string> }>();
  /** Per process: newest resourceVersion seen of each object. */
  private readonly seen = new Map<number, Map<string, number>>();
  private readonly watches = new Set<SimWatch>();
  private windows: Window[] = [];
  private faultsOn = true;

  constructor(options: SimulatedClusterOptions) {
    this.store = options.store;
    this.clock = options.clock;
    for (const f of options.faults) this.faultsAt.set(f.at, f);
    this.random = options.random;
    this.hooks = options.hooks;
    this.trace = options.trace;
  }

  /** The client of process `incarnation`. */
  clientFor(incarnation: number, staleLag?: number): Client {
    if (staleLag !== undefined && staleLag > 0) {
      this.staleLists.set(incarnation, { lag: staleLag, served: new Set() });
      // Held until the process is at work (`atWork`), then for STALE_RESTART_CATCH_UP_MS more.
      this.windows.push({ kind: 'stale-cache', untilMs: Number.POSITIVE_INFINITY, incarnation });
    }
    return new SimulatedClient(this, incarnation, this.store);
  }

  isDead(incarnation: number): boolean {
    return this.dead.has(incarnation);
  }

  /** Whether the process ever touched a Lease (it runs leader election). */
  usesLeases(incarnation: number): boolean {
    return this.leaseUsers.has(incarnation);
  }

  /** The process dies now: its calls fail, its watches end, nothing it does is recorded again. */
  kill(incarnation: number): void {
    if (this.dead.has(incarnation)) return;
    this.dead.add(incarnation);
    this.trace(`${this.clock.monotonicNow()} #${incarnation} dies`);
    // A stale restart's catch-up window of a process that died before it got to work.
    this.windows = this.windows.filter((w) => w.incarnation !== incarnation);
    for (const w of [...this.watches]) {
      if (w.incarnation !== incarnation) continue;
      this.watches.delete(w);
      w.out.fail(new ProcessDeadError(incarnation));
    }
  }

  /**
   * The process's controllers started (it won the election, or needs none): a stale-restarted
   * process's watches reach the present {@link STALE_RESTART_CATCH_UP_MS} from now. Until then it
   * works from the past — what a restart against a lagging API server looks like to the operator,
   * however long its leader election took.
   */
  atWork(incarnation: number): void {
    const held = this.windows.find((w) => w.incarnation === incarnation && w.untilMs === Number.POSITIVE_INFINITY);
    if (!held) return;
    this.windows = this.windows.filter((w) => w !== held);
    this.openWindow({
      kind: 'stale-cache',
      untilMs: this.clock.monotonicNow() + STALE_RESTART_CATCH_UP_MS,
      incarnation,
    });
  }

  /** The process keeps running, but its Lease writes fail (a partitioned leader). */
  failLeaseWrites(incarnation: number): void {
    this.leaseFailing.add(incarnation);
  }

  /** Whether the process is an old leader cut off by a leader change. */
  isReplacedLeader(incarnation: number): boolean {
    return this.leaseFailing.has(incarnation);
  }

  /** No fault fires from now on; windows already open run out. */
  stopFaults(): void {
    this.faultsOn = false;
  }

  /** Whether a watch window is still holding or dropping events. */
  get windowsOpen(): boolean {
    return this.windows.length > 0;
  }

  // ---- what SimulatedClient calls ----------------------------------------------------------------

  /** Runs one call through the layer. */
  async call<R>(
    incarnation: number,
    verb: Verb,
    target: Target,
    signal: AbortSignal | undefined,
    perform: () => Promise<R>,
    write?: WriteInfo,
    external?: ExternalTarget,
  ): Promise<R> {
    if (this.dead.has(incarnation)) throw new ProcessDeadError(incarnation);
    this.hooks.called?.();
    if (this.dead.has(incarnation)) throw new ProcessDeadError(incarnation);
    const at = this.calls.length;
    const record: { -readonly [K in keyof CallRecord]: CallRecord[K] } = {
      at,
      incarnation,
      verb,
      apiVersion: target.apiVersion,
      kind: target.kind,
      ...(target.namespace ? { namespace: target.namespace } : {}),
      ...(target.name ? { name: target.name } : {}),
      ...(target.subresource ? { subresource: target.subresource } : {}),
      outcome: 'pending',
      atMs: this.clock.monotonicNow(),
      storeRevision: this.store.resourceVersion,
    };
    this.calls.push(record);
    const what = `${verb} ${target.kind} ${target.namespace ? `${target.namespace}/` : ''}${target.name ?? ''}${target.subresource ? `/${target.subresource}` : ''}`;
    const finish = (outcome: string): void => {
      record.outcome = outcome;
      this.trace(`${record.atMs} #${incarnation} call ${at} ${what} -> ${outcome}`);
    };
    if (isLease(target)) this.leaseUsers.add(incarnation);
    const fault = this.faultsOn ? this.faultsAt.get(at) : undefined;
    if (fault) this.trace(`${record.atMs} #${incarnation} fault ${describeFault(fault)}`);
    if (fault?.kind === 'crash' || fault?.kind === 'stale-restart') {
      finish('crashed');
      this.kill(incarnation);
      this.hooks.died(incarnation, fault);
      throw new ProcessDeadError(incarnation);
    }
    if (fault?.kind === 'leader-change') this.hooks.leaderChange(incarnation, fault);
    if (fault?.kind === 'stale-cache' || fault?.kind === 'coalesce' || fault?.kind === 'drop-events')
      this.openWindow({ kind: fault.kind, untilMs: record.atMs + fault.forMs });
    if (fault?.kind === 'watch-expiry') this.expireWatches();

    try {
      await sleep(this.clock, 1 + Math.floor(this.random() * 3), signal);
      if (this.dead.has(incarnation)) throw new ProcessDeadError(incarnation);
      if (fault?.kind === 'error') throw external ? external.error(fault.status) : errorFor(fault.status, target);
      if (fault?.kind === 'timeout' && !fault.committed) throw new SimulatedTimeoutError(what);
      if (write && isLease(target) && this.leaseFailing.has(incarnation))
        throw errorFor(500, target, 'the old leader cannot reach the API server');
      const replaced = write && target.name && !external ? this.revisionOf(target) : undefined;
      const observed = write && target.name ? this.seenOf(incarnation, target) : undefined;
      const result = await perform();
      this.observe(incarnation, target, result);
      // A create with generateName is named by the server: the answer carries the name.
      const writtenName = target.name ?? (result as KubeObject | undefined)?.metadata?.name;
      if (write && writtenName) {
        this.writes.push({
          at,
          incarnation,
          verb: write.verb,
          apiVersion: target.apiVersion,
          kind: target.kind,
          ...(target.namespace ? { namespace: target.namespace } : {}),
          name: writtenName,
          ...(target.subresource ? { subresource: target.subresource } : {}),
          ...(write.precondition !== undefined ? { preconditionResourceVersion: write.precondition } : {}),
          ...(observed !== undefined ? { observedResourceVersion: String(observed) } : {}),
          ...(replaced !== undefined ? { replacedResourceVersion: replaced } : {}),
          ...resultVersion(result),
          atMs: this.clock.monotonicNow(),
          nextCallAt: this.calls.length,
        });
      }
      if (fault?.kind === 'timeout') throw new SimulatedTimeoutError(what);
      finish('ok');
      return result;
    } catch (err) {
      finish(outcomeOf(err));
      throw err;
    }
  }

  /** A list page, from the past for the first list of each kind of a stale-restarted process. */
  listPageFor<T>(incarnation: number, type: Kind<T>, opts: ListPageOptions): Promise<ListPage<T>> {
    const stale = this.staleLists.get(incarnation);
    const kindId = `${type.apiVersion} ${type.kind}`;
    if (!stale || opts.continue || stale.served.has(kindId)) return this.store.listPage(type, opts);
    stale.served.add(kindId);
    const past = Math.max(1, Number(this.store.resourceVersion) - stale.lag);
    return this.store
      .listPage(type, { ...opts, resourceVersion: String(past), resourceVersionMatch: 'Exact' })
      .catch(() => this.store.listPage(type, opts)); // older than the history: the present
  }

  /** A watch of process `incarnation`, through the watch layer. */
  watchFor<T>(incarnation: number, type: Kind<T>, opts: WatchOptions): AsyncIterator<WatchEvent<T>> {
    const { controller, dispose } = linkedAbortController(opts.signal);
    const w: SimWatch = {
      incarnation,
      out: new EventQueue<WatchEvent<KubeObject>>(),
      held: [],
      coalesced: false,
      dropped: false,
    };
    const pump = async (): Promise<void> => {
      await this.call(
        incarnation,
        'watch',
        { apiVersion: type.apiVersion, kind: type.kind, ...ns(opts) },
        opts.signal,
        () => Promise.resolve(),
      );
      this.watches.add(w);
      for await (const event of this.store.watch<KubeObject>(type as Kind<KubeObject>, {
        ...opts,
        signal: controller.signal,
      }))
        this.route(w, event);
      w.out.end();
    };
    pump()
      .catch((err: unknown) => w.out.fail(err))
      .finally(() => {
        this.watches.delete(w);
        dispose();
      });
    return {
      next: () => w.out.next() as Promise<IteratorResult<WatchEvent<T>>>,
      return: () => {
        controller.abort();
        w.out.end();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  // ---- internals ---------------------------------------------------------------------------------

  private route(w: SimWatch, event: WatchEvent<KubeObject>): void {
    if (this.dead.has(w.incarnation)) return;
    const now = this.clock.monotonicNow();
    const active = this.windows.filter(
      (x) => x.untilMs > now && (x.incarnation === undefined || x.incarnation === w.incarnation),
    );
    if (event.type === 'BOOKMARK') {
      if (active.length === 0) w.out.push(event);
      return;
    }
    if (active.some((x) => x.kind === 'drop-events')) {
      w.dropped = true;
      return;
    }
    if (active.length > 0 || w.held.length > 0) {
      w.held.push(event);
      if (active.some((x) => x.kind === 'coalesce')) w.coalesced = true;
      if (active.length > 0) return;
      this.release(w);
      return;
    }
    this.deliver(w, event);
  }

  private deliver(w: SimWatch, event: WatchEvent<KubeObject>): void {
    const rv = Number(event.object.metadata?.resourceVersion);
    if (Number.isFinite(rv)) this.noteSeen(w.incarnation, identity(event.object), rv);
    w.out.push(event);
  }

  private openWindow(window: Window): void {
    this.windows.push(window);
    this.clock.setTimer(window.untilMs - this.clock.monotonicNow(), () => {
      const now = this.clock.monotonicNow();
      this.windows = this.windows.filter((x) => x.untilMs > now);
      for (const w of [...this.watches]) {
        const stillActive = this.windows.some((x) => x.incarnation === undefined || x.incarnation === w.incarnation);
        if (!stillActive) this.release(w);
      }
    });
  }

  /** Delivers what a window held (the last event per object if it coalesced); a watch that lost events expires. */
  private release(w: SimWatch): void {
    const held = w.coalesced ? coalesce(w.held) : w.held;
    w.held = [];
    w.coalesced = false;
    for (const e of held) this.deliver(w, e);
    if (w.dropped) {
      w.dropped = false;
      this.watches.delete(w);
      w.out.fail(gone());
    }
  }

  private expireWatches(): void {
    for (const w of [...this.watches]) {
      if (this.dead.has(w.incarnation)) continue;
      this.release(w);
      this.watches.delete(w);
      w.out.fail(gone());
    }
  }

  private revisionOf(target: Target): string | undefined {
    // Every write asks this: no copy of the whole object for one field (2% of a database seed).
    return this.store.peekResourceVersion(target, target.name!, target.namespace);
  }

  private seenOf(incarnation: number, target: Target): number | undefined {
    return this.seen.get(incarnation)?.get(identity(target));
  }

  private noteSeen(incarnation: number, id: string, rv: number): void {
    let m = this.seen.get(incarnation);
    if (!m) this.seen.set(incarnation, (m = new Map()));
    if (!(rv <= (m.get(id) ?? -1))) m.set(id, rv);
  }

  /** Every object in a call's answer counts as seen by the process. */
  private observe(incarnation: number, target: Target, result: unknown): void {
    const items = (result as { items?: unknown } | undefined)?.items;
    const objects = Array.isArray(items) ? (items as KubeObject[]) : [result as KubeObject];
    for (const o of objects) {
      const rv = Number(o?.metadata?.resourceVersion);
      if (!o?.metadata?.name || !Number.isFinite(rv)) continue;
      this.noteSeen(incarnation, identity({ apiVersion: target.apiVersion, kind: target.kind, ...o.metadata }), rv);
    }
  }
}

/** The Client one process holds. */
class SimulatedClient implements Client {
  readonly mapper: RestMapper;
  private readonly cluster: SimulatedCluster;
  private readonly incarnation: number;
  private readonly store: FakeClient;

  constructor(cluster: SimulatedCluster, incarnation: number, store: FakeClient) {
    this.cluster = cluster;
    this.incarnation = incarnation;
    this.store = store;
    this.mapper = store.mapper;
  }

  private run<R>(
    verb: Verb,
    target: Target,
    signal: AbortSignal | undefined,
    perform: () => Promise<R>,
    write?: WriteInfo,
  ) {
    return this.cluster.call(this.incarnation, verb, target, signal, perform, write);
  }

  get<T = KubeObject>(type: Kind<T>, name: string, opts: GetOptions = {}): Promise<T> {
    return this.run('get', { ...typeOf(type), ...ns(opts), name }, opts.signal, () => this.store.get(type, name, opts));
  }

  listPage<T = KubeObject>(type: Kind<T>, opts: ListPageOptions = {}): Promise<ListPage<T>> {
    return this.run('list', { ...typeOf(type), ...ns(opts) }, opts.signal, () =>
      this.cluster.listPageFor(this.incarnation, type, opts),
    );
  }

  listPages<T = KubeObject>(type: Kind<T>, opts: ListOptions = {}): AsyncGenerator<PagedListPage<T>, void, undefined> {
    return listPages<T>((t, o) => this.listPage(t, o), type, opts);
  }

  list<T = KubeObject>(type: Kind<T>, opts: ListOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
    return listAll(this.listPages<T>(type, opts));
  }

  watch<T = KubeObject>(type: Kind<T>, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    return { [Symbol.asyncIterator]: () => this.cluster.watchFor(this.incarnation, type, opts) };
  }

  create<T extends ObjectLike>(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.run('create', targetOf(obj, opts), opts.signal, () => this.store.create(obj, opts), {
      verb: 'create',
    });
  }

  update<T extends ObjectLike>(obj: T, opts: UpdateOptions = {}): Promise<T> {
    return this.run(
      'update',
      { ...targetOf(obj, opts), ...(opts.subresource ? { subresource: opts.subresource } : {}) },
      opts.signal,
      () => this.store.update(obj, opts),
      { verb: 'update', ...precondition(obj.metadata?.resourceVersion) },
    );
  }

  patch<T = KubeObject>(type: Kind<T>, name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    return this.run(
      'patch',
      { ...typeOf(type), ...ns(opts), name, ...(opts.subresource ? { subresource: opts.subresource } : {}) },
      opts.signal,
      () => this.store.patch(type, name, patch, opts),
      { verb: 'patch', ...precondition(patchResourceVersion(patch)) },
    );
  }

  apply<T extends ObjectLike>(obj: T, opts: ApplyOptions): Promise<T>;
  apply<T>(type: Kind<T>, config: ApplyConfiguration<T>, opts: ApplyOptions): Promise<T>;
  async apply<T>(first: object, second: object, third?: object): Promise<T> {
    const { obj, opts } = applyArguments(first, second, third);
    return this.run(
      'patch',
      { ...targetOf(obj, opts), ...(opts.subresource ? { subresource: opts.subresource } : {}) },
      opts.signal,
      () => this.store.apply(obj as T & ObjectLike, opts),
      { verb: 'patch', ...precondition(obj.metadata?.resourceVersion) },
    );
  }

  delete<T = KubeObject>(type: Kind<T>, name: string, opts: DeleteOptions = {}): Promise<T | StatusBody> {
    return this.run(
      'delete',
      { ...typeOf(type), ...ns(opts), name },
      opts.signal,
      () => this.store.delete(type, name, opts),
      {
        verb: 'delete',
        ...precondition(opts.preconditions?.resourceVersion),
      },
    );
  }

  updateStatus<T extends ObjectLike>(obj: T, opts: Omit<UpdateOptions, 'subresource'> = {}): Promise<T> {
    return this.update(obj, { ...opts, subresource: 'status' });
  }

  patchStatus<T = KubeObject>(type: Kind<T>, name: string, patch: unknown, opts: StatusPatchOptions = {}): Promise<T> {
    return this.patch(type, name, patch, { ...opts, type: opts.type ?? 'merge', subresource: 'status' });
  }

  applyStatus<T extends ObjectLike>(obj: T, opts: Omit<ApplyOptions, 'subresource'>): Promise<T>;
  applyStatus<T>(
    type: Kind<T>,
    config: StatusApplyConfiguration<T>,
    opts: Omit<ApplyOptions, 'subresource'>,
  ): Promise<T>;
  async applyStatus<T>(first: object, second: object, third?: object): Promise<T> {
    const { obj, opts } = applyArguments(first, second, third);
    return this.apply(obj as T & ObjectLike, { ...opts, subresource: 'status' });
  }
}

function typeOf(type: { apiVersion: string; kind: string }): { apiVersion: string; kind: string } {
  return { apiVersion: type.apiVersion, kind: type.kind };
}

function ns(opts: { namespace?: string }): { namespace?: string } {
  return opts.namespace ? { namespace: opts.namespace } : {};
}

function targetOf(obj: ObjectLike, opts: { namespace?: string }): Target {
  const namespace = obj.metadata?.namespace ?? opts.namespace;
  return {
    apiVersion: obj.apiVersion ?? '',
    kind: obj.kind ?? '',
    ...(namespace ? { namespace } : {}),
    ...(obj.metadata?.name ? { name: obj.metadata.name } : {}),
  };
}

function precondition(rv: string | undefined): { precondition?: string } {
  return rv ? { precondition: rv } : {};
}

function patchResourceVersion(patch: unknown): string | undefined {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return undefined;
  const rv = (patch as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
  return typeof rv === 'string' && rv !== '' ? rv : undefined;
}

function resultVersion(result: unknown): { resultResourceVersion?: string } {
  const rv = (result as KubeObject | undefined)?.metadata?.resourceVersion;
  return typeof rv === 'string' ? { resultResourceVersion: rv } : {};
}

function isLease(target: Target): boolean {
  return target.kind === 'Lease' && target.apiVersion.startsWith(`${LEASE_GROUP}/`);
}

function identity(o: {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  metadata?: object;
}): string {
  const m = (o.metadata ?? o) as { namespace?: string; name?: string };
  const group = (o.apiVersion ?? '').includes('/') ? (o.apiVersion ?? '').split('/')[0] : '';
  return `${group}/${o.kind ?? ''} ${m.namespace ?? ''}/${m.name ?? ''}`;
}

function outcomeOf(err: unknown): string {
  if (err instanceof ApiError) return String(err.status);
  if (err instanceof OperatorRuntimeError) return err.code === 'ERR_SIMULATED_TIMEOUT' ? 'timeout' : err.code;
  return 'error';
}

function errorFor(status: 409 | 429 | 500, target: Target, message?: string): ApiError {
  const details = { ...(target.name ? { name: target.name } : {}), kind: target.kind.toLowerCase() };
  if (status === 409)
    return new ApiError({
      status,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on ${target.kind} "${target.name ?? ''}": the object has been modified; please apply your changes to the latest version and try again`,
      details,
    });
  if (status === 429)
    return new ApiError({
      status,
      reason: 'TooManyRequests',
      message: 'too many requests, please try again later',
      details: { ...details, retryAfterSeconds: 1 },
    });
  return new ApiError({ status, reason: 'InternalError', message: message ?? 'injected failure (simulated)', details });
}

function gone(): ApiError {
  return new ApiError({ status: 410, reason: 'Expired', message: 'too old resource version (simulated watch expiry)' });
}

/** The last event of each object, in the order of those last events; an object added and deleted inside drops out. */
function coalesce(events: readonly WatchEvent<KubeObject>[]): WatchEvent<KubeObject>[] {
  const first = new Map<string, WatchEvent<KubeObject>>();
  const last = new Map<string, WatchEvent<KubeObject>>();
  for (const e of events) {
    const id = identity(e.object);
    if (!first.has(id)) first.set(id, e);
    last.delete(id); // re-inserted: keeps the order of last events
    last.set(id, e);
  }
  const out: WatchEvent<KubeObject>[] = [];
  for (const [id, e] of last) {
    const added = first.get(id)!.type === 'ADDED';
    if (added && e.type === 'DELETED') continue;
    out.push(added && e.type === 'MODIFIED' ? { type: 'ADDED', object: e.object } : e);
  }
  return out;
}
