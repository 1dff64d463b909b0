import { IncompleteObjectError } from './errors.js';

/**
 * The minimal shape of any Kubernetes object as the API returns it (plain JSON). No index
 * signature, so user interfaces for custom resources (and `kubernetes-types`) fit without casts.
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** The part of metav1.ObjectMeta the runtime relies on; objects carry more, untouched. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  creationTimestamp?: string;
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Group/version/kind. `group` is '' for the core API. */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** What a reconciler is asked to reconcile: only a key, never an object (level-triggered). */
export interface ObjectRef {
  readonly namespace?: string;
  readonly name: string;
}

/** `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function objectKey(ref: ObjectRef): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

export function keyOf(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new IncompleteObjectError('object has no metadata.name');
  return objectKey({ namespace: obj.metadata?.namespace, name });
}

export function parseObjectKey(key: string): ObjectRef {
  const slash = key.indexOf('/');
  if (slash < 0) return { name: key };
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Splits `apiVersion` ("apps/v1", "v1") into group and version. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function apiVersionOf(gvk: Pick<GroupVersionKind, 'group' | 'version'>): string {
  return gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
}

/**
 * `{ apiVersion, kind }` of an object, to address it by: every client and helper takes it from here,
 * so an object without them fails one way (`IncompleteObjectError`) wherever it is written.
 */
export function typeOf(obj: { readonly apiVersion?: string; readonly kind?: string }): {
  apiVersion: string;
  kind: string;
} {
  if (!obj.apiVersion || !obj.kind) throw new IncompleteObjectError('object has no apiVersion/kind');
  return { apiVersion: obj.apiVersion, kind: obj.kind };
}

/** `metadata.name` of an object, or `IncompleteObjectError` when it has none. */
export function nameOf(obj: { readonly metadata?: { readonly name?: string } }): string {
  const name = obj.metadata?.name;
  if (!name) throw new IncompleteObjectError('object has no metadata.name');
  return name;
}

export function gvkOf(obj: KubeObject): GroupVersionKind {
  if (!obj.apiVersion || !obj.kind) throw new IncompleteObjectError('object has no apiVersion/kind');
  return { ...parseApiVersion(obj.apiVersion), kind: obj.kind };
}

/** `apiVersion/kind` ("apps/v1/Deployment"): the one key for a kind in maps and sets. */
export function kindKey(type: { readonly apiVersion: string; readonly kind: string }): string {
  return `${type.apiVersion}/${type.kind}`;
}
