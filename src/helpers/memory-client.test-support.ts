/**
 * A deliberately small in-memory stand-in for `Client`, for the helpers' unit tests until the
 * shared fake client lands: objects keyed by kind/namespace/name, a resourceVersion per write,
 * merge patches with the resourceVersion precondition the API server applies (409 on mismatch),
 * generation bumped on non-status changes, `/status` writes touching only status. Every call is
 * recorded so tests can assert the exact writes (or their absence).
 */
import { ApiError } from '../client/api-error.js';
import type { Client } from '../client/client.js';
import { isPlainObject } from './merge-patch.js';
import type { ObjectLike } from './object-like.js';
import type { Clock } from '../core/clock.js';

export interface RecordedCall {
  readonly verb: 'get' | 'create' | 'update' | 'updateStatus' | 'patch' | 'patchStatus' | 'apply';
  readonly name?: string;
  readonly body?: unknown;
  readonly options?: unknown;
}

type Stored = ObjectLike & { status?: unknown; [key: string]: unknown };

export class MemoryClient {
  readonly calls: RecordedCall[] = [];
  private readonly objects = new Map<string, Stored>();
  private rv = 100;
  private uid = 0;
  /** Runs before each write; throw from it to inject an error. */
  beforeWrite: ((call: RecordedCall) => void) | undefined;

  get client(): Client {
    return this as unknown as Client;
  }

  writes(): RecordedCall[] {
    return this.calls.filter((c) => c.verb !== 'get');
  }

  seed<T extends ObjectLike>(obj: T): T {
    const stored = structuredClone(obj) as unknown as Stored;
    const meta = (stored.metadata ??= {});
    meta.resourceVersion = String(++this.rv);
    meta.uid ??= `uid-${++this.uid}`;
    meta.generation ??= 1;
    this.objects.set(this.key(stored.kind, meta.namespace, meta.name), stored);
    return structuredClone(stored) as unknown as T;
  }

  /** Changes the stored object behind the helper's back, as another writer would. */
  mutate(kind: string, namespace: string | undefined, name: string, fn: (obj: Stored) => void): void {
    const obj = this.objects.get(this.key(kind, namespace, name));
    if (!obj) throw new Error('no such object');
    fn(obj);
    obj.metadata!.resourceVersion = String(++this.rv);
  }

  peek(kind: string, namespace: string | undefined, name: string): Stored | undefined {
    const obj = this.objects.get(this.key(kind, namespace, name));
    return obj && structuredClone(obj);
  }

  async get(type: { kind: string }, name: string, opts: { namespace?: string } = {}): Promise<unknown> {
    this.calls.push({ verb: 'get', name, options: opts });
    return structuredClone(this.find(type.kind, opts.namespace, name));
  }

  async create(obj: Stored, opts: { namespace?: string } = {}): Promise<unknown> {
    this.record({ verb: 'create', name: obj.metadata?.name, body: structuredClone(obj), options: opts });
    const ns = obj.metadata?.namespace ?? opts.namespace;
    if (this.objects.has(this.key(obj.kind, ns, obj.metadata?.name))) throw new ApiError({ status: 409, reason: 'AlreadyExists', message: 'exists' });
    const { status: _dropped, ...rest } = structuredClone(obj);
    return this.seed({ ...rest, metadata: { ...rest.metadata, namespace: ns } });
  }

  async updateStatus(obj: Stored, opts: { namespace?: string } = {}): Promise<unknown> {
    this.record({ verb: 'updateStatus', name: obj.metadata?.name, body: structuredClone(obj), options: opts });
    const cur = this.find(obj.kind!, obj.metadata?.namespace ?? opts.namespace, obj.metadata!.name!);
    this.precondition(cur, obj.metadata?.resourceVersion);
    cur.status = structuredClone(obj.status);
    cur.metadata!.resourceVersion = String(++this.rv);
    return structuredClone(cur);
  }

  async patch(type: { kind: string }, name: string, patch: unknown, opts: { namespace?: string; type: string }): Promise<unknown> {
    this.record({ verb: 'patch', name, body: structuredClone(patch), options: opts });
    return this.applyPatch(type.kind, name, patch, opts, false);
  }

  async patchStatus(type: { kind: string }, name: string, patch: unknown, opts: { namespace?: string; type?: string } = {}): Promise<unknown> {
    this.record({ verb: 'patchStatus', name, body: structuredClone(patch), options: opts });
    return this.applyPatch(type.kind, name, patch, { ...opts, type: opts.type ?? 'merge' }, true);
  }

  async apply(obj: Stored, opts: unknown): Promise<unknown> {
    this.record({ verb: 'apply', name: obj.metadata?.name, body: structuredClone(obj), options: opts });
    const k = this.key(obj.kind, obj.metadata?.namespace, obj.metadata?.name);
    const cur = this.objects.get(k);
    if (!cur) return this.seed(obj);
    const next = mergePatch(cur, obj) as Stored;
    next.metadata!.resourceVersion = String(++this.rv);
    this.objects.set(k, next);
    return structuredClone(next);
  }

  private applyPatch(kind: string, name: string, patch: unknown, opts: { namespace?: string; type: string }, status: boolean): unknown {
    if (opts.type !== 'merge') throw new Error(`MemoryClient supports merge patches only, got ${opts.type}`);
    const cur = this.find(kind, opts.namespace, name);
    const p = patch as { metadata?: { resourceVersion?: string } };
    if (p.metadata?.resourceVersion !== undefined) this.precondition(cur, p.metadata.resourceVersion);
    const merged = mergePatch(cur, patch) as Stored;
    merged.metadata!.resourceVersion = cur.metadata!.resourceVersion;
    let next: Stored;
    if (status) next = { ...cur, status: merged.status };
    else {
      next = { ...merged, status: cur.status };
      const specChanged = JSON.stringify({ ...cur, metadata: undefined, status: undefined }) !== JSON.stringify({ ...next, metadata: undefined, status: undefined });
      if (specChanged) next.metadata = { ...next.metadata, generation: (cur.metadata!.generation ?? 1) + 1 };
    }
    next.metadata = { ...next.metadata, resourceVersion: String(++this.rv) };
    const key = this.key(kind, opts.namespace, name);
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers?.length)) this.objects.delete(key);
    else this.objects.set(key, next);
    return structuredClone(next);
  }

  private precondition(cur: Stored, rv: string | undefined): void {
    if (rv !== undefined && rv !== cur.metadata?.resourceVersion) {
      throw new ApiError({ status: 409, reason: 'Conflict', message: 'the object has been modified; please apply your changes to the latest version and try again' });
    }
  }

  private record(call: RecordedCall): void {
    this.calls.push(call);
    this.beforeWrite?.(call);
  }

  private find(kind: string | undefined, namespace: string | undefined, name: string): Stored {
    const obj = this.objects.get(this.key(kind, namespace, name));
    if (!obj) throw new ApiError({ status: 404, reason: 'NotFound', message: `${kind} ${name} not found` });
    return obj;
  }

  private key(kind: string | undefined, namespace: string | undefined, name: string | undefined): string {
    return `${kind}/${namespace ?? ''}/${name}`;
  }
}

/** RFC 7386. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** A clock whose timers fire on the next turn of the event loop (ref'd, unlike realClock's), for retry paths in unit tests. */
export const immediateClock: Clock = {
  now: () => Date.UTC(2026, 0, 1),
  monotonicNow: () => 0,
  setTimer(_ms, fn) {
    const t = setImmediate(fn);
    return { cancel: () => clearImmediate(t) };
  },
};
