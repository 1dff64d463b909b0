/**
 * The managed application in the loop (issue 42 item 5): an external service a reconciler calls — a
 * cloud API, a backup service, a DNS provider — simulated as one library piece instead of a rig per
 * operator. Declare it in `simulate({ services: { storage: { … } } })`; each operator process gets
 * its handle from `setup`'s `service('storage')` and wraps it in the operator's own client
 * interface (a few lines). The service holds **records**: created (under an id the caller chooses,
 * or one the service assigns; an idempotency key makes a retried create return the first record),
 * read, listed by tags, updated and deleted. It is:
 *
 * - **slow**: every call takes `latencyMs` of fake time, and work takes time — a record is
 *   `pending` for `workMs` after a create or an update before it is `ready`, and `deleting` for
 *   `deleteMs` before it is gone;
 * - **failing**: a call fails with 503 before it takes effect (`failureRate`), and the simulation's
 *   `error` and `timeout` faults hit its calls as they hit API calls;
 * - **lying**: a write takes effect but its answer is lost — the caller sees a 503
 *   (`lostResponseRate`); a read is answered from a replica `staleReadLagMs` behind (`staleReadRate`):
 *   a record created a moment ago is not there yet, a deleted one still is.
 *
 * Deterministic: latencies come from a fixed stream, misbehaviour from the run's seed, both per
 * service; only seeded runs misbehave (the fault-free run and the crash-point sweep see a slow but
 * honest service), and only while faults are on, so a run can settle. Its calls are numbered with
 * the API calls (a fault's `at` can name one; a crash after a service write is a crash point of the
 * sweep; each write is in `record.writes`, site `create service:<name>`), and its state lives with
 * the run, not with a process: it outlives operator restarts. Invariants read it from
 * `run.services[<name>]`: the records at the end and every record ever created.
 */
import { OperatorRuntimeError } from '../../core/errors.js';
import { sleep } from '../../core/abort.js';
import type { FakeClock } from '../../core/fake-clock.js';
import { seededRandom } from '../../core/seeded-random.js';
import { InvalidOptionError } from '../../core/errors.js';

export interface ExternalServiceOptions {
  /** Fake time each call takes, drawn in [min, max]. @defaultValue {@link DEFAULT_EXTERNAL_LATENCY_MS} */
  readonly latencyMs?: readonly [number, number];
  /** How long a record is `pending` after a create or an update. @defaultValue {@link DEFAULT_EXTERNAL_WORK_MS} */
  readonly workMs?: number;
  /** How long a record is `deleting` before it is gone. @defaultValue {@link DEFAULT_EXTERNAL_DELETE_MS} */
  readonly deleteMs?: number;
  /** Share of calls that fail with 503 and take no effect (seeded runs, faults on). @defaultValue {@link DEFAULT_EXTERNAL_FAILURE_RATE} */
  readonly failureRate?: number;
  /** Share of writes that take effect but whose answer is a 503. @defaultValue {@link DEFAULT_EXTERNAL_LOST_RESPONSE_RATE} */
  readonly lostResponseRate?: number;
  /** Share of reads (get, list) answered from a replica behind. @defaultValue {@link DEFAULT_EXTERNAL_STALE_READ_RATE} */
  readonly staleReadRate?: number;
  /** How far behind such a replica is. @defaultValue {@link DEFAULT_EXTERNAL_STALE_READ_LAG_MS} */
  readonly staleReadLagMs?: number;
}

/** A call over the network to another service. @defaultValue [10, 100] ms */
export const DEFAULT_EXTERNAL_LATENCY_MS: readonly [number, number] = [10, 100];
/** @defaultValue 2,000 ms */
export const DEFAULT_EXTERNAL_WORK_MS = 2_000;
/** @defaultValue 1,000 ms */
export const DEFAULT_EXTERNAL_DELETE_MS = 1_000;
/** @defaultValue 0.1 */
export const DEFAULT_EXTERNAL_FAILURE_RATE = 0.1;
/** @defaultValue 0.05 */
export const DEFAULT_EXTERNAL_LOST_RESPONSE_RATE = 0.05;
/** @defaultValue 0.2 */
export const DEFAULT_EXTERNAL_STALE_READ_RATE = 0.2;
/** @defaultValue 2,000 ms */
export const DEFAULT_EXTERNAL_STALE_READ_LAG_MS = 2_000;

