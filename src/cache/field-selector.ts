/**
 * Field selectors for cache reads. The cache cannot evaluate arbitrary fields generically (the API
 * server knows per kind which fields are selectable), so, as controller-runtime does, it answers
 * `metadata.name` and `metadata.namespace` itself and any other field only through an index named
 * `field:<path>` that the user registered (`indexers: { 'field:spec.nodeName': (p) => [p.spec.nodeName] }`).
 */
import { InvalidOptionError } from '../core/errors.js';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

/** The index name the cache uses for a field selector on `field`. */
export function fieldIndexName(field: string): string {
  return `field:${field}`;
}

/** Parses `a=b,c==d,e!=f`. Values may be empty. Throws `InvalidOptionError` otherwise. */
export function parseFieldSelector(input: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  for (const raw of input.split(',')) {
    const part = raw.trim();
    if (part === '') {
      if (input.trim() === '') continue;
      throw new InvalidOptionError('fieldSelector', `empty requirement in ${JSON.stringify(input)}`);
    }
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw new InvalidOptionError('fieldSelector', `cannot parse ${JSON.stringify(part)}`);
    out.push({ field: m[1]!, operator: m[2] === '!=' ? '!=' : '=', value: m[3]!.trim() });
  }
  return out;
}
