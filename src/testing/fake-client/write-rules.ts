/**
 * What the API server's registry strategies do to an object on create and update, for the kinds the
 * fake serves: system metadata it owns (uid, creationTimestamp, generation, deletionTimestamp), the
 * status-subresource split (a main-resource write keeps the stored status, a status write keeps
 * everything but status), generation bumps on spec changes only, the finalizer rule while deleting,
 * name validation, and CRD schema pruning and validation. Defaulting of built-in kinds is not done.
 */
import { invalid, type Cause, type RequestWhere } from './api-errors.js';
import { clone, deepEqual, isObject, type JsonObject } from './json-value.js';
import type { KindInfo } from './kind-registry.js';
import type { ManagedFieldsEntry, WriteRegion } from './managed-fields.js';
import { dedupOwnerReferences, metadataCauses, nameCauses } from './metadata-validation.js';
import { prune, validate } from './schema-validation.js';

export function metaOf(obj: JsonObject): JsonObject {
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as JsonObject;
}

/** The region of an object a write to `subresource` may change, for this kind. */
export function regionFor(kind: KindInfo, subresource: string | undefined): WriteRegion {
  if (subresource === 'status') return 'status';
  return kind.statusSubresource ? 'main' : 'all';
}

/** Prunes unknown fields and validates against the kind's schema (custom resources only). */
export function checkSchema(kind: KindInfo, obj: JsonObject, where: RequestWhere): void {
  if (!kind.schema) return;
  prune(obj, kind.schema);
  const causes = validate(obj, kind.schema);
  if (causes.length > 0) throw invalid(kind, String(metaOf(obj).name ?? ''), causes, where);
}

export interface CreateContext {
  readonly kind: KindInfo;
  readonly where: RequestWhere;
  readonly now: string;
  readonly uid: string;
}

/**
 * The object the server stores for a create (before resourceVersion and managedFields), made from
 * `body` itself: the caller hands over its own copy of the request's object.
 */
