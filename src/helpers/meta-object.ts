import { IncompleteObjectError } from '../core/errors.js';
import type { OwnerReference } from '../core/object-key.js';

/**
 * The metadata fields the helpers read and write. Structural, so `kubernetes-types` objects
 * (ConfigMap, Deployment…), `KubeObject` and custom resource interfaces all fit without casts.
 */
export interface MetadataLike {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  finalizers?: string[];
  deletionTimestamp?: string;
  ownerReferences?: OwnerReference[];
}

/** Any Kubernetes object as plain JSON, addressed by apiVersion + kind + metadata. */
export interface MetaObject {
  apiVersion?: string;
  kind?: string;
  metadata?: MetadataLike;
}

/** `{ apiVersion, kind }` of an object, for the client's resource addressing. */
export function typeOf(obj: MetaObject): { apiVersion: string; kind: string } {
  if (!obj.apiVersion || !obj.kind) throw new IncompleteObjectError('object has no apiVersion/kind');
  return { apiVersion: obj.apiVersion, kind: obj.kind };
}

export function nameOf(obj: MetaObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new IncompleteObjectError('object has no metadata.name');
  return name;
}

/** A deep copy of plain JSON (objects from the API never hold anything else). */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}
