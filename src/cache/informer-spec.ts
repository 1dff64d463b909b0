/**
 * What one shared informer watches: a kind, a namespace scope and selectors. Two specs that select
 * the same objects (selectors written in another order, say) have the same key, so they share one
 * watch.
 */
import { omitUndefined } from '../core/omit-undefined.js';
import { formatLabelSelector, parseLabelSelector } from './label-selector.js';
import { formatHashBound, formatShardSelector, parseShardSelector } from '../client/shard-selector.js';

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
  /**
   * Only objects whose `metadata.uid` (or `namespace`) hash lies in these ranges, e.g.
   * `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')` (see
   * `formatShardSelector` in client/shard-selector.ts). Sent to the server (Kubernetes 1.36 with
   * `ShardedListAndWatch` filters there, so the list, the watch and the cache hold only the range)
   * and checked again on every object received, so a server that ignores it still leaves only the
   * range in the cache.
   */
  readonly shardSelector?: string;
}

/**
 * The spec with selectors in canonical form. Throws `InvalidLabelSelectorError` for a bad label
 * selector, `InvalidShardSelectorError` for a bad shard selector.
 */
export function normalizeInformerSpec(spec: InformerSpec): InformerSpec {
  const labelSelector = spec.labelSelector ? canonicalLabelSelector(spec.labelSelector) : '';
  const shardSelector = spec.shardSelector ? canonicalShardSelector(spec.shardSelector) : '';
  const fieldSelector = spec.fieldSelector
    ? [
        ...new Set(
          spec.fieldSelector
            .split(',')
            .map((p) => p.replace(/\s+/g, ''))
            .filter((p) => p !== ''),
        ),
      ]
        .sort()
        .join(',')
    : '';
  return {
    apiVersion: spec.apiVersion,
    kind: spec.kind,
    // The canonical form leaves out an empty scope or selector and a false metadataOnly.
    ...omitUndefined({
      namespace: spec.namespace || undefined,
      labelSelector: labelSelector || undefined,
      fieldSelector: fieldSelector || undefined,
      metadataOnly: spec.metadataOnly || undefined,
      shardSelector: shardSelector || undefined,
    }),
  };
}

function canonicalShardSelector(selector: string): string {
  const parsed = parseShardSelector(selector);
  return formatShardSelector(parsed.ranges, parsed.field);
}

/** A stable string naming the spec: equal for specs that select the same objects. */
export function informerKey(spec: InformerSpec): string {
  const n = normalizeInformerSpec(spec);
  return JSON.stringify([
    n.apiVersion,
    n.kind,
    n.namespace ?? '',
    n.labelSelector ?? '',
    n.fieldSelector ?? '',
    n.metadataOnly ?? false,
    n.shardSelector ?? '',
  ]);
}

/**
 * Canonical label selectors, by their text: every cached read works out its informer's key, and an
 * operator uses a handful of selectors. Bounded (cleared when full) for one that makes them up.
 */
const canonicalSelectors = new Map<string, string>();
const MAX_CANONICAL_SELECTORS = 1_000;

function canonicalLabelSelector(text: string): string {
  let canonical = canonicalSelectors.get(text);
  if (canonical === undefined) {
    canonical = formatLabelSelector(parseLabelSelector(text)); // throws for a bad one: not remembered
    if (canonicalSelectors.size >= MAX_CANONICAL_SELECTORS) canonicalSelectors.clear();
    canonicalSelectors.set(text, canonical);
  }
  return canonical;
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
    n.shardSelector ? `shard=${shardName(n.shardSelector)}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** `uid[0x0000000000000000,0x8000000000000000)`: the ranges without the selector's boilerplate. */
function shardName(selector: string): string {
  const { field, ranges } = parseShardSelector(selector);
  return `${field}${ranges.map((r) => `[${formatHashBound(r.start)},${formatHashBound(r.end)})`).join('')}`;
}
