/**
 * An approximation of server-side apply's field ownership. Every write records which leaf fields its
 * manager set (`metadata.managedFields`, FieldsV1 without the `.`/`k:`/`v:` refinements): an update
 * takes ownership of the fields it changed from everyone; an apply conflicts (409) when it sets a
 * field another manager owns to a different value, unless forced, and removes fields it applied
 * before and no longer applies when nobody else owns them. Lists are atomic (the server merges
 * lists with merge keys item by item), and managedFields sent by a client are ignored.
 */
import { clone, deepEqual, isObject, type JsonObject } from './json-value.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
}

/** Which part of an object a write may change: the main resource (with or without status) or `/status`. */
export type WriteRegion = 'all' | 'main' | 'status';

export interface FieldConflict {
  readonly manager: string;
  readonly operation: string;
  readonly apiVersion: string;
  readonly path: string;
}

/** Metadata fields the server owns; never tracked, never applied. */
const SYSTEM_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
  'generateName',
]);

type Leaves = Map<string, unknown>;

/** Leaf fields of `obj` inside `region`, keyed by their path (a JSON array of keys). */
export function leaves(obj: unknown, region: WriteRegion): Leaves {
  const out: Leaves = new Map();
  if (!isObject(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || v === undefined) continue;
    if (region === 'status' && k !== 'status') continue;
    if (region === 'main' && k === 'status') continue;
    if (k === 'metadata' && isObject(v)) {
      for (const [mk, mv] of Object.entries(v))
        if (!SYSTEM_METADATA.has(mk) && mv !== undefined) walk(mv, `["metadata",${JSON.stringify(mk)}`, out);
      continue;
    }
    walk(v, `[${JSON.stringify(k)}`, out);
  }
  return out;
}

/**
 * `prefix` is the path's JSON without its closing bracket (`["spec","template"`): a child's is the
 * parent's plus one key, and a leaf's key is `JSON.stringify(path)` without building the arrays.
 */
function walk(v: unknown, prefix: string, out: Leaves): void {
  if (isObject(v) && hasOwnMember(v)) {
    for (const k in v) {
      if (!hasOwn.call(v, k)) continue;
      const child = v[k];
      if (child !== undefined) walk(child, `${prefix},${JSON.stringify(k)}`, out);
    }
  } else out.set(`${prefix}]`, v);
}

const hasOwn = Object.prototype.hasOwnProperty;

function hasOwnMember(v: JsonObject): boolean {
  for (const k in v) if (hasOwn.call(v, k)) return true;
  return false;
}

/** Paths' keys by their JSON (bounded): the same few field paths come back on every write. */
const parsedPaths = new Map<string, readonly string[]>();
const MAX_PARSED_PATHS = 10_000;

function keysOf(path: string): readonly string[] {
  let keys = parsedPaths.get(path);
  if (!keys) {
    if (parsedPaths.size >= MAX_PARSED_PATHS) parsedPaths.clear();
    parsedPaths.set(path, (keys = JSON.parse(path) as string[]));
  }
  return keys;
}

function toFieldsV1(paths: Iterable<string>): JsonObject {
  const root: JsonObject = {};
  for (const p of paths) {
    let node = root;
    for (const key of keysOf(p)) {
      const f = `f:${key}`;
      node = (node[f] ??= {}) as JsonObject;
    }
  }
  return root;
}

function fromFieldsV1(tree: unknown, prefix: string[] = [], out = new Set<string>()): Set<string> {
  if (!isObject(tree)) return out;
  const keys = Object.keys(tree).filter((k) => k.startsWith('f:'));
  if (keys.length === 0 && prefix.length > 0) out.add(JSON.stringify(prefix));
  for (const k of keys) fromFieldsV1(tree[k], [...prefix, k.slice(2)], out);
  return out;
}

function displayPath(p: string): string {
  return (JSON.parse(p) as string[]).map((k) => `.${k}`).join('');
}

