/**
 * Label selectors as the API server understands them (`a=b,c!=d,e in (x,y),f notin (z),!g,h`, plus
 * `k>1`/`k<1`), parsed once and matched against objects in the cache. Matching follows the server:
 * `!=` and `notin` match objects that lack the label; `=`, `in`, `>` and `<` require it.
 *
 * The one parser of the project: the cache and the fake client (src/testing/fake-client/selectors.ts)
 * both use it. Grammar and validation follow apimachinery's `labels.Parse` (k8s.io/apimachinery
 * pkg/labels/selector.go, the same in 1.20 and 1.36): whitespace is space, tab, CR and LF; the
 * symbols `= == != ! ( ) , < >` end a word; `in`/`notin` are operators only after a key, so they
 * may be keys and values; `a in ()` is the set {""}; keys are qualified names and values label
 * values (see {@link labelKeyProblem}); a `>`/`<` operand is a label value that is an int64, so
 * it is never negative.
 */
import { InvalidLabelSelectorError } from './errors.js';

export type LabelRequirement =
  | { readonly key: string; readonly operator: 'Exists' | 'DoesNotExist' }
  | { readonly key: string; readonly operator: 'In' | 'NotIn'; readonly values: readonly string[] }
  /** `value` is an int64, as the server compares it (a number would round past 2^53). */
  | { readonly key: string; readonly operator: 'Gt' | 'Lt'; readonly value: bigint };

/** A parsed selector: every requirement must hold (logical AND). Empty selects everything. */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
}

/** metav1.LabelSelector, the object form used in specs (Deployment.spec.selector, …). */
/** The metav1.LabelSelector object form (`matchLabels`, `matchExpressions`), as manifests and watches carry it. */
export interface LabelSelectorObject {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }[];
}

export const MATCH_ALL_LABELS: LabelSelector = Object.freeze({
  requirements: Object.freeze([]) as readonly LabelRequirement[],
});

/** apimachinery validation: a qualified name's name part, and a label value, are at most 63 characters. */
const QUALIFIED_NAME_MAX_LENGTH = 63;
/** A DNS-1123 subdomain (a key's prefix) is at most 253 characters. */
const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
const QUALIFIED_NAME_RE = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** strconv.ParseInt(s, 10, 64), for label values (which cannot start with a sign). */
const INT_RE = /^[+-]?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Why `key` is not a valid label key, or undefined if it is: a qualified name (alphanumerics,
 * `-`, `_`, `.`, alphanumeric at both ends, at most 63 characters) with an optional prefix that is
 * a DNS-1123 subdomain of at most 253 characters and a `/` (apimachinery `IsQualifiedName`).
 */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'a qualified name has at most one "/"';
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) return 'the prefix part must be non-empty';
    if (prefix.length > DNS1123_SUBDOMAIN_MAX_LENGTH)
      return `the prefix part must be no more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`;
    if (!DNS1123_SUBDOMAIN_RE.test(prefix))
      return 'the prefix part must be a lowercase RFC 1123 subdomain (e.g. example.com)';
  }
  if (name.length === 0) return 'the name part must be non-empty';
  if (name.length > QUALIFIED_NAME_MAX_LENGTH)
    return `the name part must be no more than ${QUALIFIED_NAME_MAX_LENGTH} characters`;
  if (!QUALIFIED_NAME_RE.test(name))
    return "the name part must consist of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric";
  return undefined;
}

/** Why `value` is not a valid label value, or undefined: empty, or a qualified name's name part (apimachinery `IsValidLabelValue`). */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > QUALIFIED_NAME_MAX_LENGTH) return `must be no more than ${QUALIFIED_NAME_MAX_LENGTH} characters`;
  if (!LABEL_VALUE_RE.test(value))
    return "must be empty or consist of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric";
  return undefined;
}

