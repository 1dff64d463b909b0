/**
 * An in-memory Lease API for the elector's unit tests: resourceVersion preconditions (409 Conflict,
 * 409 AlreadyExists, 404) as the API server enforces them, plus faults on the fake clock — latency
 * before and after a request is handled, errors, requests that hang, answers lost after the write was
 * applied, a paused server — and a log of every applied write. A caller that gives up (its signal
 * aborts) stops waiting, but a request already sent may still be applied, as with a real server.
 */
import type { Clock } from '../../core/clock.js';
import { AbortedError } from '../../core/errors.js';
import { ApiError } from '../../client/api-error.js';
import type { LeaseClient } from '../leader-elector-options.js';
import { holderOf, type Lease } from '../lease-record.js';

export type FakeLeaseVerb = 'get' | 'create' | 'update';

export interface FakeLeaseRequest {
  /** Which client sent it (`api.client(caller)`). */
  readonly caller: string;
  readonly verb: FakeLeaseVerb;
  readonly namespace: string;
  readonly name: string;
  /** The object sent (create/update). */
  readonly body: Lease | undefined;
}

export interface FakeLeaseFault {
  /** Time before the server handles the request. */
  readonly requestDelayMs?: number;
  /** Time between handling it and the answer arriving. */
  readonly responseDelayMs?: number;
  /** Answer with this instead of handling the request. */
  readonly error?: Error;
  /** Never handle or answer it (only the caller's signal ends the wait). */
  readonly hang?: boolean;
  /** Handle it, then lose the answer (the caller sees a network error). */
  readonly dropResponse?: boolean;
  /** Runs right before the server handles the request (to slip in a concurrent write). */
  readonly beforeHandle?: () => void;
}

/** One write the server applied. */
export interface FakeLeaseWrite {
  readonly atMs: number;
  readonly caller: string;
  readonly verb: 'create' | 'update' | 'put';
  readonly holder: string;
  readonly resourceVersion: string;
  readonly lease: Lease;
}

export interface FakeLeaseApiOptions {
  readonly clock: Clock;
  /** Decides the fault (if any) for each request. */
  readonly faults?: (request: FakeLeaseRequest) => FakeLeaseFault | undefined;
}

export class FakeLeaseApi {
  /** Every write applied, in order. */
  readonly writes: FakeLeaseWrite[] = [];
  /** Requests received per caller and verb, e.g. `requests.get('a:update')`. */
  readonly requests = new Map<string, number>();
  /** Requests whose caller gave up (its signal aborted) before the answer came. */
  abortedRequests = 0;
  faults: ((request: FakeLeaseRequest) => FakeLeaseFault | undefined) | undefined;
  private readonly clock: Clock;
  private readonly store = new Map<string, Lease>();
  private revision = 0;
  private pausedUntil: Promise<void> | undefined;
  private resumeServer: (() => void) | undefined;

  constructor(options: FakeLeaseApiOptions) {
    this.clock = options.clock;
    this.faults = options.faults;
  }

  /** A client whose requests are attributed to `caller`. */
  client(caller = 'client'): LeaseClient {
    const client = {
      get: <T>(_type: unknown, name: string, opts: { namespace?: string; signal?: AbortSignal } = {}): Promise<T> =>
        this.call(caller, 'get', opts.namespace ?? '', name, undefined, opts.signal, () =>
          this.handleGet(opts.namespace ?? '', name),
        ) as Promise<T>,
      create: <T>(obj: T, opts: { signal?: AbortSignal } = {}): Promise<T> => {
        const lease = obj as Lease;
        return this.call(
          caller,
          'create',
          lease.metadata?.namespace ?? '',
          lease.metadata?.name ?? '',
          lease,
          opts.signal,
          () => this.handleCreate(caller, lease),
        ) as Promise<T>;
      },
      update: <T>(obj: T, opts: { signal?: AbortSignal } = {}): Promise<T> => {
        const lease = obj as Lease;
        return this.call(
          caller,
          'update',
          lease.metadata?.namespace ?? '',
          lease.metadata?.name ?? '',
          lease,
          opts.signal,
          () => this.handleUpdate(caller, lease),
        ) as Promise<T>;
      },
    };
    return client as unknown as LeaseClient;
  }

  /** The stored Lease (a copy), or undefined. */
  read(namespace: string, name: string): Lease | undefined {
    const lease = this.store.get(`${namespace}/${name}`);
    return lease ? structuredClone(lease) : undefined;
  }

