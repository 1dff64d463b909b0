/**
 * Label selectors (equality- and set-based, as `kubectl -l` and the API accept them) and the field
 * selectors every kind supports (`metadata.name`, `metadata.namespace`). A malformed selector
 * throws SelectorError, which the fake answers with 400 BadRequest as the server does.
 */

export class SelectorError extends Error {}

type LabelRequirement =
  | { readonly op: 'exists' | 'notexists'; readonly key: string }
  | { readonly op: 'in' | 'notin'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'gt' | 'lt'; readonly key: string; readonly value: number };

export type LabelSelector = readonly LabelRequirement[];

const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

export function parseLabelSelector(text: string | undefined): LabelSelector {
  if (!text || !text.trim()) return [];
  const parts = splitTopLevel(text);
  return parts.map(parseRequirement);
}

/** Splits on commas outside parentheses. */
function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) throw new SelectorError(`unbalanced ')' in ${text}`);
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (depth !== 0) throw new SelectorError(`unable to parse requirement: found '', expected: ',', ')' or identifier`);
  out.push(cur);
  return out;
}

function checkKey(key: string): string {
  if (!KEY.test(key)) throw new SelectorError(`invalid label key "${key}"`);
  return key;
}

function checkValue(value: string): string {
  if (value.length > 63 || !VALUE.test(value)) throw new SelectorError(`invalid label value: "${value}"`);
  return value;
}

function parseRequirement(raw: string): LabelRequirement {
  const s = raw.trim();
  if (!s) throw new SelectorError('found empty requirement');
  let m = /^!\s*(\S+)$/.exec(s);
  if (m) return { op: 'notexists', key: checkKey(m[1]!) };
  m = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(s);
  if (m) {
    const values = m[3]!.split(',').map((v) => checkValue(v.trim()));
    return { op: m[2] as 'in' | 'notin', key: checkKey(m[1]!), values };
  }
  m = /^([^=!<>\s]+)\s*(==|=|!=|<|>)\s*(.*)$/.exec(s);
  if (m) {
    const key = checkKey(m[1]!);
    const value = m[3]!.trim();
    if (m[2] === '<' || m[2] === '>') {
      if (!/^-?[0-9]+$/.test(value)) throw new SelectorError(`for 'gt', 'lt' operators, exactly one value is required and it must be an integer: ${value}`);
      return { op: m[2] === '>' ? 'gt' : 'lt', key, value: Number(value) };
    }
    if (/\s/.test(value)) throw new SelectorError(`found '${value.split(/\s+/)[1]}', expected: ',' or 'end of string'`);
    return { op: m[2] === '!=' ? 'notin' : 'in', key, values: [checkValue(value)] };
  }
  if (/^\S+$/.test(s)) return { op: 'exists', key: checkKey(s) };
  throw new SelectorError(`unable to parse requirement: ${s}`);
}

export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  return selector.every((r) => {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'exists':
        return has;
      case 'notexists':
        return !has;
      case 'in':
        return has && r.values.includes(v!);
      case 'notin':
        return !has || !r.values.includes(v!);
      case 'gt':
      case 'lt': {
        if (!has || !/^-?[0-9]+$/.test(v!)) return false;
        return r.op === 'gt' ? Number(v) > r.value : Number(v) < r.value;
      }
    }
  });
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

export function matchesFields(selector: FieldSelector, meta: { name?: string; namespace?: string } | undefined): boolean {
  return selector.every((r) => {
    const actual = (r.field === 'metadata.name' ? meta?.name : meta?.namespace) ?? '';
    return (actual === r.value) === r.equal;
  });
}
