/**
 * Walking decoded review JSON without recursion: a copy that keeps big numbers (`LosslessNumber`
 * from lossless-json) as they are, and the test for "a plain JSON object". A review may be nested
 * as deep as the decoder allows, so nothing here may use the call stack per level.
 */
import { isLosslessNumber } from 'lossless-json';

/** An object whose keys are its JSON members: not an array, a big number, a Date or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || isLosslessNumber(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A deep copy of the JSON containers (objects and arrays) of `value`; leaves (strings, numbers,
 * big numbers, anything that is not a plain container) are shared. Iterative.
 */
export function cloneJson<T>(value: T): T {
  const copyOf = (v: unknown): unknown => (Array.isArray(v) ? new Array<unknown>(v.length) : isPlainObject(v) ? {} : v);
  const root = copyOf(value);
  const stack: Array<[unknown, unknown]> = root === value ? [] : [[value, root]];
  while (stack.length > 0) {
    const [from, to] = stack.pop()!;
    if (Array.isArray(from)) {
      const out = to as unknown[];
      for (let i = 0; i < from.length; i++) {
        const c = copyOf(from[i]);
        out[i] = c;
        if (c !== from[i]) stack.push([from[i], c]);
      }
    } else {
      const out = to as Record<string, unknown>;
      for (const key of Object.keys(from as object)) {
        const v = (from as Record<string, unknown>)[key];
        const c = copyOf(v);
        // `out.__proto__ = c` would set the copy's prototype (to a request's object) and drop the key.
        if (key === '__proto__')
          Object.defineProperty(out, key, { value: c, enumerable: true, writable: true, configurable: true });
        else out[key] = c;
        if (c !== v) stack.push([v, c]);
      }
    }
  }
  return root as T;
}