  /** Writes `lease` unconditionally, as another actor would; returns what was stored. */
  put(lease: Lease, caller = 'someone-else'): Lease {
    return this.store1(caller, 'put', lease);
  }

  /** Deletes the Lease, as another actor would. */
  remove(namespace: string, name: string): void {
    this.store.delete(`${namespace}/${name}`);
  }

  /** Freezes the server: requests (and answers) wait until `resume()`. */
  pause(): void {
    if (this.pausedUntil) return;
    this.pausedUntil = new Promise<void>((resolve) => (this.resumeServer = resolve));
  }

  resume(): void {
    this.resumeServer?.();
    this.pausedUntil = undefined;
    this.resumeServer = undefined;
  }

  private call(
    caller: string,
    verb: FakeLeaseVerb,
    namespace: string,
    name: string,
    body: Lease | undefined,
    signal: AbortSignal | undefined,
    handle: () => Lease,
  ): Promise<Lease> {
    if (signal?.aborted) return Promise.reject(new AbortedError('request aborted', { cause: signal.reason }));
    const key = `${caller}:${verb}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const fault =
      this.faults?.({ caller, verb, namespace, name, body: body ? structuredClone(body) : undefined }) ?? {};
    const served = (async (): Promise<Lease> => {
      if (fault.requestDelayMs) await this.delay(fault.requestDelayMs);
      await this.pausedUntil;
      if (fault.hang) return new Promise<Lease>(() => {});
      if (fault.error) throw fault.error;
      fault.beforeHandle?.();
      const result = handle();
      if (fault.responseDelayMs) await this.delay(fault.responseDelayMs);
      await this.pausedUntil;
      if (fault.dropResponse) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      return result;
    })();
    // The caller may have stopped listening; the server side must not raise an unhandled rejection.
    served.catch(() => {});
    return untilAborted(served, signal, () => this.abortedRequests++);
  }

  private handleGet(namespace: string, name: string): Lease {
    const lease = this.store.get(`${namespace}/${name}`);
    if (!lease) throw notFound(name);
    return structuredClone(lease);
  }

  private handleCreate(caller: string, lease: Lease): Lease {
    const key = `${lease.metadata?.namespace}/${lease.metadata?.name}`;
    if (this.store.has(key)) {
      throw new ApiError({
        status: 409,
        reason: 'AlreadyExists',
        message: `leases.coordination.k8s.io "${lease.metadata?.name}" already exists`,
      });
    }
    if (lease.metadata?.resourceVersion) throw invalid('resourceVersion should not be set on objects to be created');
    return this.store1(caller, 'create', lease);
  }

  private handleUpdate(caller: string, lease: Lease): Lease {
    const key = `${lease.metadata?.namespace}/${lease.metadata?.name}`;
    const current = this.store.get(key);
    if (!current) throw notFound(lease.metadata?.name ?? '');
    // Built-in kinds would accept an update without resourceVersion as an overwrite; the elector must
    // never send one, so here it is an error a test will see.
    if (!lease.metadata?.resourceVersion)
      throw invalid('metadata.resourceVersion: the elector must send the resourceVersion it read');
    if (lease.metadata.resourceVersion !== current.metadata?.resourceVersion) {
      throw new ApiError({
        status: 409,
        reason: 'Conflict',
        message: `Operation cannot be fulfilled on leases.coordination.k8s.io "${lease.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      });
    }
    return this.store1(caller, 'update', lease);
  }

  private store1(caller: string, verb: FakeLeaseWrite['verb'], lease: Lease): Lease {
    const seconds = lease.spec?.leaseDurationSeconds;
    if (seconds !== undefined && !(Number.isInteger(seconds) && seconds > 0))
      throw invalid('spec.leaseDurationSeconds must be a positive integer');
    const stored = structuredClone(lease);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.revision) };
    this.store.set(`${stored.metadata.namespace}/${stored.metadata.name}`, stored);
    this.writes.push({
      atMs: this.clock.monotonicNow(),
      caller,
      verb,
      holder: holderOf(stored),
      resourceVersion: stored.metadata.resourceVersion!,
      lease: structuredClone(stored),
    });
    return structuredClone(stored);
  }

  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimer(ms, resolve));
  }
}

function notFound(name: string): ApiError {
  return new ApiError({ status: 404, reason: 'NotFound', message: `leases.coordination.k8s.io "${name}" not found` });
}

function invalid(message: string): ApiError {
  return new ApiError({ status: 422, reason: 'Invalid', message });
}

function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined, onAborted: () => void): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      onAborted();
      reject(new AbortedError('request aborted', { cause: signal.reason }));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