export type ExternalRecordState = 'pending' | 'ready' | 'deleting';

/** One record of the service, as an answer or the run's record carries it. */
export interface ExternalRecord<S = Record<string, unknown>> {
  readonly id: string;
  readonly spec: S;
  readonly tags: Readonly<Record<string, string>>;
  readonly state: ExternalRecordState;
  /** 1 at create, +1 per update. */
  readonly version: number;
  /** Fake time since the run started. */
  readonly createdAtMs: number;
  readonly idempotencyKey?: string;
}

export interface ExternalCreateOptions {
  /** The id to create under (a second create of a live id: 409). @defaultValue one the service assigns */
  readonly id?: string;
  /** A create with a key already used answers the record that key created, if it still exists. */
  readonly idempotencyKey?: string;
  readonly tags?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export interface ExternalCallOptions {
  readonly signal?: AbortSignal;
}

/** What an operator process holds: the service's API (each call is a network call of that process). */
export interface ExternalService<S = Record<string, unknown>> {
  readonly name: string;
  create(spec: S, options?: ExternalCreateOptions): Promise<ExternalRecord<S>>;
  /** The record, or undefined if there is none (as this replica sees it). */
  get(id: string, options?: ExternalCallOptions): Promise<ExternalRecord<S> | undefined>;
  /** Records whose tags include all of `tags`. */
  list(tags?: Readonly<Record<string, string>>, options?: ExternalCallOptions): Promise<ExternalRecord<S>[]>;
  /** 404 if there is no such record. */
  update(id: string, spec: S, options?: ExternalCallOptions): Promise<ExternalRecord<S>>;
  /** Starts the deletion (`deleting`, gone after `deleteMs`); 404 if there is no such record. */
  delete(id: string, options?: ExternalCallOptions): Promise<void>;
}

/** What the service held, for invariants (`run.services[name]`). */
export interface ExternalServiceState {
  /** Records at the end of the run (`deleting` ones too). */
  readonly records: readonly ExternalRecord[];
  /** Every record ever created during the run, as created. */
  readonly created: readonly ExternalRecord[];
}

/** An error answer of the simulated service: 404, 409 (the id is taken), 503 (failed, or the answer was lost). */
export class ExternalServiceError extends OperatorRuntimeError {
  declare readonly code: 'ERR_EXTERNAL_SERVICE';
  constructor(
    readonly service: string,
    readonly status: number,
    message: string,
  ) {
    super('ERR_EXTERNAL_SERVICE', `${service}: ${status} ${message}`);
  }
}

/** Whether `err` is the simulated service's 404. */
export function isExternalNotFound(err: unknown): boolean {
  return err instanceof ExternalServiceError && err.status === 404;
}

/** One state of a record from `fromMs` on (a create, an update, a delete request). */
interface Version {
  readonly fromMs: number;
  readonly id: string;
  readonly spec: unknown;
  readonly tags: Readonly<Record<string, string>>;
  readonly version: number;
  readonly createdAtMs: number;
  readonly readyAtMs: number;
  readonly deletingFromMs?: number;
  readonly goneAtMs?: number;
  readonly idempotencyKey?: string;
}

/** The part of the fault layer (simulated-cluster.ts) a service call goes through: numbered, faulted, recorded. */
export interface ServiceCallLayer {
  call<R>(
    incarnation: number,
    verb: 'get' | 'list' | 'create' | 'update' | 'delete',
    target: { readonly apiVersion: string; readonly kind: string; readonly name?: string },
    signal: AbortSignal | undefined,
    perform: () => Promise<R>,
    write: { readonly verb: 'create' | 'update' | 'delete' } | undefined,
    external: { error(status: number): Error },
  ): Promise<R>;
}

export interface SimulatedExternalServiceOptions {
  readonly name: string;
  readonly options: ExternalServiceOptions;
  readonly clock: FakeClock;
  readonly cluster: ServiceCallLayer;
  /** The run's seed (misbehaviour is drawn from it) and whether it may misbehave now. */
  readonly seed: number;
  readonly misbehaving: () => boolean;
  readonly trace: (line: string) => void;
}

/** The service for one run (the driver makes one per declared service). */
export class SimulatedExternalService {
  private readonly versions = new Map<string, Version[]>();
  private readonly created: ExternalRecord[] = [];
  private readonly keys = new Map<string, string>();
  private readonly latency: () => number;
  private readonly chance: () => number;
  private nextId = 1;
  private readonly o: Required<ExternalServiceOptions>;

