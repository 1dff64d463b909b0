/**
 * Discovery and REST mapping: apiVersion + kind → plural resource name, scope and subresources.
 * One group-version is fetched at a time (`/api/v1`, `/apis/<group>/<version>`) and cached; a kind
 * that is not in the cache triggers a fresh fetch of its group-version, so a CRD installed after
 * the client started becomes usable without a restart.
 */
import { OperatorRuntimeError } from '../core/errors.js';
import { parseApiVersion } from '../core/object-key.js';
import { isNotFound } from './api-error.js';
import type { TransportRequest, TransportResponse } from './transport.js';
import { untilAborted } from './until-aborted.js';

/** A kind addressed by apiVersion + kind, e.g. `{ apiVersion: 'v1', kind: 'ConfigMap' }`. */
export interface ResourceType {
  readonly apiVersion: string;
  readonly kind: string;
}

export interface ResourceMapping {
  readonly group: string;
  readonly version: string;
  readonly apiVersion: string;
  readonly kind: string;
  /** Plural resource name used in URLs, e.g. `configmaps`. */
  readonly resource: string;
  readonly namespaced: boolean;
  /** Subresources the server offers for this resource, e.g. `status`, `scale`. */
  readonly subresources: ReadonlySet<string>;
  readonly verbs: readonly string[];
}

/** The server does not serve this apiVersion/kind (or not yet: a CRD may still be establishing). */
export class NoKindMatchError extends OperatorRuntimeError {
  declare readonly code: 'ERR_NO_KIND_MATCH';
  readonly apiVersion: string;
  readonly kind: string;
  constructor(apiVersion: string, kind: string, why: string) {
    super('ERR_NO_KIND_MATCH', `no resource for kind ${kind} in ${apiVersion}: ${why}`);
    this.apiVersion = apiVersion;
    this.kind = kind;
  }
}

export function isNoKindMatch(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ERR_NO_KIND_MATCH';
}

interface ApiResource {
  name: string;
  namespaced: boolean;
  kind: string;
  verbs?: string[];
}

interface ApiResourceList {
  groupVersion?: string;
  resources?: ApiResource[];
}

/** What discovery needs from the transport (an interface, so tests can fake it). */
export interface DiscoveryTransport {
  request<T>(req: TransportRequest): Promise<TransportResponse<T>>;
}

/** The `RestMapper` (contracts.ts) backed by the server's discovery documents. */
export class DiscoveryRestMapper {
  private readonly byKind = new Map<string, ResourceMapping>();
  private readonly fetching = new Map<string, Promise<void>>();
  /** Number of discovery fetches made (for tests and diagnostics). */
  fetches = 0;

  constructor(private readonly transport: DiscoveryTransport) {}

  /** The mapping if it is already cached (no I/O). */
  cached(type: ResourceType): ResourceMapping | undefined {
    return this.byKind.get(kindKey(type.apiVersion, type.kind));
  }

  /** Maps a kind, fetching its group-version on a cache miss. Throws NoKindMatchError if unknown. */
  async mapping(type: ResourceType, signal?: AbortSignal): Promise<ResourceMapping> {
    const hit = this.cached(type);
    if (hit) return hit;
    try {
      await this.refresh(type.apiVersion, signal);
    } catch (err) {
      // Name the kind that was asked for (a CRD-only server has no v1 at all: "ConfigMap in v1").
      if (err instanceof NoKindMatchError && err.kind === '*')
        throw new NoKindMatchError(type.apiVersion, type.kind, 'the server does not serve this group-version');
      throw err;
    }
    const found = this.cached(type);
    if (found) return found;
    throw new NoKindMatchError(type.apiVersion, type.kind, 'the server does not list this kind');
  }

  /** Drops cached mappings of one group-version (or all): the next lookup fetches again. */
  invalidate(apiVersion?: string): void {
    for (const [key, m] of this.byKind)
      if (apiVersion === undefined || m.apiVersion === apiVersion) this.byKind.delete(key);
  }

  /**
   * Fetches one group-version, sharing a fetch already in flight. The shared fetch does not take any
   * one caller's signal (one caller giving up must not fail the others); each caller stops waiting
   * when its own signal aborts.
   */
  refresh(apiVersion: string, signal?: AbortSignal): Promise<void> {
    let p = this.fetching.get(apiVersion);
    if (!p) {
      p = this.fetch(apiVersion).finally(() => this.fetching.delete(apiVersion));
      this.fetching.set(apiVersion, p);
    }
    return signal ? untilAborted(p, signal, 'discovery') : p;
  }

  private async fetch(apiVersion: string): Promise<void> {
    const { group, version } = parseApiVersion(apiVersion);
    const path = group
      ? `/apis/${encodeURIComponent(group)}/${encodeURIComponent(version)}`
      : `/api/${encodeURIComponent(version)}`;
    this.fetches++;
    let list: ApiResourceList;
    try {
      list = (await this.transport.request<ApiResourceList>({ method: 'GET', path })).body;
    } catch (err) {
      if (isNotFound(err)) {
        this.invalidate(apiVersion);
        throw new NoKindMatchError(apiVersion, '*', 'the server does not serve this group-version');
      }
      throw err;
    }
    const resources = list?.resources ?? [];
    const subresources = new Map<string, Set<string>>();
    for (const r of resources) {
      const slash = r.name.indexOf('/');
      if (slash < 0) continue;
      const parent = r.name.slice(0, slash);
      let set = subresources.get(parent);
      if (!set) subresources.set(parent, (set = new Set()));
      set.add(r.name.slice(slash + 1));
    }
    this.invalidate(apiVersion);
    for (const r of resources) {
      if (r.name.includes('/')) continue;
      const key = kindKey(apiVersion, r.kind);
      // Some kinds are served under two names (e.g. legacy aliases); the first listed is canonical.
      if (this.byKind.has(key)) continue;
      this.byKind.set(key, {
        group,
        version,
        apiVersion,
        kind: r.kind,
        resource: r.name,
        namespaced: r.namespaced,
        subresources: subresources.get(r.name) ?? new Set(),
        verbs: r.verbs ?? [],
      });
    }
  }
}

function kindKey(apiVersion: string, kind: string): string {
  return `${apiVersion}\u0000${kind}`;
}
