/** Plain JSON helpers: the fake stores objects as JSON values and compares them structurally. */

export type JsonObject = { [key: string]: unknown };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Nesting beyond which `clone` leaves the copy to JSON (a cycle, or a document deeper than any
 * object the fake stores): JSON then throws or copies as it always did.
 */
const MAX_FAST_DEPTH = 100;

const hasOwn = Object.prototype.hasOwnProperty;

/** Thrown inside the fast copy when a value is not plain JSON data; `clone` then copies through JSON. */
const NOT_PLAIN: unique symbol = Symbol('not plain JSON');

/**
 * A deep copy as a JSON round trip makes it, so stored objects never share memory with a caller's
 * (and `undefined` members vanish as on the wire). Plain data (plain objects, arrays, strings,
 * finite numbers, booleans, null) is copied directly — several times faster than
 * `JSON.parse(JSON.stringify(v))`, the simulation's largest cost; anything else (a `toJSON`, a
 * Date, a class instance, a non-finite number, a function or bigint, a cycle) sends the whole value
 * through JSON, so the result (or the error) is exactly the round trip's.
 */
export function clone<T>(v: T): T {
  if (v === undefined) return v;
  try {
    return copyPlain(v, 0) as T;
  } catch (err) {
    if (err !== NOT_PLAIN) throw err;
    return JSON.parse(JSON.stringify(v)) as T;
  }
}

function copyPlain(v: unknown, depth: number): unknown {
  if (typeof v !== 'object') {
    if (typeof v === 'string' || typeof v === 'boolean') return v;
    // -0 is written as 0; NaN and Infinity as null (left to JSON).
    if (typeof v === 'number' && Number.isFinite(v)) return v === 0 ? 0 : v;
    throw NOT_PLAIN;
  }
  if (v === null) return null;
  if (depth > MAX_FAST_DEPTH) throw NOT_PLAIN;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) throw NOT_PLAIN;
    const n = v.length;
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) {
      const item: unknown = v[i];
      // JSON writes an undefined (or missing) item as null.
      out[i] = item === undefined ? null : copyPlain(item, depth + 1);
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function')
    throw NOT_PLAIN;
  const out: JsonObject = {};
  // for-in over own members is Object.keys without the array of keys (half the copy's allocations).
  for (const key in v) {
    if (!hasOwn.call(v, key)) continue;
    const item = (v as JsonObject)[key];
    if (item === undefined) continue;
    const copy = copyPlain(item, depth + 1);
    // `out.__proto__ = copy` would set the copy's prototype; JSON.parse makes it an own member.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out;
}

/** Structural equality of JSON values (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    // Own members that are not undefined: as many in each, and each of a's equal to b's.
    let members = 0;
    for (const k in a) {
      if (!hasOwn.call(a, k) || a[k] === undefined) continue;
      members++;
      if (!deepEqual(a[k], b[k])) return false;
    }
    for (const k in b) if (hasOwn.call(b, k) && b[k] !== undefined) members--;
    return members === 0;
  }
  return false;
}
