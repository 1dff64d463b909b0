/**
 * What one shared informer watches: a kind, a namespace scope and selectors. Two specs that select
 * the same objects (selectors written in another order, say) have the same key, so they share one
 * watch.
 */
import { formatLabelSelector, parseLabelSelector } from './label-selector.js';

export interface InformerSpec {
  /** `v1`, `apps/v1`, `example.com/v1alpha1`… */
  readonly apiVersion: string;
  readonly kind: string;
  /** One namespace; absent for all namespaces (or a cluster-scoped kind). */
  readonly namespace?: string;
  /** Server-side label selector, string form (`app=db,tier in (a,b)`). */
  readonly labelSelector?: string;
  /** Server-side field selector (`metadata.name=x,status.phase!=Running`). */
  readonly fieldSelector?: string;
  /**
   * Watch `PartialObjectMetadata` only (the ListerWatcher factory sends the
   * `application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` Accept header): far less memory
   * for kinds where only metadata matters.
   */
  readonly metadataOnly?: boolean;
}

/** The spec with selectors in canonical form. Throws `InvalidLabelSelectorError` for a bad selector. */
export function normalizeInformerSpec(spec: InformerSpec): InformerSpec {
  const labelSelector = spec.labelSelector ? formatLabelSelector(parseLabelSelector(spec.labelSelector)) : '';
  const fieldSelector = spec.fieldSelector
    ? [...new Set(spec.fieldSelector.split(',').map((p) => p.replace(/\s+/g, '')).filter((p) => p !== ''))].sort().join(',')
    : '';
  return {
    apiVersion: spec.apiVersion,
    kind: spec.kind,
    ...(spec.namespace ? { namespace: spec.namespace } : {}),
    ...(labelSelector ? { labelSelector } : {}),
    ...(fieldSelector ? { fieldSelector } : {}),
    ...(spec.metadataOnly ? { metadataOnly: true } : {}),
  };
}

/** A stable string naming the spec: equal for specs that select the same objects. */
export function informerKey(spec: InformerSpec): string {
  const n = normalizeInformerSpec(spec);
  return JSON.stringify([n.apiVersion, n.kind, n.namespace ?? '', n.labelSelector ?? '', n.fieldSelector ?? '', n.metadataOnly ?? false]);
}

/** A readable name for logs and metrics: `apps/v1 Deployment ns=x app=db`. */
export function informerName(spec: InformerSpec): string {
  const n = normalizeInformerSpec(spec);
  return [
    n.apiVersion,
    n.kind,
    n.namespace ? `ns=${n.namespace}` : '',
    n.labelSelector ? `labels=${n.labelSelector}` : '',
    n.fieldSelector ? `fields=${n.fieldSelector}` : '',
    n.metadataOnly ? 'metadata-only' : '',
  ]
    .filter(Boolean)
    .join(' ');
}