  constructor(private readonly run: SimulatedExternalServiceOptions) {
    this.o = resolveOptions(run.name, run.options);
    const salt = hash(run.name);
    this.latency = seededRandom(0x5eed ^ salt);
    this.chance = seededRandom(Math.imul(run.seed, 0x9e3779b1) ^ salt);
  }

  /** The handle process `incarnation` calls through. */
  clientFor(incarnation: number): ExternalService {
    const kind = `service:${this.run.name}`;
    const call = <R>(
      verb: 'get' | 'list' | 'create' | 'update' | 'delete',
      id: string | undefined,
      signal: AbortSignal | undefined,
      apply: (atMs: number) => R,
    ): Promise<R> =>
      this.run.cluster.call(
        incarnation,
        verb,
        { apiVersion: 'external/v1', kind, ...(id !== undefined ? { name: id } : {}) },
        signal,
        async () => {
          const [low, high] = this.o.latencyMs;
          await sleep(this.run.clock, low + Math.floor(this.latency() * (high - low + 1)), signal);
          const write = verb !== 'get' && verb !== 'list';
          const misbehave = this.run.misbehaving();
          const fails = misbehave && this.chance() < this.o.failureRate;
          const lost = misbehave && write && this.chance() < this.o.lostResponseRate;
          const stale = misbehave && !write && this.chance() < this.o.staleReadRate;
          const what = `${verb} ${kind}${id !== undefined ? ` ${id}` : ''}`;
          if (fails) {
            this.note(incarnation, `fails ${what} (503, not applied)`);
            throw new ExternalServiceError(this.run.name, 503, 'service unavailable');
          }
          const now = this.run.clock.monotonicNow();
          if (stale) this.note(incarnation, `answers ${what} from a replica ${this.o.staleReadLagMs} ms behind`);
          const result = apply(stale ? now - this.o.staleReadLagMs : now);
          if (lost) {
            this.note(incarnation, `loses the answer to ${what} (applied)`);
            throw new ExternalServiceError(this.run.name, 503, 'service unavailable');
          }
          return result;
        },
        verb === 'get' || verb === 'list' ? undefined : { verb },
        { error: (status) => new ExternalServiceError(this.run.name, status, 'simulated fault') },
      );
    return {
      name: this.run.name,
      create: (spec, opts = {}) =>
        call('create', opts.id, opts.signal, () => this.create(spec, opts)) as Promise<ExternalRecord<never>>,
      get: (id, opts = {}) => call('get', id, opts.signal, (atMs) => this.view(id, atMs)),
      list: (tags = {}, opts = {}) =>
        call('list', undefined, opts.signal, (atMs) =>
          [...this.versions.keys()]
            .map((id) => this.view(id, atMs))
            .filter(
              (r): r is ExternalRecord => r !== undefined && Object.entries(tags).every(([k, v]) => r.tags[k] === v),
            ),
        ),
      update: (id, spec, opts = {}) => call('update', id, opts.signal, () => this.update(id, spec)),
      delete: (id, opts = {}) => call('delete', id, opts.signal, () => this.delete(id)),
    } as ExternalService;
  }

  /** What the service holds now, and every record it ever created. */
  state(): ExternalServiceState {
    const now = this.run.clock.monotonicNow();
    return {
      records: [...this.versions.keys()].flatMap((id) => this.view(id, now) ?? []),
      created: this.created,
    };
  }

  private note(incarnation: number, what: string): void {
    this.run.trace(`${this.run.clock.monotonicNow()} #${incarnation} fault service ${this.run.name} ${what}`);
  }

  private current(id: string): Version | undefined {
    const now = this.run.clock.monotonicNow();
    const v = this.versions.get(id)?.at(-1);
    return v && !(v.goneAtMs !== undefined && v.goneAtMs <= now) ? v : undefined;
  }

  private push(v: Version): ExternalRecord {
    const list = this.versions.get(v.id) ?? [];
    list.push(v);
    this.versions.set(v.id, list);
    return this.view(v.id, v.fromMs)!;
  }

