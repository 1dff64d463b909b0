/**
 * The fake's etcd: objects per kind, one revision counter for the whole store (so resourceVersions
 * are unique and increasing across kinds, as etcd's revision), and a bounded history of changes
 * from which watches resume and consistent list snapshots (continue tokens, `Exact` reads) are
 * rebuilt. History older than the window is gone: asking for it is the caller's 410.
 */
import type { JsonObject } from './json-value.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change {
  readonly revision: number;
  /** Which kind's keyspace (see `kindId`). */
  readonly kindId: string;
  /** `namespace/name` or `name`. */
  readonly key: string;
  readonly type: ChangeType;
  /** The object after the change; for DELETED, its last state carrying the delete's revision. */
  readonly object: JsonObject;
  /** The object before the change (undefined for ADDED). */
  readonly prev: JsonObject | undefined;
}

/** Thrown when a revision older than the retained history is asked for. */
export class RevisionCompactedError extends Error {
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`revision ${requested} is older than the retained history (${oldest})`);
  }
}

export class ObjectStore {
  private revision: number;
  private readonly objects = new Map<string, Map<string, JsonObject>>();
  private history: Change[] = [];
  /** Every change after this revision is in `history`. */
  private compactedThrough: number;
  private readonly listeners = new Set<(change: Change) => void>();

  constructor(
    private readonly historyLimit: number,
    startRevision: number,
  ) {
    this.revision = startRevision;
    this.compactedThrough = startRevision;
  }

  get currentRevision(): number {
    return this.revision;
  }

  /** The oldest revision a watch or snapshot may start from. */
  get oldestRevision(): number {
    return this.compactedThrough;
  }

  get(kindId: string, key: string): JsonObject | undefined {
    return this.objects.get(kindId)?.get(key);
  }

  /** Current objects of a kind, in key order (etcd's order). */
  list(kindId: string): [string, JsonObject][] {
    return sortByKey([...(this.objects.get(kindId) ?? new Map<string, JsonObject>()).entries()]);
  }

  /** Every current object of every kind, as [kindId, key, object]. */
  entries(): [string, string, JsonObject][] {
    return [...this.objects.entries()].flatMap(([id, byKey]) =>
      [...byKey.entries()].map(([key, obj]): [string, string, JsonObject] => [id, key, obj]),
    );
  }

  /** The objects of a kind as they were at `revision`, in key order. */
  snapshot(kindId: string, revision: number): [string, JsonObject][] {
    if (revision >= this.revision) return this.list(kindId);
    if (revision < this.compactedThrough) throw new RevisionCompactedError(revision, this.compactedThrough);
    const state = new Map(this.objects.get(kindId) ?? []);
    for (let i = this.history.length - 1; i >= 0; i--) {
      const c = this.history[i]!;
      if (c.revision <= revision) break;
      if (c.kindId !== kindId) continue;
      if (c.prev) state.set(c.key, c.prev);
      else state.delete(c.key);
    }
    return sortByKey([...state.entries()]);
  }

  /** Changes after `revision`, oldest first. */
  changesAfter(revision: number): Change[] {
    if (revision < this.compactedThrough) throw new RevisionCompactedError(revision, this.compactedThrough);
    return this.history.filter((c) => c.revision > revision);
  }

  /**
   * Writes one change at the next revision and tells the listeners; returns the stored object,
   * which carries the new revision as its resourceVersion. For ADDED and MODIFIED the store takes
   * `object` itself (the caller built it and lets go of it); for DELETED, `object` is the last
   * stored state, and the change carries a copy of it with the delete's revision, sharing the rest.
   * Stored objects are never changed afterwards (the history refers to them): whatever leaves the
   * store is a copy (`clone`).
   */
  commit(kindId: string, key: string, type: ChangeType, object: JsonObject): JsonObject {
    const revision = ++this.revision;
    const stored = type === 'DELETED' ? { ...object, metadata: { ...(object.metadata as JsonObject) } } : object;
    (stored.metadata as JsonObject).resourceVersion = String(revision);
    let byKey = this.objects.get(kindId);
    if (!byKey) this.objects.set(kindId, (byKey = new Map()));
    const prev = byKey.get(key);
    if (type === 'DELETED') byKey.delete(key);
    else byKey.set(key, stored);
    const change: Change = { revision, kindId, key, type, object: stored, prev };
    this.history.push(change);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedThrough = dropped[dropped.length - 1]!.revision;
    }
    for (const l of this.listeners) l(change);
    return stored;
  }

  /** Forgets all history, as an etcd compaction at the current revision. */
  compact(): void {
    this.history = [];
    this.compactedThrough = this.revision;
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function sortByKey(entries: [string, JsonObject][]): [string, JsonObject][] {
  return entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