/** The int64 a label value denotes, as `strconv.ParseInt(v, 10, 64)` reads it; undefined if none. */
function parseInt64(text: string): bigint | undefined {
  if (!INT_RE.test(text)) return undefined;
  const n = BigInt(text);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

type Token = { kind: 'word'; text: string; at: number } | { kind: 'op'; text: string; at: number };

const WHITESPACE = ' \t\r\n';
const SYMBOLS = '=!(),<>';

/** apimachinery's lexer: words run until whitespace or a symbol; `==` and `!=` are one token each. */
function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (WHITESPACE.includes(c)) {
      i++;
      continue;
    }
    const two = input.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      tokens.push({ kind: 'op', text: two, at: i });
      i += 2;
      continue;
    }
    if (SYMBOLS.includes(c)) {
      tokens.push({ kind: 'op', text: c, at: i });
      i++;
      continue;
    }
    const start = i;
    while (i < input.length && !WHITESPACE.includes(input[i]!) && !SYMBOLS.includes(input[i]!)) i++;
    tokens.push({ kind: 'word', text: input.slice(start, i), at: start });
  }
  return tokens;
}

/** Parses the string form. Throws `InvalidLabelSelectorError` naming the position of the problem. */
export function parseLabelSelector(input: string): LabelSelector {
  const tokens = tokenize(input);
  if (tokens.length === 0) return MATCH_ALL_LABELS;
  let pos = 0;
  const fail = (msg: string, at = tokens[pos]?.at ?? input.length): never => {
    throw new InvalidLabelSelectorError(input, `${msg} at position ${at}`);
  };
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (text: string): boolean => peek()?.kind === 'op' && peek()?.text === text;
  const key = (): string => {
    const t = peek();
    if (t?.kind !== 'word') return fail('expected a label key');
    const problem = labelKeyProblem(t.text);
    if (problem) fail(`invalid label key ${JSON.stringify(t.text)}: ${problem}`);
    pos++;
    return t.text;
  };
  // A value may be empty (`a=` selects a=""), so a missing word is not an error here.
  const value = (): string => {
    const t = peek();
    if (t?.kind !== 'word') return '';
    const problem = labelValueProblem(t.text);
    if (problem) fail(`invalid label value ${JSON.stringify(t.text)}: ${problem}`);
    pos++;
    return t.text;
  };
  // `()` is {""} and empty entries are "", as apimachinery's parseIdentifiersList reads them.
  const valueSet = (): string[] => {
    if (!isOp('(')) fail('expected "("');
    pos++;
    const values = [value()];
    while (isOp(',')) {
      pos++;
      values.push(value());
    }
    if (!isOp(')')) fail('expected "," or ")"');
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
        const at = peek()?.at ?? input.length;
        const v = value();
        const n = parseInt64(v);
        if (n === undefined) fail(`for '>' and '<' the value must be an integer, got ${JSON.stringify(v)}`, at);
        requirements.push({ key: k, operator: t.text === '>' ? 'Gt' : 'Lt', value: n! });
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

/**
 * Converts the object form, validated as metav1.LabelSelectorAsSelector does (keys, values, operators).
 * An empty object selects everything, as the API does; so does an absent one here — where absent
 * means "nothing" in the API (LabelSelectorAsSelector(nil)), the caller checks for it first.
 */
export function labelSelectorFromObject(obj: LabelSelectorObject | undefined): LabelSelector {
  const fail = (msg: string): never => {
    throw new InvalidLabelSelectorError(JSON.stringify(obj), msg);
  };
  const checkKey = (key: string): string => {
    const problem = labelKeyProblem(key);
    return problem ? fail(`invalid label key ${JSON.stringify(key)}: ${problem}`) : key;
  };
  const checkValue = (value: string): string => {
    const problem = labelValueProblem(value);
    return problem ? fail(`invalid label value ${JSON.stringify(value)}: ${problem}`) : value;
  };
  const requirements: LabelRequirement[] = [];
  for (const [key, v] of Object.entries(obj?.matchLabels ?? {}))
    requirements.push({ key: checkKey(key), operator: 'In', values: [checkValue(v)] });
  for (const e of obj?.matchExpressions ?? []) {
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (!e.values?.length) fail(`${e.operator} on ${e.key} needs values`);
        requirements.push({ key: checkKey(e.key), operator: e.operator, values: e.values!.map(checkValue) });
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (e.values?.length) fail(`${e.operator} on ${e.key} takes no values`);
        requirements.push({ key: checkKey(e.key), operator: e.operator });
        break;
      default:
        fail(`unknown operator ${JSON.stringify(e.operator)}`);
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
      const n = v === undefined ? undefined : parseInt64(v);
      if (n === undefined) return false;
      // Compared as int64s, as the server does: values past 2^53 stay exact.
      return r.operator === 'Gt' ? n > r.value : n < r.value;
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
