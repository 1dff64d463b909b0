/**
 * Label selectors (equality- and set-based, as `kubectl -l` and the API accept them) and the field
 * selectors every kind supports (`metadata.name`, `metadata.namespace`). A malformed selector
 * throws SelectorError, which the fake answers with 400 BadRequest as the server does.
 *
 * Label selectors are parsed and matched by the cache's parser (src/cache/label-selector.ts), the
 * project's one, so the fake and the cache cannot disagree on what a selector means.
 */
import { OperatorRuntimeError } from '../../core/errors.js';
import { InvalidLabelSelectorError } from '../../cache/errors.js';
import {
  MATCH_ALL_LABELS,
  matchesLabels as matchesLabelSelector,
  parseLabelSelector as parseCacheLabelSelector,
  type LabelSelector,
} from '../../cache/label-selector.js';

/** A label or field selector the fake refuses; the fake answers it with 400 BadRequest. */
export class SelectorError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INVALID_SELECTOR';

  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_INVALID_SELECTOR', message, options);
  }
}

export type { LabelSelector };

export function parseLabelSelector(text: string | undefined): LabelSelector {
  if (!text) return MATCH_ALL_LABELS;
  try {
    return parseCacheLabelSelector(text);
  } catch (err) {
    if (err instanceof InvalidLabelSelectorError) throw new SelectorError(err.message, { cause: err });
    throw err;
  }
}

export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  return matchesLabelSelector(selector, labels);
}

interface FieldRequirement {
  readonly field: 'metadata.name' | 'metadata.namespace';
  readonly equal: boolean;
  readonly value: string;
}

export type FieldSelector = readonly FieldRequirement[];

const SUPPORTED_FIELDS = new Set(['metadata.name', 'metadata.namespace']);

export function parseFieldSelector(text: string | undefined): FieldSelector {
  if (!text || !text.trim()) return [];
  return text.split(',').map((raw) => {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(raw);
    if (!m) throw new SelectorError(`invalid selector: '${text}'; can't understand '${raw}'`);
    if (!SUPPORTED_FIELDS.has(m[1]!)) throw new SelectorError(`field label not supported: ${m[1]}`);
    return { field: m[1] as FieldRequirement['field'], equal: m[2] !== '!=', value: m[3]! };
  });
}

export function matchesFields(
  selector: FieldSelector,
  meta: { name?: string; namespace?: string } | undefined,
): boolean {
  return selector.every((r) => {
    const actual = (r.field === 'metadata.name' ? meta?.name : meta?.namespace) ?? '';
    return (actual === r.value) === r.equal;
  });
}