export function prepareCreate(body: JsonObject, ctx: CreateContext): JsonObject {
  const { kind } = ctx;
  const obj = body;
  obj.apiVersion = kind.apiVersion;
  obj.kind = kind.kind;
  const meta = metaOf(obj);
  const name = String(meta.name ?? '');
  if (!name)
    throw invalid(
      kind,
      '',
      [
        {
          reason: 'FieldValueRequired',
          field: 'metadata.name',
          message: 'Required value: name or generateName is required',
        },
      ],
      ctx.where,
    );
  dedupOwnerReferences(meta);
  const causes = [...nameCauses(kind, name), ...metadataCauses(kind, meta)];
  if (causes.length > 0) throw invalid(kind, name, causes, ctx.where);
  if (!kind.namespaced) delete meta.namespace;
  meta.uid = ctx.uid;
  meta.creationTimestamp = ctx.now;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.resourceVersion;
  delete meta.managedFields;
  delete meta.selfLink;
  if (kind.generation) meta.generation = 1;
  else delete meta.generation;
  if (kind.statusSubresource) {
    // Create ignores status: custom resources drop it, built-ins start from an empty one.
    if (kind.builtIn) obj.status = {};
    else delete obj.status;
  }
  if (kind.kind === 'Namespace') {
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
  }
  if (kind.kind === 'CustomResourceDefinition') {
    obj.status = {
      conditions: [
        {
          type: 'NamesAccepted',
          status: 'True',
          lastTransitionTime: ctx.now,
          reason: 'NoConflicts',
          message: 'no conflicts found',
        },
        {
          type: 'Established',
          status: 'True',
          lastTransitionTime: ctx.now,
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
      ],
    };
  }
  normalizeSecret(kind, obj);
  checkSchema(kind, obj, ctx.where);
  return obj;
}

/** A Secret's `stringData` is write-only: the server folds it into `data` (base64) and defaults `type`. */
function normalizeSecret(kind: KindInfo, obj: JsonObject): void {
  if (!kind.builtIn || kind.kind !== 'Secret') return;
  if (isObject(obj.stringData)) {
    const data = isObject(obj.data) ? obj.data : {};
    for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
  obj.type ??= 'Opaque';
}

export interface UpdateContext {
  readonly kind: KindInfo;
  readonly where: RequestWhere;
  readonly region: WriteRegion;
}

/**
 * The object the server stores for an update of `existing` with `body` (before resourceVersion and
 * managedFields), or throws the server's 422.
 */
export function prepareUpdate(existing: JsonObject, body: JsonObject, ctx: UpdateContext): JsonObject {
  const { kind, region } = ctx;
  let obj: JsonObject;
  if (region === 'status') {
    // A status write changes status and nothing else; built-in kinds' status strategies also take
    // metadata other than labels (as apps/v1 does).
    obj = clone(existing);
    if (body.status === undefined) delete obj.status;
    else obj.status = clone(body.status);
    if (kind.builtIn) obj.metadata = { ...clone(metaOf(body)), labels: clone(metaOf(existing).labels) };
  } else {
    obj = clone(body);
    if (region === 'main') {
      // A main-resource write never changes status when the kind has a status subresource.
      if (existing.status === undefined) delete obj.status;
      else obj.status = clone(existing.status);
    }
  }
  obj.apiVersion = kind.apiVersion;
  obj.kind = kind.kind;
  const meta = metaOf(obj);
  const old = metaOf(existing);
  const name = String(old.name);
  meta.name = old.name;
  if (kind.namespaced) meta.namespace = old.namespace;
  else delete meta.namespace;
  meta.uid = old.uid;
  meta.creationTimestamp = old.creationTimestamp;
  delete meta.selfLink;
  if (old.generation !== undefined) meta.generation = old.generation;
  else delete meta.generation;
  dedupOwnerReferences(meta);
  const causes: Cause[] = metadataCauses(kind, meta);
  if (old.deletionTimestamp !== undefined) {
    // An update can never remove or move a deletion timestamp, nor add finalizers once deleting.
    meta.deletionTimestamp = old.deletionTimestamp;
    meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
    const before = new Set(asStrings(old.finalizers));
    const added = asStrings(meta.finalizers).filter((f) => !before.has(f));
    if (added.length > 0) {
      causes.push({
        reason: 'FieldValueForbidden',
        field: 'metadata.finalizers',
        message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
      });
    }
  } else if (meta.deletionTimestamp !== undefined) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'metadata.deletionTimestamp',
      message: `Invalid value: ${String(meta.deletionTimestamp)}: field is immutable`,
    });
  } else if (old.deletionGracePeriodSeconds === undefined) delete meta.deletionGracePeriodSeconds;
  if (causes.length > 0) throw invalid(kind, name, causes, ctx.where);
  if (kind.generation && region !== 'status' && specChanged(kind, existing, obj))
    meta.generation = Number(old.generation ?? 0) + 1;
  normalizeSecret(kind, obj);
  checkSchema(kind, obj, ctx.where);
  return obj;
}

/** Anything outside metadata (and outside status, for kinds with a status subresource) changed. */
export function specChanged(kind: KindInfo, before: JsonObject, after: JsonObject): boolean {
  const strip = (o: JsonObject): JsonObject => {
    const c: JsonObject = { ...o };
    delete c.metadata;
    delete c.apiVersion;
    delete c.kind;
    if (kind.statusSubresource) delete c.status;
    return c;
  };
  if (!deepEqual(strip(before), strip(after))) return true;
  // Deployments copy annotations to their ReplicaSets, so an annotation change is a spec change there.
  return (
    kind.builtIn &&
    kind.apiVersion === 'apps/v1' &&
    kind.kind === 'Deployment' &&
    !deepEqual(metaOf(before).annotations, metaOf(after).annotations)
  );
}

/** True when a write would store exactly what is stored (the server then writes nothing). */
export function isNoop(existing: JsonObject, next: JsonObject): boolean {
  // Shallow copies with the resourceVersion unset (deepEqual skips undefined members): nothing cloned.
  const strip = (o: JsonObject): JsonObject => ({
    ...o,
    metadata: isObject(o.metadata) ? { ...o.metadata, resourceVersion: undefined } : o.metadata,
  });
  return deepEqual(strip(existing), strip(next));
}

export function withManagedFields(obj: JsonObject, entries: ManagedFieldsEntry[] | undefined): JsonObject {
  const meta = metaOf(obj);
  if (entries) meta.managedFields = entries;
  else delete meta.managedFields;
  return obj;
}

export function asStrings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
