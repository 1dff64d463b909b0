/**
 * Label selectors as the API server understands them (`a=b,c!=d,e in (x,y),f notin (z),!g,h`, plus
 * `k>1`/`k<1`), parsed once and matched against objects in the cache. Matching follows the server:
 * `!=` and `notin` match objects that lack the label; `=`, `in`, `>` and `<` require it.
 */
import { InvalidLabelSelectorError } from './errors.js';

export type LabelRequirement =
  | { readonly key: string; readonly operator: 'Exists' | 'DoesNotExist' }
  | { readonly key: string; readonly operator: 'In' | 'NotIn'; readonly values: readonly string[] }
  | { readonly key: string; readonly operator: 'Gt' | 'Lt'; readonly value: number };

/** A parsed selector: every requirement must hold (logical AND). Empty selects everything. */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
}

/** metav1.LabelSelector, the object form used in specs (Deployment.spec.selector, …). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export const MATCH_ALL_LABELS: LabelSelector = Object.freeze({ requirements: Object.freeze([]) as readonly LabelRequirement[] });

// Qualified name with optional DNS-subdomain prefix, as in apimachinery's validation.
const KEY_RE = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const INT_RE = /^-?\d+$/;

type Token = { kind: 'word'; text: string; at: number } | { kind: 'op'; text: string; at: number };

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      i++;
      continue;
    }
    const two = input.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      tokens.push({ kind: 'op', text: two, at: i });
      i += 2;
      continue;
    }
    if ('=!(),<>'.includes(c)) {
      tokens.push({ kind: 'op', text: c, at: i });
      i++;
      continue;
    }
    const start = i;
    while (i < input.length && !' \t\n=!(),<>'.includes(input[i]!)) i++;
    tokens.push({ kind: 'word', text: input.slice(start, i), at: start });
  }
  return tokens;
}

/** Parses the string form. Throws `InvalidLabelSelectorError` naming the position of the problem. */
export function parseLabelSelector(input: string): LabelSelector {
  const tokens = tokenize(input);
  if (tokens.length === 0) return MATCH_ALL_LABELS;
  let pos = 0;
  const fail = (msg: string): never => {
    const at = tokens[pos]?.at ?? input.length;
    throw new InvalidLabelSelectorError(input, `${msg} at position ${at}`);
  };
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (text: string): boolean => peek()?.kind === 'op' && peek()?.text === text;
  const word = (what: string): string => {
    const t = peek();
    if (t?.kind !== 'word') return fail(`expected ${what}`);
    pos++;
    return t.text;
  };
  const key = (): string => {
    const k = word('a label key');
    if (!KEY_RE.test(k) || k.length > 317) fail(`invalid label key ${JSON.stringify(k)}`);
    return k;
  };
  // A value may be empty (`a=` selects a=""), so a missing word is not an error here.
  const value = (): string => {
    const t = peek();
    if (t?.kind !== 'word') return '';
    pos++;
    if (!VALUE_RE.test(t.text) || t.text.length > 63) fail(`invalid label value ${JSON.stringify(t.text)}`);
    return t.text;
  };
  const valueSet = (): string[] => {
    if (!isOp('(')) fail('expected "("');
    pos++;
    if (isOp(')')) fail('a value set cannot be empty');
    const values = [value()];
    while (isOp(',')) {
      pos++;
      values.push(value());
    }
    if (!isOp(')')) fail('expected ")"');
    pos++;
    return values;
  };

  const requirements: LabelRequirement[] = [];
  for (;;) {
    if (isOp('!')) {
      pos++;
      requirements.push({ key: key(), operator: 'DoesNotExist' });
    } else {
      const k = key();
      const t = peek();
      if (!t || (t.kind === 'op' && t.text === ',')) {
        requirements.push({ key: k, operator: 'Exists' });
      } else if (t.kind === 'op' && (t.text === '=' || t.text === '==')) {
        pos++;
        requirements.push({ key: k, operator: 'In', values: [value()] });
      } else if (t.kind === 'op' && t.text === '!=') {
        pos++;
        requirements.push({ key: k, operator: 'NotIn', values: [value()] });
      } else if (t.kind === 'op' && (t.text === '>' || t.text === '<')) {
        pos++;
        const v = word('an integer');
        if (!INT_RE.test(v)) fail(`expected an integer, got ${JSON.stringify(v)}`);
        requirements.push({ key: k, operator: t.text === '>' ? 'Gt' : 'Lt', value: Number(v) });
      } else if (t.kind === 'word' && (t.text === 'in' || t.text === 'notin')) {
        pos++;
        requirements.push({ key: k, operator: t.text === 'in' ? 'In' : 'NotIn', values: valueSet() });
      } else {
        fail(`unexpected ${JSON.stringify(t.text)}`);
      }
    }
    if (pos >= tokens.length) break;
    if (!isOp(',')) fail('expected ","');
    pos++;
  }
  return { requirements };
}

/** Converts the object form; an empty or absent object selects everything (as the API does). */
export function labelSelectorFromObject(obj: LabelSelectorObject | undefined): LabelSelector {
  const requirements: LabelRequirement[] = [];
  for (const [key, v] of Object.entries(obj?.matchLabels ?? {})) requirements.push({ key, operator: 'In', values: [v] });
  for (const e of obj?.matchExpressions ?? []) {
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (!e.values?.length) throw new InvalidLabelSelectorError(JSON.stringify(obj), `${e.operator} on ${e.key} needs values`);
        requirements.push({ key: e.key, operator: e.operator, values: [...e.values] });
        break;
      case 'Exists':
      case 'DoesNotExist':
        requirements.push({ key: e.key, operator: e.operator });
        break;
      default:
        throw new InvalidLabelSelectorError(JSON.stringify(obj), `unknown operator ${JSON.stringify(e.operator)}`);
    }
  }
  return { requirements };
}

function requirementMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const v = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'In':
      return v !== undefined && r.values.includes(v);
    case 'NotIn':
      return v === undefined || !r.values.includes(v);
    case 'Gt':
    case 'Lt': {
      if (v === undefined || !INT_RE.test(v)) return false;
      return r.operator === 'Gt' ? Number(v) > r.value : Number(v) < r.value;
    }
  }
}

/** True when `labels` satisfy every requirement. */
export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  return selector.requirements.every((r) => requirementMatches(r, l));
}

/**
 * The selector as a canonical string (requirements sorted), so equal selectors written differently
 * (`b=2,a=1` and `a=1, b==2`) name the same shared informer.
 */
export function formatLabelSelector(selector: LabelSelector): string {
  const parts = selector.requirements.map((r) => {
    switch (r.operator) {
      case 'Exists':
        return r.key;
      case 'DoesNotExist':
        return `!${r.key}`;
      case 'Gt':
        return `${r.key}>${r.value}`;
      case 'Lt':
        return `${r.key}<${r.value}`;
      case 'In':
      case 'NotIn': {
        const values = [...new Set(r.values)].sort();
        if (values.length === 1) return `${r.key}${r.operator === 'In' ? '=' : '!='}${values[0]}`;
        return `${r.key} ${r.operator === 'In' ? 'in' : 'notin'} (${values.join(',')})`;
      }
    }
  });
  return [...new Set(parts)].sort().join(',');
}
