/**
 * The keys of `T` whose value may be undefined become optional and lose `undefined`; the others
 * stay as they are. `{ port: number | undefined }` becomes `{ port?: number }`, which fits an
 * options type's `port?: number` under `exactOptionalPropertyTypes` too.
 */
export type OmitUndefined<T> = {
  [K in keyof T as undefined extends T[K] ? never : K]: T[K];
} & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/**
 * A copy of `fields` without the keys whose value is `undefined`: options passed through as
 * `{ ...omitUndefined({ port: options.port }) }` instead of `...(options.port !== undefined ? { port } : {})`.
 * A key present with `undefined` is not the same as an absent key to a spread over defaults, to `in`,
 * or to `Object.keys`. Only `undefined` is dropped: `null`, `0`, `''` and `false` are values.
 */
export function omitUndefined<T extends object>(fields: T): OmitUndefined<T> {
  const out: Record<string, unknown> = {};
  // Own enumerable members, as Object.entries gives them, without its [key, value] arrays (called per request).
  for (const key in fields) {
    if (!Object.prototype.hasOwnProperty.call(fields, key)) continue;
    const value = (fields as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out as OmitUndefined<T>;
}
