/**
 * Metadata-only reads (`PartialObjectMetadata`): the API server strips each object down to
 * apiVersion, kind and metadata before sending it, so a cache of Secrets or Pods that only needs
 * labels, owners and finalizers neither transfers nor holds their data.
 */

/**
 * Accept headers of a metadata-only list and watch, as client-go's metadata client sends them (less
 * protobuf). The plain `application/json` fallback lets a server that cannot convert answer with
 * whole objects, which are then cut down on our side, so callers get the same shape either way.
 */
export const METADATA_ONLY_ACCEPT = {
  list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
  watch: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
} as const;

/**
 * `obj` cut down to metadata, carrying the kind's own apiVersion/kind (not
 * `meta.k8s.io/v1 PartialObjectMetadata`), as controller-runtime's metadata informers do, so
 * handlers and owner lookups see the real kind. An object already in that shape is returned as is;
 * anything that is not an object is returned untouched (the cache validates it).
 */
export function toPartialObjectMetadata<T>(obj: T, type: { readonly apiVersion: string; readonly kind: string }): T {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return obj;
  const o = obj as Record<string, unknown>;
  let extra = false;
  for (const k in o) if (k !== 'apiVersion' && k !== 'kind' && k !== 'metadata') extra = true;
  if (!extra && o.apiVersion === type.apiVersion && o.kind === type.kind) return obj;
  return { apiVersion: type.apiVersion, kind: type.kind, metadata: o.metadata } as T;
}