interface Owner {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  paths: Set<string>;
  /** The stored entry's fieldsV1 and its paths, when decoded from one: reused while the paths are the same. */
  readonly stored?: { readonly fieldsV1: JsonObject; readonly paths: ReadonlySet<string> };
}

/*
 * Stored objects never change (object-store.ts), so what is derived from one is kept with it: the
 * paths of each managedFields entry and the leaves of each region. A write then derives only what
 * it changed: the leaves of the new object (kept for the next write) and the fieldsV1 of the owners
 * whose fields moved. What a write replaces is dropped (a miss only recomputes it).
 */
const storedPaths = new WeakMap<JsonObject, ReadonlySet<string>>();
const storedLeaves = new WeakMap<JsonObject, Partial<Record<WriteRegion, Leaves>>>();

/** `leaves` of a stored object (or of one about to be stored: `remember`), computed once per region. */
function leavesOfStored(obj: JsonObject | undefined, region: WriteRegion, remember?: Leaves): Leaves {
  if (!obj) return remember ?? leaves(obj, region);
  let byRegion = storedLeaves.get(obj);
  if (!byRegion) storedLeaves.set(obj, (byRegion = {}));
  return (byRegion[region] ??= remember ?? leaves(obj, region));
}

function decode(entries: unknown): Owner[] {
  if (!Array.isArray(entries)) return [];
  return entries.filter(isObject).map((e) => {
    const fieldsV1 = isObject(e.fieldsV1) ? e.fieldsV1 : undefined;
    let paths = fieldsV1 && storedPaths.get(fieldsV1);
    if (fieldsV1 && !paths) storedPaths.set(fieldsV1, (paths = fromFieldsV1(fieldsV1)));
    return {
      manager: String(e.manager),
      operation: e.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: String(e.apiVersion),
      time: String(e.time),
      paths: new Set(paths),
      ...(fieldsV1 && paths ? { stored: { fieldsV1, paths } } : {}),
    };
  });
}

function encode(owners: Owner[]): ManagedFieldsEntry[] | undefined {
  const kept = owners.filter((o) => o.paths.size > 0);
  if (kept.length === 0) return undefined;
  return kept.map((o) => ({
    manager: o.manager,
    operation: o.operation,
    apiVersion: o.apiVersion,
    time: o.time,
    fieldsType: 'FieldsV1',
    // The stored tree is what toFieldsV1 made of these very paths: shared, as stored objects are.
    fieldsV1: o.stored && sameSet(o.paths, o.stored.paths) ? o.stored.fieldsV1 : replacedFieldsV1(o),
  }));
}

