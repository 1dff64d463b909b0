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

/** Whether two JSON values are equal as documents (key order ignored, undefined members ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
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
