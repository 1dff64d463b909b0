import { stringifyJson } from '../client/lossless-json.js';

/**
 * Canonical JSON: object keys sorted, `undefined` members dropped (as JSON.stringify does), so two
 * values that serialize to the same JSON document compare equal whatever their key order. Used for
 * "did anything change?" checks before a write and for the spec hash. An int64 beyond 2^53 (a
 * `bigint`, as the client reads it) is written as its digits, not refused.
 */
export function canonicalJson(value: unknown): string {
  return (stringifyJson(sortKeys(value)) as string | undefined) ?? 'null';
}

/**
 * Whether two JSON values are equal as documents (key order ignored, undefined members ignored):
 * `canonicalJson(a) === canonicalJson(b)`. Plain data (plain objects, arrays, strings, finite
 * numbers, booleans, null) is compared member by member, without writing either out — it is
 * called at every level of a merge-patch diff; anything JSON rewrites (a `toJSON`, a Date, a
 * bigint, a function, a non-finite number) sends the pair to the canonical strings. (A cycle is
 * no JSON: two are compared as far as a difference, and throw as `canonicalJson` does without one.)
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  try {
    return plainEqual(a === undefined ? null : a, b === undefined ? null : b, 0);
  } catch (err) {
    if (err !== NOT_PLAIN) throw err;
    return canonicalJson(a) === canonicalJson(b);
  }
}

/** Thrown by `plainEqual` at a value whose JSON is not the value itself; `jsonEqual` then compares strings. */
const NOT_PLAIN: unique symbol = Symbol('not plain JSON');
/** Deeper than this (a cycle, or a document no object has), the strings decide (and a cycle throws as before). */
const MAX_PLAIN_DEPTH = 100;

const hasOwn = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

type PlainKind = 'null' | 'string' | 'boolean' | 'number' | 'array' | 'object';

function plainKind(v: unknown): PlainKind {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      if (Number.isFinite(v)) return 'number';
      throw NOT_PLAIN; // written as null
    case 'object': {
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) === Array.prototype) return 'array';
        throw NOT_PLAIN;
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if ((proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function')
        return 'object';
      throw NOT_PLAIN;
    }
    default:
      throw NOT_PLAIN; // bigint, function, symbol: written as digits, dropped or null
  }
}

/**
 * Equality of the canonical JSON of two values (undefined already mapped to null where JSON writes
 * null). A difference found between plain values is a difference of the documents, whatever else
 * they hold; anything that is not plain throws NOT_PLAIN.
 */
function plainEqual(a: unknown, b: unknown, depth: number): boolean {
  if (depth > MAX_PLAIN_DEPTH) throw NOT_PLAIN;
  const kind = plainKind(a);
  if (kind !== plainKind(b)) return false;
  if (kind === 'array') {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++)
      if (!plainEqual(x[i] === undefined ? null : x[i], y[i] === undefined ? null : y[i], depth + 1)) return false;
    return true;
  }
  if (kind === 'object') {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    let members = 0;
    // for-in over own members: Object.keys without allocating the keys.
    for (const key in x) {
      if (!hasOwn(x, key)) continue;
      const v = x[key];
      if (v === undefined) continue;
      if (key === '__proto__') throw NOT_PLAIN; // sortKeys' copy loses it (a prototype, not a member)
      members++;
      const w = hasOwn(y, key) ? y[key] : undefined;
      if (w === undefined) {
        plainKind(v); // a member only `a` has: a difference, unless JSON drops it
        return false;
      }
      if (!plainEqual(v, w, depth + 1)) return false;
    }
    for (const key in y) {
      if (!hasOwn(y, key) || y[key] === undefined) continue;
      if (key === '__proto__') throw NOT_PLAIN;
      members--;
      if (!hasOwn(x, key) || x[key] === undefined) {
        plainKind(y[key]);
        return false;
      }
    }
    return members === 0;
  }
  return a === b;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeys(v)));
  if (value === null || typeof value !== 'object') return value;
  // Dates and other objects with toJSON serialize as JSON.stringify would.
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === 'function') return sortKeys(json.call(value));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}