  private create(spec: unknown, opts: ExternalCreateOptions): ExternalRecord {
    const known = opts.idempotencyKey !== undefined ? this.keys.get(opts.idempotencyKey) : undefined;
    if (known !== undefined && this.current(known)) return this.view(known, this.run.clock.monotonicNow())!;
    const id = opts.id ?? `${this.run.name}-${this.nextId++}`;
    if (this.current(id)) throw new ExternalServiceError(this.run.name, 409, `${id} already exists`);
    const now = this.run.clock.monotonicNow();
    if (opts.idempotencyKey !== undefined) this.keys.set(opts.idempotencyKey, id);
    const record = this.push({
      fromMs: now,
      id,
      spec: structuredClone(spec),
      tags: { ...opts.tags },
      version: 1,
      createdAtMs: now,
      readyAtMs: now + this.o.workMs,
      ...(opts.idempotencyKey !== undefined ? { idempotencyKey: opts.idempotencyKey } : {}),
    });
    this.created.push(record);
    return record;
  }

  private update(id: string, spec: unknown): ExternalRecord {
    const v = this.current(id);
    if (!v || v.deletingFromMs !== undefined) throw new ExternalServiceError(this.run.name, 404, `${id} not found`);
    const now = this.run.clock.monotonicNow();
    return this.push({
      ...v,
      fromMs: now,
      spec: structuredClone(spec),
      version: v.version + 1,
      readyAtMs: now + this.o.workMs,
    });
  }

  private delete(id: string): void {
    const v = this.current(id);
    if (!v) throw new ExternalServiceError(this.run.name, 404, `${id} not found`);
    if (v.deletingFromMs !== undefined) return;
    const now = this.run.clock.monotonicNow();
    this.push({ ...v, fromMs: now, deletingFromMs: now, goneAtMs: now + this.o.deleteMs });
  }

  /** The record as it stood at `atMs` (a stale replica asks for the past). */
  private view(id: string, atMs: number): ExternalRecord | undefined {
    const list = this.versions.get(id);
    if (!list) return undefined;
    let v: Version | undefined;
    for (const x of list) if (x.fromMs <= atMs) v = x;
    if (!v || (v.goneAtMs !== undefined && v.goneAtMs <= atMs)) return undefined;
    return {
      id: v.id,
      spec: structuredClone(v.spec) as Record<string, unknown>,
      tags: { ...v.tags },
      state: v.deletingFromMs !== undefined ? 'deleting' : v.readyAtMs <= atMs ? 'ready' : 'pending',
      version: v.version,
      createdAtMs: v.createdAtMs,
      ...(v.idempotencyKey !== undefined ? { idempotencyKey: v.idempotencyKey } : {}),
    };
  }
}

function resolveOptions(name: string, o: ExternalServiceOptions): Required<ExternalServiceOptions> {
  const resolved = {
    latencyMs: o.latencyMs ?? DEFAULT_EXTERNAL_LATENCY_MS,
    workMs: o.workMs ?? DEFAULT_EXTERNAL_WORK_MS,
    deleteMs: o.deleteMs ?? DEFAULT_EXTERNAL_DELETE_MS,
    failureRate: o.failureRate ?? DEFAULT_EXTERNAL_FAILURE_RATE,
    lostResponseRate: o.lostResponseRate ?? DEFAULT_EXTERNAL_LOST_RESPONSE_RATE,
    staleReadRate: o.staleReadRate ?? DEFAULT_EXTERNAL_STALE_READ_RATE,
    staleReadLagMs: o.staleReadLagMs ?? DEFAULT_EXTERNAL_STALE_READ_LAG_MS,
  };
  const [low, high] = resolved.latencyMs;
  if (!(low >= 0 && high >= low))
    throw new InvalidOptionError(`services.${name}.latencyMs`, 'must be [min, max] with 0 <= min <= max');
  for (const key of ['workMs', 'deleteMs', 'staleReadLagMs'] as const)
    if (!(resolved[key] >= 0)) throw new InvalidOptionError(`services.${name}.${key}`, 'must be >= 0');
  for (const key of ['failureRate', 'lostResponseRate', 'staleReadRate'] as const)
    if (!(resolved[key] >= 0 && resolved[key] < 1))
      throw new InvalidOptionError(`services.${name}.${key}`, 'must be in [0, 1)');
  return resolved;
}

function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
