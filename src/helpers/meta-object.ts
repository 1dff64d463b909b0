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

/** A deep copy of plain JSON (objects from the API never hold anything else). */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}