/** A new tree for the owner's paths; the one it replaces is not decoded again (its object is being replaced). */
function replacedFieldsV1(o: Owner): JsonObject {
  if (o.stored) storedPaths.delete(o.stored.fieldsV1);
  return toFieldsV1(o.paths);
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

function ownerFor(
  owners: Owner[],
  manager: string,
  operation: 'Apply' | 'Update',
  apiVersion: string,
  time: string,
): Owner {
  let o = owners.find((x) => x.manager === manager && x.operation === operation);
  if (!o) owners.push((o = { manager, operation, apiVersion, time, paths: new Set() }));
  return o;
}

/** The managedFields after an update-style write (create, update, patch) by `manager`. */
export function managedFieldsAfterUpdate(
  before: JsonObject | undefined,
  after: JsonObject,
  manager: string,
  apiVersion: string,
  now: string,
  region: WriteRegion,
): ManagedFieldsEntry[] | undefined {
  const owners = decode((before?.metadata as JsonObject | undefined)?.managedFields);
  const old = leavesOfStored(before, region);
  // `after` is what the store keeps if the write goes through: its leaves serve the next write, and
  // those of `before` no longer do (kept, every version in the store's history would hold its own).
  const next = leavesOfStored(after, region, leaves(after, region));
  if (before) storedLeaves.delete(before);
  const changed = [...next.keys()].filter((k) => !old.has(k) || !deepEqual(old.get(k), next.get(k)));
  const removed = [...old.keys()].filter((k) => !next.has(k));
  for (const o of owners) for (const p of removed) o.paths.delete(p);
  if (changed.length > 0) {
    for (const o of owners)
      if (!(o.manager === manager && o.operation === 'Update')) for (const p of changed) o.paths.delete(p);
    const mine = ownerFor(owners, manager, 'Update', apiVersion, now);
    for (const p of changed) mine.paths.add(p);
    mine.time = now;
  }
  return encode(owners);
}

export type ApplyResult =
  | { readonly ok: true; readonly object: JsonObject; readonly managedFields: ManagedFieldsEntry[] | undefined }
  | { readonly ok: false; readonly conflicts: FieldConflict[] };

/** Server-side apply of `config` by `manager` onto `existing` (undefined: the apply creates it). */
export function applyConfig(
  existing: JsonObject | undefined,
  config: JsonObject,
  manager: string,
  apiVersion: string,
  now: string,
  region: WriteRegion,
  force: boolean,
): ApplyResult {
  const owners = decode((existing?.metadata as JsonObject | undefined)?.managedFields);
  const current = leavesOfStored(existing, region);
  const applied = leaves(config, region);
  const conflicts: FieldConflict[] = [];
  for (const o of owners) {
    if (o.manager === manager && o.operation === 'Apply') continue;
    for (const p of o.paths) {
      if (applied.has(p) && current.has(p) && !deepEqual(current.get(p), applied.get(p))) {
        conflicts.push({ manager: o.manager, operation: o.operation, apiVersion: o.apiVersion, path: displayPath(p) });
        if (force) o.paths.delete(p);
      }
    }
  }
  if (conflicts.length > 0 && !force) return { ok: false, conflicts };
  const mine = ownerFor(owners, manager, 'Apply', apiVersion, now);
  const dropped = [...mine.paths].filter((p) => !applied.has(p) && !owners.some((o) => o !== mine && o.paths.has(p)));
  let object = mergeRegion(existing ?? {}, config, region);
  for (const p of dropped) object = removePath(object, JSON.parse(p) as string[]);
  if (!deepEqual([...mine.paths].sort(), [...applied.keys()].sort())) mine.time = now;
  mine.paths = new Set(applied.keys());
  return { ok: true, object, managedFields: encode(owners) };
}

/** Deep merge of `config` into `base` (objects merged, lists and scalars replaced) within `region`. */
function mergeRegion(base: JsonObject, config: JsonObject, region: WriteRegion): JsonObject {
  const out = clone(base);
  for (const [k, v] of Object.entries(config)) {
    if (k === 'apiVersion' || k === 'kind' || v === undefined) continue;
    if (region === 'status' && k !== 'status') continue;
    if (region === 'main' && k === 'status') continue;
    if (k === 'metadata' && isObject(v)) {
      const meta = (out.metadata ??= {}) as JsonObject;
      for (const [mk, mv] of Object.entries(v))
        if (!SYSTEM_METADATA.has(mk) && mv !== undefined) meta[mk] = deepMerge(meta[mk], mv);
      continue;
    }
    out[k] = deepMerge(out[k], v);
  }
  return out;
}

function deepMerge(a: unknown, b: unknown): unknown {
  if (isObject(a) && isObject(b)) {
    const out = clone(a);
    for (const [k, v] of Object.entries(b)) if (v !== undefined) out[k] = deepMerge(out[k], v);
    return out;
  }
  return clone(b);
}

function removePath(obj: JsonObject, path: string[]): JsonObject {
  let node: unknown = obj;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node)) return obj;
    node = node[key];
  }
  if (isObject(node)) delete node[path[path.length - 1]!];
  return obj;
}
