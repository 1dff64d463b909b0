/**
 * Reads from one informer's store with the shape of the client's reads (get, list with selectors,
 * byIndex), synchronously and without copying: the objects are the cache's own, read-only.
 */
import { keyOf, objectKey, type KubeObject, type ObjectRef } from '../core/object-key.js';
import { IndexError } from './errors.js';
import { fieldIndexName, parseFieldSelector, type FieldRequirement } from './field-selector.js';
import { NAMESPACE_INDEX } from './indexer.js';
import { MATCH_ALL_LABELS, matchesLabels, parseLabelSelector, type LabelSelector } from './label-selector.js';
import type { StoreReader } from './store.js';

export interface CacheListOptions {
  /** Only this namespace (served from the namespace index). */
  readonly namespace?: string;
  /** String form (`a=b,c in (x,y),!d`) or a parsed selector. */
  readonly labelSelector?: string | LabelSelector;
  /**
   * `metadata.name` / `metadata.namespace`, or a field with a `field:<path>` index; `=` on indexed
   * fields, `=` and `!=` on the two metadata fields. Anything else throws `IndexError`.
   */
  readonly fieldSelector?: string;
}

export class CacheReader<T extends KubeObject> {
  constructor(private readonly store: StoreReader<T>) {}

  /** The cached object, or undefined. Accepts a key (`ns/name`) or a reference. */
  get(ref: ObjectRef | string): T | undefined {
    return this.store.get(typeof ref === 'string' ? ref : objectKey(ref));
  }

  list(options: CacheListOptions = {}): T[] {
    const labels =
      options.labelSelector === undefined
        ? MATCH_ALL_LABELS
        : typeof options.labelSelector === 'string'
          ? parseLabelSelector(options.labelSelector)
          : options.labelSelector;
    const fields = options.fieldSelector ? parseFieldSelector(options.fieldSelector) : [];
    const metaFields = fields.filter((f) => f.field === 'metadata.name' || f.field === 'metadata.namespace');
    const indexedFields = fields.filter((f) => !metaFields.includes(f));
    for (const f of indexedFields) {
      const index = fieldIndexName(f.field);
      if (!this.store.hasIndex(index))
        throw new IndexError(index, `field selector on ${f.field} needs an index named ${JSON.stringify(index)}`);
      if (f.operator !== '=') throw new IndexError(index, `only "=" is supported on indexed field ${f.field}`);
    }
    // Start from the narrowest index available, then filter the rest in memory.
    const [first, ...others] = indexedFields;
    let candidates: T[];
    if (first) candidates = this.store.byIndex(fieldIndexName(first.field), first.value);
    else if (options.namespace !== undefined) candidates = this.store.byIndex(NAMESPACE_INDEX, options.namespace);
    else candidates = this.store.list();
    const otherKeys = others.map((f) => new Set(this.store.indexKeys(fieldIndexName(f.field), f.value)));
    return candidates.filter(
      (o) =>
        (options.namespace === undefined || o.metadata?.namespace === options.namespace) &&
        matchesLabels(labels, o.metadata?.labels) &&
        metaFields.every((f) => metaFieldMatches(f, o)) &&
        otherKeys.every((keys) => keys.has(keyOf(o))),
    );
  }

  /** Objects under `value` in a user index (or the built-in `namespace` one). */
  byIndex(index: string, value: string): T[] {
    return this.store.byIndex(index, value);
  }
}

function metaFieldMatches(f: FieldRequirement, o: KubeObject): boolean {
  const actual = (f.field === 'metadata.name' ? o.metadata?.name : o.metadata?.namespace) ?? '';
  return f.operator === '=' ? actual === f.value : actual !== f.value;
}
